"""AnalystDesk at size: every attacker on N procedural seeds, and the reference agents on the train split.

Writes ``benchmarks/results/analyst_seeds.md`` and ``.json``: the attack table
(careful, the baselines, every attacker) and its ablation over the procedural cases that
``reset(seed=s)`` draws for s in 0..N-1 (the same table ``batchgate attacks --desk
analyst --seeds N`` prints), careful's mean reward per level and per store on those
seeds, and the baseline table of ``batchgate report --desk analyst --split train``.

    python benchmarks/analyst_seeds.py [--seeds 200] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from batchgate_gym.app.attacks import attack_table, procedural_cases, run_attacks
from batchgate_gym.app.report import baseline_table
from batchgate_gym.evaluation import EvaluationResult, report_json, run_policies
from batchgate_gym.tables import markdown_table


def by_group(result: EvaluationResult, field: str) -> dict[str, float]:
    groups: dict[str, list[float]] = defaultdict(list)
    for episode in result.episodes:
        groups[str(episode.case_fields[field])].append(episode.reward)
    return {name: round(sum(v) / len(v), 4) for name, v in sorted(groups.items())}


def group_table(results: dict[str, EvaluationResult], field: str) -> str:
    names = list(results)
    groups = by_group(results[names[0]], field)
    rows = [[g, *(f"{by_group(results[n], field)[g]:.4f}" for n in names)] for g in groups]
    return markdown_table([field, *names], rows)


def ablation(results: dict[str, EvaluationResult], cases: list[Any]) -> str:
    """Each policy's mean reward with one term removed (the rest renormalised to sum 1), and
    with the abstention rule removed; per row, careful's smallest lead and what it reorders."""
    from batchgate_gym.desks.analyst.ablation import ablated_means, answerability, caught_up, describe

    variants = ablated_means({n: r.episodes for n, r in results.items()}, answerability(cases))
    rows = []
    for label, means in variants.items():
        others = {n: m for n, m in means.items() if n != "careful"}
        closest = max(others, key=lambda n: others[n])
        lead = means["careful"] - others[closest]
        reordered = "" if label == "full" else describe(caught_up(variants["full"], means))
        rows.append(
            [label, *(f"{float(m):.4f}" for m in means.values()), f"{float(lead):.4f} ({closest})", reordered]
        )
    return markdown_table(
        ["", *results, "careful's smallest lead", "ties or reverses (worse ≥ better)"], rows
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    cases = procedural_cases(range(args.seeds), "analyst")
    attacks = run_attacks(cases, desk="analyst")
    train = run_policies(_reference_policies(), split="train", desk="analyst", progress=False)
    seconds = time.perf_counter() - started
    shown = {name: attacks[name] for name in ("careful", "always-decline", "answer-everything")}
    text = "\n\n".join(
        [
            f"### Attackers on {args.seeds} procedural seeds (`batchgate attacks --desk analyst --seeds {args.seeds}`)",
            attack_table(attacks, "analyst"),
            f"### Ablation over every policy, {args.seeds} seeds (one term removed, the rest renormalised)",
            ablation(attacks, cases),
            f"### Mean reward per level, {args.seeds} seeds",
            group_table(shown, "level"),
            f"### Mean reward per store, {args.seeds} seeds",
            group_table(shown, "store"),
            "### The train split (`batchgate report --desk analyst --split train`)",
            baseline_table(train, "analyst"),
            f"Run time {seconds:,.0f} s on one process.",
        ]
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "analyst_seeds.md").write_text(text + "\n", encoding="utf-8")
    payload: dict[str, Any] = {
        "seeds": args.seeds,
        "attacks": report_json(attacks, "analyst"),
        "train": report_json(train, "analyst"),
    }
    (out / "analyst_seeds.json").write_text(
        json.dumps(payload, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    print(text)
    return 0


def _reference_policies() -> dict[str, Any]:
    from batchgate_gym.policies.analyst.reference import REFERENCE_POLICIES

    return {name: cls() for name, cls in REFERENCE_POLICIES.items()}


if __name__ == "__main__":
    raise SystemExit(main())
