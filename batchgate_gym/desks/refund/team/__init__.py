"""RefundDesk for a team of refund workers: one ticket queue, one provider, one ledger, one log.

Modules: ``tools`` (the desk's tools plus ``claim_order`` and ``wait``), ``world``
(the shared desk, calls made *as* a worker), ``deal`` (who gets which ticket),
``grader`` (the cooperative score from the shared log, each payment attributed),
``prompt`` (each worker's task text) and ``game`` (one kernel episode per worker
over the shared world, for both PettingZoo interfaces).
"""

from __future__ import annotations

from .deal import agent_names, deal_tickets
from .game import RefundTeamGame
from .grader import TeamScore, grade_team
from .world import RefundTeamWorld

__all__ = [
    "RefundTeamGame",
    "RefundTeamWorld",
    "TeamScore",
    "agent_names",
    "deal_tickets",
    "grade_team",
]
