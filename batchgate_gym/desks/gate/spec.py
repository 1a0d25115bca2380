"""The gate as the house's desk registry knows it: one :class:`DeskEntry`.

A declaration, not code: the gate's environment, case loaders, policies, team game and
speed benchmark (and the attack line-up, the policies' own ``lineup``) are named by
string entry point and loaded when a command first plays the desk; what is written here
is only what no entry point can say (a team episode's counts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchgate_gym.desks.registry import (
    CaseSupply,
    DeskEntry,
    DeskSpec,
    Metric,
    PolicySet,
    Scoring,
    TeamSpec,
)

from . import ENV_ID, GYMNASIUM_IDS


def load_case_file(source: Any) -> list[Any]:
    """The fixed cases of a case file (procedural sources are named by seeds, not files)."""
    from .sources import FixedCases, case_source

    found = case_source(source)
    if not isinstance(found, FixedCases):
        raise ValueError("cases= must name a fixed set of cases; use seeds= for procedural ones")
    return list(found.cases)


# The team game's mishaps, each a metric of every team episode: (metric, column header).
TEAM_MISHAPS = (
    ("repeat_loads", "repeat loads"),
    ("orphan_loads", "orphan loads"),
    ("miscited_duplicate", "wrongly cited duplicate"),
    ("miscited_orphan", "wrongly cited orphan"),
)


def _team_outcome(scoring: Scoring, finals: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, Any], bool]:
    """One team episode's result fields from every agent's final info (the score is the
    same in each), and whether every agent reported."""
    info = next(iter(finals.values()))
    if "infra_error" in info:  # the machine stopped the game: no score and no contributions
        fields = scoring.unscored_fields({**info, "family": ""})
        fields["metrics"].update({name: 0 for name, _header in TEAM_MISHAPS})
        return fields, False
    parts = [final["contribution"] for final in finals.values()]

    def cited(defect_type: str) -> int:
        return sum(part["wrong_citations"].count(defect_type) for part in parts)

    fields = scoring.episode_fields({**info, "family": ""})
    fields["metrics"].update(
        repeat_loads=sum(part["repeat_loads"] for part in parts),
        orphan_loads=sum(part["orphan_loads"] for part in parts),
        miscited_duplicate=cited("duplicate_key"),  # quarantines citing it that earn no evidence
        miscited_orphan=cited("orphan_reference"),
    )
    return fields, all(part["reported"] for part in parts)


def _build() -> DeskSpec:
    from .grader import WEIGHTS
    from .sources import SPLITS

    return DeskSpec(
        name="gate",
        env=GYMNASIUM_IDS[ENV_ID],
        env_id=ENV_ID,
        scoring=Scoring(
            weights=WEIGHTS,
            term_notes={
                "disposition": "share of batches that ended right (defective quarantined, clean loaded once)",
                "report": "1 if the report names exactly the batches loaded and those quarantined",
                "evidence": "defective batches stopped with a citation really in them, less clean ones quarantined",
                "inspected": "share of batches acted on that were profiled or queried first",
            },
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
        ),
        cases=CaseSupply.of_package("batchgate_gym.desks.gate", SPLITS, load_cases="spec:load_case_file"),
        policies=PolicySet(
            reference=("batchgate_gym.policies.gate.reference:REFERENCE_POLICIES",),
            defaults=("naive", "careful", "refuse-all"),
            attackers="batchgate_gym.policies.gate.attackers:ATTACKERS",
            lineup="batchgate_gym.policies.gate.attackers:lineup",
            target="careful",
            oracles="batchgate_gym.policies.gate.attackers:ORACLES",
            baselines="batchgate_gym.policies.gate.attackers:BASELINES",
            compared=("careful", "naive"),
        ),
        team=TeamSpec(
            env="batchgate_gym.envs.gate.team",
            policies="batchgate_gym.policies.gate.team:TEAM_POLICIES",
            solo="naive",
            outcome=_team_outcome,
            mishaps=TEAM_MISHAPS,
        ),
        bench="batchgate_gym.bench.gate",
        trl_env="batchgate_gym.envs.gate.trl:GateToolEnv",
        audit="batchgate_gym.policies.gate.audit:AUDIT",
    )


_DESCRIPTION = "BadBatchGate: gate a nightly warehouse load"
ENTRY = DeskEntry("gate", _DESCRIPTION, _build)
