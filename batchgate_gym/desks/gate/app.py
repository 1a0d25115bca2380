"""The gate's entry in the ``batchgate`` command's desk registry.

Wiring, not core: it tells the commands how to make the gate's environments, where
its cases come from, which policies and attackers it has, what its tables show, and
its team game and benchmark. Everything the desk record needs is imported inside
functions, so naming the desk costs nothing until a command plays it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchgate_gym.app.desks import Desk, Metric, TeamGame, cases_drawn, get, register


def _gate_env(cases: Any = None, **kwargs: Any) -> Any:
    from batchgate_gym.envs import BatchGateEnv

    return BatchGateEnv(cases, **kwargs)


def _gate_load_cases(source: Any) -> list[Any]:
    from batchgate_gym.desks.gate.sources import FixedCases, case_source

    found = case_source(source)
    if not isinstance(found, FixedCases):
        raise ValueError("cases= must name a fixed set of cases; use seeds= for procedural ones")
    return list(found.cases)


def _gate_split_cases(name: str) -> list[Any]:
    from batchgate_gym.desks.gate.sources import split_cases

    return split_cases(name)


def _gate_attackers(cases: list[Any]) -> dict[str, Any]:
    """careful first, then every attacker, oracles given the truth of ``cases``."""
    from batchgate_gym.policies.gate.attackers import ATTACKERS, Truth, build_attacker
    from batchgate_gym.policies.gate.reference import CarefulPolicy

    truth = Truth.from_cases(cases)
    return {"careful": CarefulPolicy(), **{name: build_attacker(name, truth) for name in ATTACKERS}}


def _gate_kind(name: str) -> str:
    from batchgate_gym.policies.gate.attackers import BASELINES, ORACLES

    if name == "careful":
        return "target"
    return "oracle" if name in ORACLES else "baseline" if name in BASELINES else "attacker"


def _gate_team_env(parallel: bool = False, **kwargs: Any) -> Any:
    from batchgate_gym.envs.gate import team

    return team.parallel_env(**kwargs) if parallel else team.env(**kwargs)


def _gate_team_policies() -> dict[str, Any]:
    from batchgate_gym.policies.gate.team import TEAM_POLICIES

    return dict(TEAM_POLICIES)


def _gate_team_result(seed: int, finals: Mapping[str, Mapping[str, Any]]) -> Any:
    """One team episode's result from every agent's final info (the score is the same in each)."""
    from batchgate_gym.app.evaluate import EpisodeResult

    info = next(iter(finals.values()))
    parts = [final["contribution"] for final in finals.values()]

    def cited(defect_type: str) -> int:
        return sum(part["wrong_citations"].count(defect_type) for part in parts)

    desk = get("gate")
    fields = desk.episode_fields({**info, "family": ""})
    fields["metrics"].update(
        repeat_loads=sum(part["repeat_loads"] for part in parts),
        orphan_loads=sum(part["orphan_loads"] for part in parts),
        miscited_duplicate=cited("duplicate_key"),  # quarantines citing it that earn no evidence
        miscited_orphan=cited("orphan_reference"),
    )
    reported = all(part["reported"] for part in parts)
    return EpisodeResult(
        index=seed,
        seed=seed,
        turns=max(final["turn"] for final in finals.values()),
        calls=0,  # not counted for team episodes
        terminated=reported,
        truncated=not reported,
        **fields,
    )


def _gate_bench() -> Any:
    from batchgate_gym.app import bench

    return bench


def _make_gate() -> Desk:
    from batchgate_gym.desks.gate.grader import TERMS, WEIGHTS
    from batchgate_gym.desks.gate.sources import SPLITS
    from batchgate_gym.policies.gate.attackers import ATTACKERS
    from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES
    from batchgate_gym.registration import ENV_ID

    return Desk(
        name="gate",
        description=_GATE_DESCRIPTION,
        env_id=ENV_ID,
        make_env=_gate_env,
        terms=tuple(TERMS),
        weights=dict(WEIGHTS),
        term_notes={
            "disposition": "share of batches that ended right (defective quarantined, clean loaded once)",
            "report": "1 if the report names exactly the batches loaded and those quarantined",
            "evidence": "defective batches stopped with a citation really in them, less clean ones quarantined",
            "inspected": "share of batches acted on that were profiled or queried first",
        },
        reference_policies=dict(REFERENCE_POLICIES),
        default_policies=("naive", "careful", "refuse-all"),
        splits=tuple(SPLITS),
        default_split="eval",
        split_cases=_gate_split_cases,
        load_cases=_gate_load_cases,
        procedural_cases=cases_drawn(_gate_env),
        metrics=(
            Metric(
                "bad_batches_loaded",
                column="bad loaded",
                row="defective batches loaded",
                phrase="defective batches loaded",
                out_of="defective_batches",
            ),
            Metric(
                "revenue_error_usd",
                column="revenue error",
                row="revenue error, all {cases} cases",
                phrase="revenue error",
                money=True,
                worst="Largest revenue errors",
            ),
            Metric("defective_batches", source="info", shown=False),
        ),
        headline_terms=("disposition",),
        exact_terms=(("report", "reports that match what happened"),),
        attackers=dict(ATTACKERS),
        build_attacks=_gate_attackers,
        attack_target="careful",
        attack_kind=_gate_kind,
        team=TeamGame(
            make_env=_gate_team_env,
            policies=_gate_team_policies,
            solo="naive",
            result=_gate_team_result,
            mishaps=(
                ("repeat_loads", "repeat loads"),
                ("orphan_loads", "orphan loads"),
                ("miscited_duplicate", "wrongly cited duplicate"),
                ("miscited_orphan", "wrongly cited orphan"),
            ),
        ),
        bench=_gate_bench,
    )


_GATE_DESCRIPTION = "BadBatchGate: gate a nightly warehouse load"
register("gate", _GATE_DESCRIPTION, _make_gate)
