"""The refund desk's part in ``batchgate audit``: careful's checks, their ablations, the
named attackers, and how an episode is graded again under a weaker grader."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from batchgate_gym.desks.refund.grader import CHECKS, grade
from batchgate_gym.evaluation.audit import DeskAudit
from batchgate_gym.kernel.ledger import LogIntegrityError, verify_chain

from .attackers import ATTACKERS, QUEUE_ATTACKERS
from .reference import CAREFUL_CHECKS, CarefulRefundPolicy

Captured = tuple[Any, tuple[Any, ...], str, bool, tuple[Any, ...]]


def named_attackers(cases: list[Any]) -> dict[str, Any]:
    queue = QUEUE_ATTACKERS if any(case.queue for case in cases) else {}
    return {name: cls() for name, cls in {**ATTACKERS, **queue}.items()}


def capture(env: Any, policy: Any) -> Captured:
    """The case, the log as the policy hands it in (edited, for an attacker that edits
    it), the rules, whether that log verifies as the rules ask, and the desk's payments."""
    world = env.world
    entries = tuple(world.ledger.entries)
    verified = world.original or world.ledger.sealed
    edit = getattr(policy, "edit_log", None)
    if edit is not None:
        entries = tuple(edit(env.export_log()))
        verified = _verifies(world, list(entries))
    return world.case, entries, world.rules, verified, tuple(world.payments)


def _verifies(world: Any, entries: list[Any]) -> bool:
    try:
        if world.original:
            verify_chain(entries, require_seal=False)
        else:
            verify_chain(entries, require_seal=True, head=world.ledger.head, case_digest=world.case.digest)
    except LogIntegrityError:
        return False
    return True


def reward(captured: Captured) -> Fraction:
    case, entries, rules, verified, payments = captured
    return grade(case, entries, rules, verified=verified, payments=payments).reward


AUDIT = DeskAudit(
    desk="refund",
    grader=CHECKS,
    careful_checks=CAREFUL_CHECKS,
    target=CarefulRefundPolicy,
    ablation=lambda checks: CarefulRefundPolicy.without(*checks),
    attackers=named_attackers,
    capture=capture,
    reward=reward,
)

__all__ = ["AUDIT"]
