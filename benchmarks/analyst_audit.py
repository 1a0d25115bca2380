"""The analyst desk's audit, recorded: writes benchmarks/results/analyst_audit.md.

The three tables of ``batchgate audit --desk analyst`` (the census on holdout, careful
without each of its checks, each grader check switched off and who gains) over the
splits and seeds asked for. With ``--splits holdout,eval`` they are exactly the command's
tables for the same ``--seeds``; an analyst episode re-runs its evidence on real stores and
on two counterfactual copies, so eval's 108 questions (a quarter of them over raw files)
take most of an hour of one CPU, and ``--splits holdout`` leaves them out. Nothing is
timed but the run itself (its seconds are written below the tables, not into them): every
figure depends only on the code and the seeds.

    python benchmarks/analyst_audit.py [--splits holdout,eval] [--seeds 10] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from batchgate_gym.app.audit import SPLITS, audit_tables, run_audit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", default="holdout,eval", help="comma-separated: holdout, eval")
    parser.add_argument("--seeds", type=int, default=10, help="procedural seeds 0..N-1 played besides")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    args = parser.parse_args()
    splits = tuple(s for s in SPLITS[::-1] if s in args.splits.split(","))
    if not splits or set(args.splits.split(",")) - set(SPLITS) or args.seeds < 0:
        parser.error(f"--splits takes {', '.join(SPLITS)} (at least one); --seeds a count")
    started = time.perf_counter()
    audit = run_audit("analyst", args.seeds, splits=splits)
    tables = audit_tables(audit, "holdout" if "holdout" in splits else splits[0])
    seconds = time.perf_counter() - started
    command = f"python benchmarks/analyst_audit.py --splits {','.join(splits)} --seeds {args.seeds}"
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "analyst_audit.md"
    path.write_text(f"Written by `{command}` (run time {seconds:.0f} s, one process).\n\n{tables}\n")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
