"""The team's tools: the refund desk's own, plus ``claim_order`` and ``wait``.

A claim is how workers coordinate: the first worker to claim an order holds it for
the episode, and the desk refuses a payment, void or escalation on an order another
worker holds. Claiming is optional; a worker that never claims is never blocked,
and two such workers can both pay the same thing.
"""

from __future__ import annotations

from batchgate_gym.kernel.codec import Param, ToolSpec

from ..tools import REFUND_TOOLS, desk_tools

CLAIM_ACTION = "claim_order"
WAIT_ACTION = "wait"

_CLAIM = ToolSpec(
    CLAIM_ACTION,
    "Claim an order for yourself for the rest of the episode: only its holder may pay, void or"
    " escalate on it. The first claim wins; a later one is told who holds the order.",
    (Param("order_id", str, "the order id exactly as your ticket gives it"),),
)
_WAIT = ToolSpec(WAIT_ACTION, "Do nothing this turn.")


def team_tools(recovery: bool = False) -> dict[str, ToolSpec]:
    """The desk's tools (with ``void_refund`` under recovery), the two team tools, ``reply`` last."""
    own = {name: spec for name, spec in desk_tools(recovery).items() if name != "reply"}
    return {**own, CLAIM_ACTION: _CLAIM, WAIT_ACTION: _WAIT, "reply": REFUND_TOOLS["reply"]}


__all__ = ["CLAIM_ACTION", "WAIT_ACTION", "team_tools"]
