"""Starting ``batchgate serve-env`` processes on 127.0.0.1 for the tests, and what their
episodes must equal: the rows ``batchgate report --json`` gives for the same cases."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from batchgate_gym.app import desks
from batchgate_gym.app.shared import report_json, run_policies

STARTUP_SECONDS = 240.0  # importing the protocol stacks is slow on a loaded machine
# The policies each desk is compared on: careful and the naive one (the analyst desk's
# naive counterpart answers every question, supported or not).
POLICIES = {
    "gate": ("careful", "naive"),
    "refund": ("careful", "naive"),
    "analyst": ("careful", "answer-everything"),
}


@dataclass
class Served:
    """A running server: its port and what it wrote to standard error."""

    process: subprocess.Popen[str]
    port: int = 0
    stderr: list[str] = field(default_factory=list)

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def sessions(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url("/sessions"), timeout=10) as response:
            return dict(json.loads(response.read()))

    def wait_for_live(self, live: int, within: float) -> dict[str, Any]:
        """Poll ``/sessions`` until ``live`` sessions remain (or give up after ``within`` seconds)."""
        deadline = time.monotonic() + within
        while True:
            counts = self.sessions()
            if counts["live"] == live or time.monotonic() > deadline:
                return counts
            time.sleep(0.1)


def _read_stderr(served: Served, ready: threading.Event) -> None:
    assert served.process.stderr is not None
    for line in served.process.stderr:
        served.stderr.append(line)
        if " at " in line and "127.0.0.1:" in line and not ready.is_set():
            served.port = int(line.split("127.0.0.1:")[1].split("/")[0])
            ready.set()
    ready.set()  # the process ended


@contextlib.contextmanager
def serving(*commands: Sequence[str]) -> Iterator[list[Served]]:
    """Start every ``batchgate serve-env ARGS --port 0`` at once; yield them once all listen."""
    started: list[tuple[Served, threading.Event]] = []
    try:
        for args in commands:
            process = subprocess.Popen(
                [sys.executable, "-m", "batchgate_gym", "serve-env", *args, "--port", "0"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            served, ready = Served(process), threading.Event()
            threading.Thread(target=_read_stderr, args=(served, ready), daemon=True).start()
            started.append((served, ready))
        for served, ready in started:
            ready.wait(STARTUP_SECONDS)
            assert served.port, f"serve-env did not start: {''.join(served.stderr)[-2000:]}"
        yield [served for served, _ in started]
    finally:
        for served, _ in started:
            served.process.terminate()
        for served, _ in started:
            try:
                served.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                served.process.kill()
                served.process.wait()


def eval_cases(desk: str, indices: Sequence[int] | None = None) -> list[Any]:
    """The desk's eval cases at ``indices`` (every one if None)."""
    cases = desks.get(desk).fixed_cases(split="eval")
    return cases if indices is None else [cases[i] for i in indices]


def report_rows(desk: str, policy: str, indices: Sequence[int] | None = None) -> dict[str, dict[str, Any]]:
    """``batchgate report --json``'s per-case rows of ``policy`` on the eval cases at ``indices``,
    played as the report plays a case file of them: the n-th with seed n."""
    spec = desks.get(desk)
    cases = eval_cases(desk, indices)
    results = run_policies({policy: spec.reference_policies[policy]}, cases=cases, progress=False, desk=desk)
    return dict(report_json(results, desk)["policies"][policy]["per_case"])


def same_as_report(desk: str, row: dict[str, Any], played: dict[str, Any]) -> bool:
    """The served episode's reward and every score term equal the report's row."""
    score = played["score"]
    return played["reward"] == row["reward"] and all(score[t] == row[t] for t in desks.get(desk).terms)


def replayed_score(desk: str, case_id: str, log: Any, head: str) -> dict[str, Any]:
    """The score the desk's replay recomputes from the exported log under its head."""
    from batchgate_gym.llm.results import desk_module

    case = next(c for c in desks.get(desk).fixed_cases(split="eval") if c.case_id == case_id)
    return dict(desk_module(desk, "replay").replay(case, log, head=head).as_dict())


def check_against_report(
    desk: str, rows: dict[str, dict[str, Any]], played: list[dict[str, Any]]
) -> set[float]:
    """Each served episode (in the rows' order) scored as the report's row, its log replaying
    under its head to the same score; the rewards seen."""
    assert [episode["case_id"] for episode in played] == list(rows)
    for episode in played:
        assert same_as_report(desk, rows[episode["case_id"]], episode), episode["case_id"]
        replayed = replayed_score(desk, episode["case_id"], episode["log"], episode["log_head"])
        assert replayed == episode["score"], episode["case_id"]
    return {episode["reward"] for episode in played}
