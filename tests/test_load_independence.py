"""No reward depends on the machine: a query preempted in its middle answers as on an idle one.

A preempted container on a shared host is paused and resumed without warning. The test
plays careful in a child process, once alone and once with the process stopped for two
seconds in the middle of every query of careful's that runs past 10 ms, on the TPC-H
question with the heaviest query, one case per store, and holds every case's reward,
terms and metrics to be the same. With the two-second wall-clock query budget this
test replaced, careful lost its 1.0 on the sqlite (0.0) and lake (0.75) cases.

The budgets that decide what a query did are counted (VM steps, rows, the query
thread's CPU time), never read from the wall clock. The broad form, every eval split
played paused and contended, is ``benchmarks/load_independence.py``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # episodes played in child processes, paused and contended

MIDQUERY = """
import json, os, signal, sys, threading
from batchgate_gym.desks import registry
from batchgate_gym.evaluation import evaluate
from batchgate_gym.desks.analyst.engines.duck_store import DuckStore
from batchgate_gym.kernel.sqlguard import SqlGuard

def preempted(run):
    # The process is stopped (SIGSTOP, by itself; the test resumes it) once the query has
    # run for a few milliseconds: a preemption that lands in the middle of the query.
    def wrapper(self, query):
        done = threading.Event()
        def stop():
            if not done.wait(0.01):
                os.kill(os.getpid(), signal.SIGSTOP)
        watcher = threading.Thread(target=stop, daemon=True)
        watcher.start()
        try:
            return run(self, query)
        finally:
            done.set()
            watcher.join()
    return wrapper

if sys.argv[1] == "preempted":
    SqlGuard.run = preempted(SqlGuard.run)
    DuckStore.run = preempted(DuckStore.run)
careful = registry.get("analyst").policies.known()["careful"]
cases = [c for c in registry.get("analyst").fixed_cases(None, "tpch") if "local-supplier-volume" in c.case_id]
result = evaluate(careful, cases=cases, desk="analyst", progress=False)
print(json.dumps({r.case_id: {"reward": r.reward, **r.terms, **r.metrics} for r in result.episodes}))
"""
PAUSE_SECONDS = 2.0


def _stopped(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] == "T"
    except OSError:
        return False


def _play_preempted(mode: str) -> tuple[dict[str, Any], int]:
    """careful on the TPC-H question whose query is the heaviest, one case per store; with
    ``mode="preempted"`` the process is stopped in the middle of every query that runs
    past 10 ms and resumed two seconds later."""
    child = subprocess.Popen(
        [sys.executable, "-c", MIDQUERY, mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    pauses = 0
    try:
        while child.poll() is None:
            if _stopped(child.pid):
                time.sleep(PAUSE_SECONDS)
                child.send_signal(signal.SIGCONT)
                pauses += 1
            time.sleep(0.01)
        out, err = child.communicate(timeout=600)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err[-3000:]
    return json.loads(out), pauses


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads a process's state from /proc")
def test_a_query_preempted_in_its_middle_answers_as_on_an_idle_machine() -> None:
    """Every query of careful's over 10 ms is stopped halfway for 2 s: the results do not move.

    With a wall-clock query budget of 2 s each such query was interrupted and careful lost
    its 1.0 on the four stores' cases of this question.
    """
    idle, _ = _play_preempted("idle")
    preempted, pauses = _play_preempted("preempted")
    assert len(idle) == 4 and all(case["reward"] == 1.0 for case in idle.values()), idle
    assert pauses >= 4
    assert preempted == idle
