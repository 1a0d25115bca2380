"""The analyst desk as the house's desk registry knows it: one :class:`DeskEntry`.

A declaration, not code: the desk's environment, case loaders, policies and speed
benchmark (``batchgate bench --desk analyst``: per store, careful's episodes per second
and the latency of one query) are named by string entry point and loaded when a command
first plays the desk, the attack line-up included; what is written here is only what no
entry point can say: the per-case fields its JSON report carries (``level``, ``store``).
"""

from __future__ import annotations

from batchgate_gym.desks.registry import CaseSupply, DeskEntry, DeskSpec, Metric, PolicySet, Scoring

from . import ENV_ID, EXTRA, GYMNASIUM_IDS


def _build() -> DeskSpec:
    # First: without the analyst extra, one line naming it rather than an error from polars.
    from . import dependencies  # noqa: F401
    from .generator.splits import SPLITS
    from .grader import WEIGHTS

    return DeskSpec(
        name="analyst",
        env=GYMNASIUM_IDS[ENV_ID],
        env_id=ENV_ID,
        scoring=Scoring(
            weights=WEIGHTS,
            term_notes={
                "correct": "the answer matches the reference within its tolerance",
                "partial_credit": "share of the answer's parts that are right",
                "evidence_reproduces": "a right answer's cited queries compute it, on the data and on counterfactual copies",
                "abstention_correct": "the decision was not wrong: a right answer, or a decline",
            },
            metrics=(
                Metric(
                    "fully_supported",
                    column="fully supported",
                    row="fully supported",
                    phrase="fully supported",
                ),
                Metric("wrong_answers", column="wrong answers", row="wrong answers", phrase="wrong answers"),
                Metric(
                    "infra_errors",
                    column="infra errors",
                    row="infra errors (counted apart)",
                    phrase="infrastructure errors",
                ),
            ),
        ),
        cases=CaseSupply.of_package("batchgate_gym.desks.analyst", SPLITS),
        policies=PolicySet(
            reference=(f"{_POLICIES}.reference:REFERENCE_POLICIES",),
            defaults=("careful", "always-decline", "answer-everything"),
            attackers=f"{_POLICIES}.attackers:ATTACKERS",
            lineup=f"{_POLICIES}.attackers:lineup",
            target="careful",
            baselines=f"{_POLICIES}.attackers:BASELINES",
            # its naive counterpart answers every question, supported or not
            compared=("careful", "answer-everything"),
        ),
        bench="batchgate_gym.bench.analyst",
        trl_env="batchgate_gym.envs.analyst.trl:AnalystToolEnv",
        audit="batchgate_gym.policies.analyst.audit:AUDIT",
        case_fields=("level", "store"),
        start_method="spawn",  # polars' and chDB's threads do not survive fork (see forking.py)
    )


_POLICIES = "batchgate_gym.policies.analyst"
_DESCRIPTION = "AnalystDesk: answer business questions over real data engines, with evidence"
ENTRY = DeskEntry("analyst", _DESCRIPTION, _build, extra=EXTRA)
