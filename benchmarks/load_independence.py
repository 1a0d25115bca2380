"""careful on every desk's eval split and the TPC-H split, idle and then on a stressed machine.

A preempted container on a shared host is paused and resumed without warning, and a
shared one runs beside busy neighbours. This plays careful in a child process once
alone and once while the process is stopped for two seconds every two seconds
(SIGSTOP, then SIGCONT) with one spinning process per core, and compares every case's
reward, terms and metrics. Writes ``benchmarks/results/load_independence.{json,md}``:
per split the cases played, how many differ, how many ended as infrastructure errors,
and the pauses the stressed run took. The quick, decisive form of this check (a query
stopped in its middle) is ``tests/test_load_independence.py``.

    python benchmarks/load_independence.py [--out benchmarks/results]

Exit status 1 if any case differs or any episode ends as an infrastructure error.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from batchgate_gym.tables import markdown_table

SPLITS = (("gate", "eval"), ("refund", "eval"), ("analyst", "eval"), ("analyst", "tpch"))
PLAY = f"""
import json
from batchgate_gym.desks import registry
from batchgate_gym.evaluation import evaluate

out = {{}}
for desk, split in {SPLITS!r}:
    careful = registry.get(desk).policies.known()["careful"]
    result = evaluate(careful, split=split, desk=desk, progress=False)
    out[f"{{desk}} {{split}}"] = {{
        r.case_id: {{"reward": r.reward, **r.terms, **r.metrics, "infra_error": getattr(r, "infra_error", "")}}
        for r in result.episodes
    }}
print(json.dumps(out, sort_keys=True))
"""
PAUSE_SECONDS = 2.0
RUN_SECONDS = 2.0  # between two pauses
SPIN = "while True: pass"


def play(stressed: bool) -> tuple[dict[str, dict[str, Any]], int]:
    """careful's per-case results on every split, and the pauses taken while it played."""
    env = {**os.environ, "BATCHGATE_NO_PROGRESS": "1"}
    child = subprocess.Popen(
        [sys.executable, "-c", PLAY], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    spinners: list[subprocess.Popen[bytes]] = []
    pauses = 0
    try:
        if stressed:
            spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(os.cpu_count() or 2)]
            while child.poll() is None:
                time.sleep(RUN_SECONDS)
                try:
                    child.send_signal(signal.SIGSTOP)
                    time.sleep(PAUSE_SECONDS)
                    child.send_signal(signal.SIGCONT)
                except ProcessLookupError:
                    break
                pauses += 1
        out, err = child.communicate(timeout=1800)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
        if child.poll() is None:
            child.kill()
    if child.returncode != 0:
        raise SystemExit(f"the player failed (exit {child.returncode}):\n{err[-3000:]}")
    played: dict[str, dict[str, Any]] = json.loads(out)
    return played, pauses


def compare(
    idle: dict[str, dict[str, Any]], stressed: dict[str, dict[str, Any]], pauses: int
) -> dict[str, Any]:
    rows = []
    for name, cases in idle.items():
        other = stressed.get(name, {})
        rows.append(
            {
                "split": name,
                "cases": len(cases),
                "differ": sum(other.get(case_id) != result for case_id, result in cases.items()),
                "infra_errors": sum(bool(r["infra_error"]) for r in (*cases.values(), *other.values())),
            }
        )
    return {"pauses": pauses, "load_average": [round(x, 2) for x in os.getloadavg()], "rows": rows}


def table(figures: dict[str, Any]) -> str:
    header = ["split", "cases", "differ under stress", "infrastructure errors"]
    body = [[r["split"], str(r["cases"]), str(r["differ"]), str(r["infra_errors"])] for r in figures["rows"]]
    return markdown_table(header, body) + f"\n\nThe stressed run was paused {figures['pauses']} times.\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    options = parser.parse_args(argv)
    idle, _ = play(stressed=False)
    stressed, pauses = play(stressed=True)
    figures = compare(idle, stressed, pauses)
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "load_independence.json").write_text(
        json.dumps(figures, indent=2) + "\n", encoding="utf-8"
    )
    (options.out / "load_independence.md").write_text(table(figures), encoding="utf-8")
    print(table(figures), end="")
    failed = any(r["differ"] or r["infra_errors"] for r in figures["rows"]) or pauses < 5
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
