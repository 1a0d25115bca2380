"""``batchgate attacks``: every attacker against careful, on a case file or a split.

The table gives, per policy, the mean reward and its four terms, the defective
batches it loaded, the revenue error it left and how far below careful it lands.
Oracles are built with the truth labels of the very cases being played (this
command knows them; the oracles still see only observations). ``--seeds N``
plays the procedural cases that ``reset(seed=s)`` draws for s in 0..N-1.
``--json`` prints the same shape as ``batchgate report --json``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from typing import Any

from batchgate_gym.desks.gate.grader import TERMS

from .evaluate import EvaluationResult
from .report import add_case_source, markdown_table, money, report_json, run_policies

TARGET = "careful"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = add_case_source(parser)
    source.add_argument("--seeds", type=int, metavar="N", help="procedural cases of seeds 0..N-1")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def attack_policies(cases: list[Any]) -> dict[str, Any]:
    """careful first, then every attacker, oracles given the truth of ``cases``."""
    from batchgate_gym.policies import CarefulPolicy
    from batchgate_gym.policies.attackers import ATTACKERS, Truth, build_attacker

    truth = Truth.from_cases(cases)
    return {TARGET: CarefulPolicy(), **{name: build_attacker(name, truth) for name in ATTACKERS}}


def _cases(args: argparse.Namespace) -> list[Any]:
    from batchgate_gym.desks.gate.cases import load_cases
    from batchgate_gym.desks.gate.sources import split_cases

    if args.cases:
        return load_cases(args.cases)
    if args.seeds is not None:
        return procedural_cases(range(args.seeds))
    return split_cases(args.split or "eval")


def procedural_cases(seeds: Iterable[int]) -> list[Any]:
    """The cases ``reset(seed=s)`` draws by default, read back from the world."""
    from batchgate_gym.envs import BatchGateEnv

    env = BatchGateEnv()
    try:
        found = []
        for seed in seeds:
            env.reset(seed=seed)
            found.append(env.unwrapped.world.case)
        return found
    finally:
        env.close()


def run_attacks(cases: list[Any], *, jobs: int = 1, progress: bool = False) -> dict[str, EvaluationResult]:
    return run_policies(attack_policies(cases), cases=cases, jobs=jobs, progress=progress)


def run(args: argparse.Namespace) -> int:
    results = run_attacks(_cases(args), jobs=args.jobs, progress=not args.no_progress)
    print(json.dumps(report_json(results), indent=1, sort_keys=True) if args.json else attack_table(results))
    return 0


def _kind(name: str) -> str:
    from batchgate_gym.policies.attackers import BASELINES, ORACLES

    if name == TARGET:
        return "target"
    return "oracle" if name in ORACLES else "baseline" if name in BASELINES else "attacker"


def attack_table(results: dict[str, EvaluationResult]) -> str:
    target = results[TARGET].overall.means["reward"]
    n_bad = results[TARGET].overall.defective_batches
    rows = []
    for name, result in results.items():
        overall = result.overall
        gap = "" if name == TARGET else f"{float(target - overall.means['reward']):.4f}"
        rows.append(
            [
                name,
                _kind(name),
                f"{overall.mean('reward'):.4f}",
                *(f"{overall.mean(term):.4f}" for term in TERMS),
                f"{overall.bad_batches_loaded} / {n_bad}",
                money(overall.revenue_error_usd),
                gap,
            ]
        )
    header = ["policy", "kind", "reward", *TERMS, "bad loaded", "revenue error", "below careful"]
    return markdown_table(header, rows)
