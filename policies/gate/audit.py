"""The gate's part in ``batchgate audit``: careful's checks, their ablations, the named
attackers, and how an episode is graded again under a weaker grader."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from batchgate_gym.desks.gate.grader import CHECKS, grade, read_facts
from batchgate_gym.evaluation.audit import DeskAudit

from .attackers import ATTACKERS, Truth, build_attacker
from .reference import CAREFUL_CHECKS, CarefulPolicy

SIGNUP_AND_LABELS = (
    "currency__wrong_currency",
    "country__invalid_value",
    "signup_date__invalid_value",
    "signup_date__out_of_window",
)
"""Four checks that eval never needs: careful without them ties careful there."""


def named_attackers(cases: list[Any]) -> dict[str, Any]:
    truth = Truth.from_cases(cases)
    return {name: build_attacker(name, truth) for name in ATTACKERS}


def capture(env: Any, _policy: Any) -> tuple[Any, tuple[Any, ...], float, float]:
    """What an episode did: its case, its log, the mart it left and the reference mart."""
    world = env.world
    return world.case, tuple(world.ledger.entries), world.mart_usd(), world.prepared_case.reference_mart


def reward(captured: tuple[Any, tuple[Any, ...], float, float]) -> Fraction:
    case, entries, mart, reference = captured
    return grade(case, read_facts(case, entries), mart, reference).reward


AUDIT = DeskAudit(
    desk="gate",
    grader=CHECKS,
    careful_checks=CAREFUL_CHECKS,
    target=CarefulPolicy,
    ablation=lambda checks: CarefulPolicy.without(*checks),
    attackers=named_attackers,
    capture=capture,
    reward=reward,
    combined=(SIGNUP_AND_LABELS,),
)

__all__ = ["AUDIT", "SIGNUP_AND_LABELS"]
