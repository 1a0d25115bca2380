"""The analyst desk's part in ``batchgate audit``: careful's checks, their ablations, the named
attackers, and how an episode is graded again under a weaker grader.

Grading an analyst episode re-runs its cited queries on the case's stores. An episode is
captured with the results its grading got (:class:`Recorded`), so grading it again under
each grader mutation reads those results instead of opening the stores again: the queries
are deterministic (the stores refuse what is not), and the verdicts on the counterfactual
copies are kept by the grader itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from batchgate_gym.desks.analyst.engines.base import StoreFailure, StoreRefused, StoreResult
from batchgate_gym.desks.analyst.grader import CHECKS, grade
from batchgate_gym.evaluation.audit import DeskAudit
from batchgate_gym.kernel.grader_checks import checks_off

from .attackers import ATTACKERS, AUDIT_ATTACKERS
from .reference import CAREFUL_CHECKS, REFERENCE_POLICIES, CarefulAnalyst

Outcome = StoreResult | StoreRefused | StoreFailure


@dataclass(frozen=True)
class Recorded:
    """A store as the grading of one episode saw it: each query's result, or its refusal or failure."""

    name: str
    outcomes: dict[tuple[str, str], Outcome]

    def run(self, query: str) -> StoreResult:
        outcome = self.outcomes[(self.name, query)]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


@dataclass(frozen=True)
class Recording:
    """A live store whose every outcome is written down for :class:`Recorded`."""

    store: Any
    name: str
    outcomes: dict[tuple[str, str], Outcome]

    def run(self, query: str) -> StoreResult:
        try:
            result: StoreResult = self.store.run(query)
        except (StoreRefused, StoreFailure) as exc:
            self.outcomes[(self.name, query)] = exc
            raise
        self.outcomes[(self.name, query)] = result
        return result


Captured = tuple[Any, tuple[Any, ...], dict[tuple[str, str], Outcome]]


def named_attackers(_cases: list[Any]) -> dict[str, Any]:
    """Every policy of the attack table but careful (the baselines and the attackers), and the
    attackers only the audit plays."""
    lineup = {**REFERENCE_POLICIES, **ATTACKERS, **AUDIT_ATTACKERS}
    return {name: cls() for name, cls in lineup.items() if name != "careful"}


def capture(env: Any, _policy: Any) -> Captured:
    """The case, the log, and what its cited queries return on the case's stores: each query a
    grader mutation may re-run (a wrong answer's too, which a grader judging no answer re-runs)."""
    world = env.world
    outcomes: dict[tuple[str, str], Outcome] = {}
    entries = tuple(world.ledger.entries)
    world.begin_action()
    with checks_off(CHECKS, "answer-matches", "evidence-on-copies"):
        grade(world.case, entries, _recording(world, outcomes))
    return world.case, entries, outcomes


def _recording(world: Any, outcomes: dict[tuple[str, str], Outcome]) -> Callable[[str], Any]:
    return lambda name: Recording(world.store(name), name, outcomes)


def _replaying(outcomes: dict[tuple[str, str], Outcome]) -> Callable[[str], Any]:
    return lambda name: Recorded(name, outcomes)


def reward(captured: Captured) -> Fraction:
    case, entries, outcomes = captured
    return grade(case, entries, _replaying(outcomes)).reward


AUDIT = DeskAudit(
    desk="analyst",
    grader=CHECKS,
    careful_checks=CAREFUL_CHECKS,
    target=CarefulAnalyst,
    ablation=lambda checks: CarefulAnalyst.without(*checks),
    attackers=named_attackers,
    capture=capture,
    reward=reward,
)

__all__ = ["AUDIT", "Recorded", "Recording"]
