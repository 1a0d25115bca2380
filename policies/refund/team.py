"""The refund desk's policies for its team game (:mod:`batchgate_gym.envs.refund.team`),
each worker playing its own copy: ``careful-claim`` (``TEAM_POLICIES``, with the single
desk's references) and the attacker ``void-earlier`` (``TEAM_ATTACKERS``)."""

from __future__ import annotations

from batchgate_gym.kernel.text_policy import action, call, result_of

from ..base import Policy
from .attackers import VoidEarlierPolicy
from .reference import CarefulRefundPolicy, NaiveRefundPolicy, RefuseAllRefundPolicy, Script


class ClaimingCarefulPolicy(CarefulRefundPolicy):
    """careful for a worker of a team: it claims each ticket's order first, and when a
    colleague holds the order it leaves the ticket to them and only answers."""

    name = "careful-claim"

    def script(self) -> Script:
        if self.order_id not in self.handled:
            seen = yield action(call("claim_order", order_id=self.order_id))
            if result_of(seen, "claim_order").get("status") == "held":
                self.handled.add(self.order_id)
                self.closing = "A colleague is already handling your request."
                return
        yield from super().script()


TEAM_POLICIES: dict[str, type[Policy]] = {
    "careful-claim": ClaimingCarefulPolicy,
    "careful": CarefulRefundPolicy,
    "naive": NaiveRefundPolicy,
    "refuse-all": RefuseAllRefundPolicy,
}
"""Policies for the refund team game, each worker playing its own copy."""


class ClaimingVoidEarlierPolicy(VoidEarlierPolicy, ClaimingCarefulPolicy):
    """void-earlier for a worker of a team: careful-claim on each ticket of its list, except
    that each later ticket begins by taking back every payment the worker made on its
    earlier ones (recovery). The orders are its own claims, so the desk lets the voids
    through; without recovery they are refused as an unknown tool and it plays careful-claim."""

    name = "void-earlier"


TEAM_ATTACKERS: dict[str, type[Policy]] = {"void-earlier": ClaimingVoidEarlierPolicy}
"""Attackers of the team game (``batchgate team --desk refund --recovery on``), measured
against careful-claim; each needs recovery (without it it plays careful-claim)."""

__all__ = ["TEAM_ATTACKERS", "TEAM_POLICIES", "ClaimingCarefulPolicy", "ClaimingVoidEarlierPolicy"]
