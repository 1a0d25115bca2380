"""How run-model files each failure: the model's own limits are scored, transport faults are not,
and a run that cannot work stops at once, before writing anything."""

from __future__ import annotations

import json
import os
import re
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from batchgate_gym.app.cli import main
from batchgate_gym.llm.results import load_results
from batchgate_gym.llm.runner import RunStopped
from batchgate_gym.llm.server import estimate_tokens
from batchgate_gym.llm.summary import model_report_json

from .support import rows, run_model, serving


def largest_request(row: dict[str, Any]) -> int:
    """The estimated size of the rollout's last request: every message before its last answer."""
    last = max(i for i, m in enumerate(row["messages"]) if m["role"] == "assistant")
    return estimate_tokens(row["messages"][:last])


def test_rollouts_that_overflow_the_context_are_scored_and_in_the_mean(tmp_path: Path) -> None:
    free = tmp_path / "free.jsonl"
    with serving("careful") as server:
        run_model(server.base_url, free, "m", split="eval", n=8)
    sizes = sorted(largest_request(row) for row in rows(free))
    assert sizes[3] < sizes[4]
    window = sizes[3]  # four cases fit, four overflow
    out = tmp_path / "tight.jsonl"
    with serving("careful", context_window=window) as server:
        summary = run_model(server.base_url, out, "m", split="eval", n=8, rollouts=2)
    found = rows(out)
    overflowed = [row for row in found if row["ended"] == "context_overflow"]
    assert len(found) == 16 and len(overflowed) == 8  # half the rollouts
    assert summary.scored == 16 and summary.truncated == 8 and summary.infra_errors == 0
    assert all(row["error"] is None and row["score"] is not None for row in found)
    assert all(row["score"]["reward"] < 1.0 for row in overflowed)  # no report: paid as unfinished
    assert {row["ended"] for row in found} == {"finished", "context_overflow"}
    report = model_report_json(load_results([out]), "gate")["policies"]["m"]
    every = [Fraction(row["score"]["reward"]) for row in found]
    assert report["scored"] == 16 and report["infra_errors"] == 0 and report["truncated"] == 8
    assert report["mean_reward"] == round(float(sum(every) / len(every)), 4) < 1.0


def test_an_answer_cut_at_max_tokens_ends_the_rollout_as_length(tmp_path: Path) -> None:
    out = tmp_path / "short.jsonl"
    with serving("careful") as server:
        summary = run_model(server.base_url, out, "m", split="eval", n=2, max_tokens=5)
    found = rows(out)
    assert summary.scored == 2 and summary.truncated == 2
    assert all(row["ended"] == "length" and row["turns"] == 1 for row in found)
    assert all(row["messages"][-1]["role"] == "assistant" for row in found)  # kept in the transcript
    assert all(len(row["log"]) == 2 for row in found)  # the log's begin and seal: the cut answer never ran
    report = model_report_json(load_results([out]), "gate")["policies"]["m"]
    assert report["scored"] == 2 and report["truncated"] == 2


@pytest.mark.parametrize(
    ("server", "run", "cause"),
    [
        ({"api_key": "right"}, {"api_key": "wrong"}, "refused the API key (401"),
        ({"model_name": "served"}, {}, "does not know the model 'm' (404"),
    ],
    ids=["bad-key", "unknown-model"],
)
def test_a_run_that_cannot_work_stops_before_writing_a_row(
    tmp_path: Path, server: dict[str, Any], run: dict[str, Any], cause: str
) -> None:
    out = tmp_path / "doomed.jsonl"
    with serving("careful", **server) as served:
        with pytest.raises(RunStopped, match=re.escape(cause)):
            run_model(served.base_url, out, "m", split="eval", n=4, rollouts=2, concurrency=8, **run)
        assert served.stats.requests == 1  # the first request went out alone
    assert not out.exists() or out.read_text() == ""


def test_the_command_stops_with_exit_2_and_one_line(tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "doomed.jsonl"
    with serving("careful", api_key="right") as served:
        os.environ["I25_WRONG_KEY"] = "wrong"
        args = ["run-model", "--split", "eval", "-n", "3", "--model", "m", "--base-url", served.base_url]
        status = main([*args, "--api-key-env", "I25_WRONG_KEY", "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert err == [err[0]] and "refused the API key (401" in err[0] and "I25_WRONG_KEY" in err[0]
    assert not out.exists() or out.read_text() == ""


def test_an_unreachable_server_stops_the_run(tmp_path: Path) -> None:
    with pytest.raises(RunStopped, match=re.escape("cannot reach http://127.0.0.1:9/v1")):
        run_model("http://127.0.0.1:9/v1", tmp_path / "x.jsonl", "m", split="eval", n=2, max_retries=1)


def test_the_command_fails_when_nothing_was_scored(tmp_path: Path, capsys: Any) -> None:
    """Every rollout an infra error: exit 1, and the summary says so."""
    out = tmp_path / "faulty.jsonl"
    with serving("careful", faults=1.0, seed=0, stall=0.0) as served:
        os.environ["I25_KEY"] = "k"
        args = ["run-model", "--split", "eval", "-n", "2", "--model", "m", "--base-url", served.base_url]
        args += ["--api-key-env", "I25_KEY", "--out", str(out), "--quiet", "--max-retries", "0"]
        args += ["--backoff", "0", "--timeout", "5"]
        status = main(args)
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert status == 1
    assert "0 scored (0 cut short), 2 infra errors" in last
    assert last.endswith(" s; the first: RateLimitError: Error code: 429 - rate limited (injected)")
    assert all(json.loads(line)["ended"] == "infra" for line in out.read_text().splitlines())


@pytest.mark.slow  # server and a command interrupted in a child process
def test_ctrl_c_ends_with_one_line_and_keeps_the_rows_written(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "stopped.jsonl"
    with serving("careful", delay=0.05) as served:
        command = [
            sys.executable, "-m", "batchgate_gym", "run-model", "--split", "eval", "-n", "8", "-r", "2",
            "--model", "m", "--base-url", served.base_url, "--api-key-env", "I25_KEY", "--concurrency", "2",
            "--out", str(out),
        ]  # fmt: skip
        process = subprocess.Popen(
            command, env={**os.environ, "I25_KEY": "k"}, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 60
        while (not out.exists() or out.read_text().count("\n") < 2) and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    kept = rows(out)
    assert process.returncode == 1 and 2 <= len(kept) < 16
    assert err.strip().splitlines() == [
        f"batchgate run-model: interrupted; the {len(kept)} rows finished are kept in {out};"
        " run the same command again to play the rest"
    ]
    meta = json.loads(Path(f"{out}.meta.json").read_text())
    assert meta["runs"][-1]["ended"] and meta["runs"][-1]["counts"]["scored"] == len(kept)


def test_the_progress_bar_counts_each_kind_and_is_off_when_asked(monkeypatch: Any) -> None:
    from batchgate_gym.app.run_model import progress_bar

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    monkeypatch.delenv("BATCHGATE_NO_PROGRESS", raising=False)
    bar = progress_bar(quiet=False)
    bar.start(3)
    for ended, error in (("finished", None), ("context_overflow", None), ("infra", {"kind": "infra"})):
        bar.update_row({"ended": ended, "error": error})
    assert not bar._bar.disable and bar._bar.n == 3 and bar._bar.total == 3
    assert bar.counts == {"scored": 2, "cut short": 1, "infra": 1}
    bar.close()
    assert progress_bar(quiet=True)._bar.disable
