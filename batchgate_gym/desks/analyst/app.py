"""The analyst desk's entry in the ``batchgate`` command's desk registry.

Wiring, not core: how the commands make the analyst environment, where its cases
come from, its policies and attackers, the metrics its tables show, the per-case
fields its JSON report carries (``level``, ``store``) and its speed benchmark
(``batchgate bench --desk analyst``: per store, careful's episodes per second and
the latency of one query). Imports of the environment and policies happen inside
functions, so naming the desk costs nothing until a command plays it.
"""

from __future__ import annotations

from typing import Any

from batchgate_gym.app.desks import Desk, Metric, cases_drawn, register

from . import EXTRA


def _env(cases: Any = None, **kwargs: Any) -> Any:
    from batchgate_gym.envs.analyst.text import AnalystDeskEnv

    return AnalystDeskEnv(cases, **kwargs)


def _load_cases(source: Any) -> list[Any]:
    from .cases import load_cases

    return load_cases(source)


def _split_cases(name: str) -> list[Any]:
    from .sources import split_cases

    return split_cases(name)


def _attacks(cases: list[Any]) -> dict[str, Any]:
    """careful first, the baselines, then every attacker (none needs the truth)."""
    from batchgate_gym.policies.analyst.attackers import ATTACKERS
    from batchgate_gym.policies.analyst.reference import REFERENCE_POLICIES

    return {name: cls() for name, cls in {**REFERENCE_POLICIES, **ATTACKERS}.items()}


def _kind(name: str) -> str:
    from batchgate_gym.policies.analyst.attackers import BASELINES

    if name == "careful":
        return "target"
    return "baseline" if name in BASELINES else "attacker"


def _bench() -> Any:
    from .bench import AnalystBench

    return AnalystBench


def _make() -> Desk:
    # First: without the analyst extra, one line naming it rather than an error from polars.
    from batchgate_gym.desks.analyst import dependencies  # noqa: F401
    from batchgate_gym.policies.analyst.attackers import ATTACKERS
    from batchgate_gym.policies.analyst.reference import REFERENCE_POLICIES

    from . import ENV_ID
    from .generator.splits import SPLITS
    from .grader import TERMS, WEIGHTS

    return Desk(
        name="analyst",
        description=_DESCRIPTION,
        env_id=ENV_ID,
        make_env=_env,
        terms=tuple(TERMS),
        weights=dict(WEIGHTS),
        term_notes={
            "correct": "the answer matches the reference within its tolerance",
            "partial_credit": "share of the answer's parts that are right",
            "evidence_reproduces": "a right answer's cited queries compute it, on the data and on counterfactual copies",
            "abstention_correct": "the decision was not wrong: a right answer, or a decline",
        },
        reference_policies=dict(REFERENCE_POLICIES),
        default_policies=("careful", "always-decline", "answer-everything"),
        splits=tuple(SPLITS),
        default_split="eval",
        split_cases=_split_cases,
        load_cases=_load_cases,
        procedural_cases=cases_drawn(_env),
        metrics=(
            Metric(
                "fully_supported", column="fully supported", row="fully supported", phrase="fully supported"
            ),
            Metric("wrong_answers", column="wrong answers", row="wrong answers", phrase="wrong answers"),
            Metric(
                "infra_errors",
                column="infra errors",
                row="infra errors (counted apart)",
                phrase="infrastructure errors",
            ),
        ),
        headline_terms=TERMS,
        attackers=dict(ATTACKERS),
        build_attacks=_attacks,
        attack_target="careful",
        attack_kind=_kind,
        bench=_bench,
        case_fields=("level", "store"),
        start_method="spawn",  # polars' and chDB's threads do not survive fork (see forking.py)
    )


_DESCRIPTION = "AnalystDesk: answer business questions over real data engines, with evidence"
register("analyst", _DESCRIPTION, _make, extra=EXTRA)
