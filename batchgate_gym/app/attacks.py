"""``batchgate attacks``: every attacker against careful, on a case file or a split.

The table gives, per policy, the mean reward, the mean of each of the desk's
score terms, the desk's own metrics (the legend under the table says what each
column holds) and how far below careful it lands.
Oracles are built with the truth labels of the very cases being played (this
command knows them; the oracles still see only observations). ``--seeds N``
plays the procedural cases that ``reset(seed=s)`` draws for s in 0..N-1.
``--json`` prints the same shape as ``batchgate report --json``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import DEFAULT_DESK
from batchgate_gym.evaluation import Aggregate, EvaluationResult, report_json, run_policies
from batchgate_gym.tables import legend, markdown_table

from .shared import (
    add_backend_options,
    add_case_source,
    add_quiet_option,
    check_backend_options,
    desk_of,
    dumps,
    env_kwargs,
    int_in,
    nodes_line,
    split_options,
    unsupported,
)

TARGET = "careful"  # the gate's target
# An episode the machine stopped has no score: the table counts them in a column of its
# own (only when there are any) and compares each policy with the target over the cases both scored.
INFRA_COLUMN = "infra errors"
INFRA_MEANING = (
    "episodes the machine stopped (a safety net fired): they have no score and are left out of "
    "this policy's means and totals, which are over the cases it scored"
)
BOTH_SCORED = ", over the cases both scored"
OVER_SCORED = "cases it scored of the "


TAKES_DESK_OPTIONS = True  # plays the desk's environment: --rules, --recovery, ... apply


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = add_case_source(parser)
    source.add_argument("--seeds", type=int_in(1), metavar="N", help="procedural cases of seeds 0..N-1")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--jobs", type=int_in(1), default=1, help="worker processes (Ray tasks with --backend ray)"
    )
    add_backend_options(parser)
    add_quiet_option(parser)


def attack_policies(cases: list[Any], desk: str = DEFAULT_DESK) -> dict[str, Any]:
    """The desk's target first, then every attacker, oracles given the truth of ``cases``."""
    spec = registry.get(desk)
    if spec.policies.lineup is None:
        raise unsupported("attacks", spec, "attackers")
    return spec.policies.line_up(cases)


def _cases(args: argparse.Namespace, desk: registry.DeskSpec) -> tuple[list[Any], dict[str, Any]]:
    """The cases played and the environment options to play them with."""
    if args.seeds is not None:
        drawing, playing = split_options(env_kwargs(args, desk), desk)
        return desk.procedural_cases(range(args.seeds), **drawing), playing
    cases = desk.fixed_cases(args.cases, args.split)
    return cases, env_kwargs(args, desk, cases)


def procedural_cases(seeds: Iterable[int], desk: str = DEFAULT_DESK) -> list[Any]:
    """The cases ``reset(seed=s)`` draws by default, read back from the world."""
    return registry.get(desk).procedural_cases(seeds)


def run_attacks(
    cases: list[Any],
    *,
    jobs: int = 1,
    progress: bool = False,
    desk: str = DEFAULT_DESK,
    env_kwargs: dict[str, Any] | None = None,
    backend: str = "local",
) -> dict[str, EvaluationResult]:
    policies = attack_policies(cases, desk)
    return run_policies(
        policies, cases=cases, jobs=jobs, progress=progress, desk=desk, env_kwargs=env_kwargs, backend=backend
    )


def run(args: argparse.Namespace) -> int:
    desk = desk_of(args)
    if desk.policies.lineup is None:
        raise unsupported("attacks", desk, "attackers")
    cases, options = _cases(args, desk)
    check_backend_options(args.backend, args.ray_address, "attacks")
    results = run_attacks(
        cases,
        jobs=args.jobs,
        progress=not args.quiet,
        desk=desk.name,
        env_kwargs=options,
        backend=args.backend,
    )
    if args.backend == "ray":
        print(nodes_line("attacks"), file=sys.stderr)
    print(dumps(report_json(results, desk.name)) if args.json else attack_table(results, desk.name))
    return 0


def attack_table(results: dict[str, EvaluationResult], desk: registry.DeskSpec | str = DEFAULT_DESK) -> str:
    """Per policy: kind, reward, every term, every shown metric, and the gap below the target."""
    desk = registry.get(desk) if isinstance(desk, str) else desk
    target_name = desk.policies.target or next(iter(results))
    target = results[target_name].overall
    stopped = any(result.overall.infra_episodes for result in results.values())
    rows = []
    for name, result in results.items():
        overall = result.overall
        gap = "" if name == target_name else f"{float(gap_below(results[target_name], result)):.4f}"
        cells = []
        for metric in desk.scoring.shown_metrics:
            value = overall.total(metric.name)
            if metric.out_of is not None:
                cells.append(f"{value} / {target.total(metric.out_of)}")
            else:
                cells.append(metric.text(value))
        rows.append(
            [
                name,
                desk.policies.kind(name),
                f"{overall.mean('reward'):.4f}",
                *(f"{overall.mean(term):.4f}" for term in desk.scoring.terms),
                *cells,
                *([str(overall.infra_episodes)] if stopped else []),
                gap,
            ]
        )
    columns = [metric.column or metric.name for metric in desk.scoring.shown_metrics]
    stopped_column = [INFRA_COLUMN] if stopped else []
    header = [
        "policy",
        "kind",
        "reward",
        *desk.scoring.terms,
        *columns,
        *stopped_column,
        f"below {target_name}",
    ]
    return markdown_table(header, rows) + "\n\n" + attack_legend(results, desk, target_name)


def gap_below(target: EvaluationResult, other: EvaluationResult) -> Fraction:
    """The target's mean reward minus ``other``'s, over the cases both scored.

    An episode the machine stopped has no score and is left out of its policy's mean;
    left out on one side only, the two means would be over different cases, and a
    policy stopped on its worst cases would look closer to the target than it is.
    """
    both = _scored(target) & _scored(other)
    means = [
        Aggregate.of([r for r in result.episodes if r.index in both]).means["reward"]
        for result in (target, other)
    ]
    return means[0] - means[1]


def _scored(result: EvaluationResult) -> set[int]:
    return {r.index for r in result.episodes if not r.infra_error}


def attack_legend(results: dict[str, EvaluationResult], desk: registry.DeskSpec, target: str) -> str:
    """One line per column of the attack table."""
    n_cases = len(next(iter(results.values())).episodes)
    stopped = any(result.overall.infra_episodes for result in results.values())
    kinds = dict.fromkeys(desk.policies.kind(name) for name in results)
    metric_lines = []
    for metric in desk.scoring.shown_metrics:
        row = metric.row or metric.name
        meaning = row.format(cases=n_cases) if "{cases}" in row else f"{row}, total over the cases"
        if metric.out_of is not None:
            meaning += f" / the {metric.out_of.replace('_', ' ')} in them"
        metric_lines.append((metric.column or metric.name, meaning))
    return legend(
        [
            ("kind", "; ".join(f"{kind}: {registry.KIND_MEANINGS.get(kind, kind)}" for kind in kinds)),
            (
                "reward",
                f"mean reward over the {OVER_SCORED if stopped else ''}{n_cases} cases, {desk.scoring.reward_span}",
            ),
            *((term, f"mean, {meaning}") for term, meaning in desk.scoring.term_legend()),
            *metric_lines,
            *([(INFRA_COLUMN, INFRA_MEANING)] if stopped else []),
            (
                f"below {target}",
                f"{target}'s mean reward minus this policy's{BOTH_SCORED if stopped else ''}",
            ),
        ]
    )
