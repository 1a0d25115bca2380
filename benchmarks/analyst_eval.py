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
from fractions import Fraction
from pathlib import Path

from batchgate_gym.app.attacks import attack_table, run_attacks
from batchgate_gym.app.evaluate import EvaluationResult
from batchgate_gym.app.report import report_text
from batchgate_gym.app.shared import report_json
from batchgate_gym.app.tables import markdown_table

sys.path.insert(0, str(Path(__file__).parent))
from analyst_seeds import group_table


def ablation(results: dict[str, EvaluationResult]) -> str:
    """Each policy's mean reward with one term removed and the rest renormalised to sum 1,
    and, per row, careful's smallest lead over any other policy (and whose)."""
    from batchgate_gym.desks.analyst.grader import WEIGHTS

    rows = []
    for dropped in (None, *WEIGHTS):
        kept = {t: w for t, w in WEIGHTS.items() if t != dropped}
        total = sum(kept.values(), Fraction(0))
        means = {
            name: sum(
                (
                    sum(
                        (w * Fraction(e.terms[t]).limit_denominator(10**6) for t, w in kept.items()),
                        Fraction(0),
                    )
                )
                for e in result.episodes
            )
            / (total * len(result.episodes))
            for name, result in results.items()
        }
        others = {n: m for n, m in means.items() if n != "careful"}
        closest = max(others, key=lambda n: others[n])
        lead = means["careful"] - others[closest]
        label = "full" if dropped is None else f"no {dropped}"
        rows.append([label, *(f"{float(m):.4f}" for m in means.values()), f"{float(lead):.4f} ({closest})"])
    return markdown_table(["", *results, "careful's smallest lead"], rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    from batchgate_gym.app.desks import get

    cases = get("analyst").fixed_cases(split="eval")
    results = run_attacks(cases, desk="analyst")
    defaults = {name: results[name] for name in get("analyst").default_policies}
    text = "\n\n".join(
        [
            "## `batchgate report --desk analyst`",
            report_text(defaults, "analyst"),
            "## `batchgate attacks --desk analyst`",
            attack_table(results, "analyst"),
            "## Ablation over every policy (one term removed, the rest renormalised)",
            ablation(results),
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
