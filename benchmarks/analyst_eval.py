"""AnalystDesk on its eval split: the report, the attack table, and every policy per store and per level.

Writes ``benchmarks/results/analyst_eval.md`` and ``.json``: the tables ``batchgate
report --desk analyst`` and ``batchgate attacks --desk analyst`` print (the same
functions), then the mean reward of each policy per store (the same 15 questions
asked in each single store, 4 in ``sqlite+lake``) and per level.

    python benchmarks/analyst_eval.py [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from batchgate_gym.app.attacks import attack_table, run_attacks
from batchgate_gym.app.report import report_text
from batchgate_gym.evaluation import report_json

sys.path.insert(0, str(Path(__file__).parent))
from analyst_seeds import ablation, group_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    from batchgate_gym.desks.registry import get

    cases = get("analyst").fixed_cases(split="eval")
    results = run_attacks(cases, desk="analyst")
    defaults = {name: results[name] for name in get("analyst").policies.defaults}
    text = "\n\n".join(
        [
            "## `batchgate report --desk analyst`",
            report_text(defaults, "analyst"),
            "## `batchgate attacks --desk analyst`",
            attack_table(results, "analyst"),
            "## Ablation over every policy (one term removed, the rest renormalised)",
            ablation(results, cases),
            "## Mean reward per store (eval)",
            group_table(results, "store"),
            "## Mean reward per level (eval)",
            group_table(results, "level"),
        ]
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "analyst_eval.md").write_text(text + "\n", encoding="utf-8")
    payload = json.dumps(report_json(results, "analyst"), indent=1, sort_keys=True)
    (out / "analyst_eval.json").write_text(payload + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
