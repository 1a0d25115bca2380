"""The commands as a user runs them: ``batchgate serve`` in its own process, run-model and report against it."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from batchgate_gym.app.cli import main

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def served() -> Any:
    port = free_port()
    command = [sys.executable, "-m", "batchgate_gym", "serve", "--desk", "gate", "--policy", "careful"]
    command += [
        "--faults",
        "0.2",
        "--model-errors",
        "0.1",
        "--seed",
        "4",
        "--stall",
        "1",
        "--retry-after",
        "0",
    ]
    process = subprocess.Popen([*command, "--port", str(port)], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"batchgate serve did not start: {process.stderr.read()}") from None
            time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)
        assert "serving gate/careful at http://127.0.0.1:" in process.stderr.read()


@pytest.mark.slow  # server and client as commands in child processes
def test_serve_run_model_and_report_as_commands(
    served: str, tmp_path: Path, monkeypatch: Any, capsys: Any
) -> None:
    monkeypatch.setenv("LOCAL_KEY", "anything")
    out = tmp_path / "careful.jsonl"
    args = ["run-model", "--desk", "gate", "--split", "eval", "--model", "careful", "--base-url", served]
    args += ["--api-key-env", "LOCAL_KEY", "-n", "4", "-r", "2", "--concurrency", "4", "--out", str(out)]
    args += ["--timeout", "0.5", "--max-retries", "3", "--backoff", "0.01"]
    assert main(args) == 0
    assert "0 already done of 8" in capsys.readouterr().err
    lines = out.read_text().splitlines()
    assert len(lines) == 8
    report = json.loads(_out(capsys, ["report", "--desk", "gate", "--results", str(out), "--json"]))
    careful = report["policies"]["careful"]
    assert careful["scored"] + careful["infra_errors"] == 8 and careful["scored"] > 0
    assert careful["mean_reward"] == 1.0
    assert main(args) == 0  # a rerun has nothing left to do
    assert (
        "0 scored (0 cut short), 0 infra errors, 8 already done of 8; 0 requests" in capsys.readouterr().err
    )
    assert out.read_text().splitlines() == lines


def test_run_model_wants_its_key_variable_set(monkeypatch: Any, tmp_path: Path) -> None:
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    args = [
        "run-model",
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--api-key-env",
        "NO_SUCH_KEY",
    ]
    with pytest.raises(SystemExit, match="NO_SUCH_KEY"):
        main([*args, "--out", str(tmp_path / "x.jsonl")])


def _out(capsys: Any, args: list[str]) -> str:
    assert main(args) == 0
    return capsys.readouterr().out
