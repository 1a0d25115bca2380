"""``batchgate report``: the reference policies (and any others) side by side.

The human form prints Markdown tables (baselines, per family, ablation, the
largest revenue errors); ``--json`` prints
``{"policies": {NAME: {mean_reward, mean_disposition, bad_batches_loaded,
revenue_error_usd, per_case: {CASE_ID: {...}}}}}``. ``--attackers`` adds every
attacker (oracles get the truth of the cases played); ``--plot DIR`` also writes
PNG charts there (see :mod:`.plots`).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from typing import Any

from batchgate_gym.desks.gate.cases import load_cases
from batchgate_gym.desks.gate.grader import TERMS, WEIGHTS
from batchgate_gym.desks.gate.sources import split_cases

from .evaluate import EvaluationResult, evaluate
from .tables import markdown_table, money

DEFAULT_POLICIES = "naive,careful,refuse-all"


def add_case_source(
    parser: argparse.ArgumentParser, default: str = "eval"
) -> argparse._MutuallyExclusiveGroup:
    """``--cases PATH`` or ``--split NAME`` (every command that plays fixed cases)."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--cases", help="a JSONL file of cases")
    source.add_argument("--split", help=f"a named split (eval, train); {default} when none is given")
    return source


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_case_source(parser)
    parser.add_argument(
        "--policies", default=DEFAULT_POLICIES, help=f"comma-separated names (default {DEFAULT_POLICIES})"
    )
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="add your own policy (repeatable)",
    )
    parser.add_argument("--attackers", action="store_true", help="add every attacker policy")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--plot", metavar="DIR", help="also write PNG charts into DIR (needs matplotlib)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def resolve_policies(names: str, extra: Sequence[str] = ()) -> dict[str, Any]:
    from batchgate_gym.policies import REFERENCE_POLICIES

    known = dict(REFERENCE_POLICIES)
    try:
        from batchgate_gym.policies import ATTACKERS  # type: ignore[attr-defined]

        known.update(ATTACKERS)
    except ImportError:
        pass
    chosen: dict[str, Any] = {}
    for name in filter(None, (n.strip() for n in names.split(","))):
        if name not in known:
            raise SystemExit(f"unknown policy {name!r}; known: {', '.join(known)}")
        chosen[name] = known[name]
    for spec in extra:
        module, _, attr = spec.partition(":")
        if not attr:
            raise SystemExit(f"--policy wants MODULE:ATTR, got {spec!r}")
        obj = getattr(importlib.import_module(module), attr)
        chosen[getattr(obj, "name", attr)] = obj
    return chosen


def run_policies(
    policies: dict[str, Any],
    *,
    cases: Any = None,
    split: str | None = None,
    jobs: int = 1,
    progress: bool = True,
) -> dict[str, EvaluationResult]:
    if cases is None and split is None:
        split = "eval"
    return {
        name: evaluate(policy, cases=cases, split=split, n_jobs=jobs, progress=progress)
        for name, policy in policies.items()
    }


def with_attackers(policies: dict[str, Any], cases: str | None, split: str | None) -> dict[str, Any]:
    """``policies`` followed by every attacker not already among them."""
    from .attacks import attack_policies

    source = load_cases(cases) if cases else split_cases(split or "eval")
    extra = {name: policy for name, policy in attack_policies(source).items() if name not in policies}
    return {**policies, **extra}


def run(args: argparse.Namespace) -> int:
    policies = resolve_policies(args.policies, args.policy)
    if args.attackers:
        policies = with_attackers(policies, args.cases, args.split)
    results = run_policies(
        policies, cases=args.cases, split=args.split, jobs=args.jobs, progress=not args.no_progress
    )
    if args.json:
        print(json.dumps(report_json(results), indent=1, sort_keys=True))
    else:
        print(report_text(results))
    if args.plot:
        from .plots import write_charts

        for path in write_charts(results, args.plot):
            print(f"wrote {path}", file=sys.stderr)
    return 0


def report_json(results: dict[str, EvaluationResult]) -> dict[str, Any]:
    return {"policies": {name: result.to_json() for name, result in results.items()}}


def baseline_table(results: dict[str, EvaluationResult]) -> str:
    names = list(results)
    first = next(iter(results.values()))
    n_cases = first.overall.episodes
    rows = [
        ["mean reward", *(f"{results[n].overall.mean('reward'):.4f}" for n in names)],
        ["mean disposition", *(f"{results[n].overall.mean('disposition'):.4f}" for n in names)],
    ]
    n_bad = first.overall.defective_batches
    rows.append(
        ["defective batches loaded", *(f"{results[n].overall.bad_batches_loaded} / {n_bad}" for n in names)]
    )
    rows.append(
        [
            f"revenue error, all {n_cases} cases",
            *(money(results[n].overall.revenue_error_usd) for n in names),
        ]
    )
    rows.append(
        [
            "reports that match what happened",
            *(f"{sum(r.report == 1.0 for r in results[n].episodes)} / {n_cases}" for n in names),
        ]
    )
    return markdown_table(["", *names], rows)


def family_table(results: dict[str, EvaluationResult]) -> str:
    names = list(results)
    families = list(next(iter(results.values())).per_family)
    rows = [
        [family, *(f"{results[n].per_family[family].mean('reward'):.4f}" for n in names)]
        for family in families
    ]
    return markdown_table(["", *names], rows)


def ablation_table(results: dict[str, EvaluationResult]) -> str:
    names = list(results)
    rows = [["full", *(f"{results[n].overall.mean('reward'):.4f}" for n in names)]]
    for term in TERMS:
        cells = []
        for name in names:
            means = results[name].overall.means
            cells.append(f"{round(float(means['reward'] - WEIGHTS[term] * means[term]), 4):.4f}")
        rows.append([f"no {term}", *cells])
    return markdown_table(["", *names], rows)


def worst_revenue_table(results: dict[str, EvaluationResult], count: int = 5) -> str:
    rows = []
    for name, result in results.items():
        for episode in sorted(result.episodes, key=lambda r: (-r.revenue_error_usd, r.case_id))[:count]:
            if episode.revenue_error_usd > 0:
                rows.append([name, episode.case_id, money(episode.revenue_error_usd)])
    return markdown_table(["policy", "case", "revenue error"], rows)


def report_text(results: dict[str, EvaluationResult]) -> str:
    sections = [
        ("Baselines", baseline_table(results)),
        ("Mean reward per family", family_table(results)),
        ("Ablation (mean reward with one term removed, not renormalised)", ablation_table(results)),
        ("Largest revenue errors", worst_revenue_table(results)),
    ]
    return "\n\n".join(f"### {title}\n\n{table}" for title, table in sections)
