"""One digest of every per-case row the project's reports print: compare two commits.

A change meant to leave behaviour alone (a move, a rename, a faster path) must leave
every episode's reward, terms and metrics as they were. This plays the report's and
the attack table's policies on every desk's fixed splits and a band of procedural
seeds (the refund desk with its rule sets, recovery and queues too), through the same
commands a user runs (``batchgate report|attacks --json``), and digests the per-case
rows of each run. Nothing is timed.

    python benchmarks/fingerprint.py [--out FILE] [--check FILE]

``--check FILE`` compares with a recorded fingerprint and names every run that
differs (exit 1).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).resolve().parent / "results" / "fingerprint.json"

# (name, command arguments after `batchgate`): each run's stdout is --json output.
RUNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gate eval report", ("report", "--desk", "gate", "--split", "eval")),
    ("gate eval attacks", ("attacks", "--desk", "gate", "--split", "eval")),
    ("gate train report", ("report", "--desk", "gate", "--split", "train")),
    ("gate seeds attacks", ("attacks", "--desk", "gate", "--seeds", "40")),
    ("refund eval report", ("report", "--desk", "refund", "--split", "eval")),
    ("refund eval attacks", ("attacks", "--desk", "refund", "--split", "eval")),
    ("refund eval attacks recovery", ("attacks", "--desk", "refund", "--split", "eval", "--recovery", "on")),
    ("refund eval report original", ("report", "--desk", "refund", "--split", "eval", "--rules", "original")),
    ("refund train report", ("report", "--desk", "refund", "--split", "train")),
    ("refund seeds attacks", ("attacks", "--desk", "refund", "--seeds", "40")),
    (
        "refund queue attacks",
        ("attacks", "--desk", "refund", "--seeds", "10", "--tickets", "4", "--recovery", "on"),
    ),
    ("analyst eval report", ("report", "--desk", "analyst", "--split", "eval")),
    ("analyst eval attacks", ("attacks", "--desk", "analyst", "--split", "eval")),
    ("analyst tpch attacks", ("attacks", "--desk", "analyst", "--split", "tpch")),
    ("analyst seeds attacks", ("attacks", "--desk", "analyst", "--seeds", "20")),
)


def run(arguments: tuple[str, ...]) -> dict[str, Any]:
    program = "from batchgate_gym.app.cli import main; raise SystemExit(main())"
    command = [sys.executable, "-c", program, *arguments, "--json", "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(arguments)} failed (exit {done.returncode}):\n{done.stderr}")
    figures = json.loads(done.stdout)
    episodes = sum(len(policy.get("per_case", {})) for policy in figures["policies"].values())
    canonical = json.dumps(figures, sort_keys=True, separators=(",", ":"))
    return {"episodes": episodes, "sha256": hashlib.sha256(canonical.encode()).hexdigest()}


def fingerprint() -> dict[str, Any]:
    runs = {name: run(arguments) for name, arguments in RUNS}
    whole = hashlib.sha256(json.dumps(runs, sort_keys=True).encode()).hexdigest()
    return {"episodes": sum(r["episodes"] for r in runs.values()), "sha256": whole, "runs": runs}


def differences(recorded: dict[str, Any], measured: dict[str, Any]) -> list[str]:
    names = sorted(set(recorded["runs"]) | set(measured["runs"]))
    return [name for name in names if recorded["runs"].get(name) != measured["runs"].get(name)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the fingerprint here (JSON)")
    parser.add_argument(
        "--check", type=Path, help="compare with a recorded fingerprint; exit 1 on any difference"
    )
    options = parser.parse_args(argv)
    measured = fingerprint()
    print(f"{measured['episodes']} episodes, sha256 {measured['sha256']}")
    if options.out:
        options.out.write_text(json.dumps(measured, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if options.check:
        differing = differences(json.loads(options.check.read_text(encoding="utf-8")), measured)
        for name in differing:
            print(f"differs: {name}")
        return 1 if differing else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
