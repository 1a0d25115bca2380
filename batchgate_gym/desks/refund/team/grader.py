"""The team's score: the refund desk's grade of the shared log, and each worker's part in it.

The team reward is cooperative: every worker receives the desk's score of the one
shared log (:func:`~..grader.grade`), each order of the queue graded on the calls
made for its tickets, whoever made them. A call is made for the ticket its worker
was working: a worker's executed replies end its tickets in turn, in its own list.
Each payment is attributed to the worker who made it (the log names the worker of
every entry), and so is a duplicate: the payment that took a line past its amount
is the duplicate, made by whoever made it second.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from batchgate_gym.kernel.ledger import LogEntry, entry_parts
from batchgate_gym.kernel.team import AGENT_KEY

from ..cases import RefundCase
from ..grader import RefundScore, duplicate_cents_each, executed_payments, grade
from ..tools import REPLY_ACTION


@dataclass(frozen=True, slots=True)
class AgentContribution:
    """What one worker's calls did: payments made, their cents, and the duplicates among them."""

    payments: int = 0
    paid_cents: int = 0
    duplicate_payments: int = 0
    duplicate_cents: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "payments": self.payments,
            "paid_cents": self.paid_cents,
            "duplicate_payments": self.duplicate_payments,
            "duplicate_cents": self.duplicate_cents,
        }


@dataclass(frozen=True)
class TeamScore:
    score: RefundScore
    agents: Mapping[str, AgentContribution]  # each worker's part, by name


def _worker(entry: LogEntry | Mapping[str, Any]) -> Any:
    _, args, _ = entry_parts(entry)
    return args.get(AGENT_KEY) if isinstance(args, Mapping) else None


def team_position(
    lists: Mapping[str, Sequence[int]], entries: Sequence[LogEntry | Mapping[str, Any]]
) -> Callable[[int], int | None]:
    """The ticket (an index into the queue) each log position was made for, or ``None``
    for an entry of no worker (the world's own)."""
    made_for: list[int | None] = []
    replies = dict.fromkeys(lists, 0)
    for entry in entries:
        worker = _worker(entry)
        if worker not in lists or not lists[worker]:
            made_for.append(None)
            continue
        tickets = lists[worker]
        made_for.append(tickets[min(replies[worker], len(tickets) - 1)])
        action, _, executed = entry_parts(entry)
        if executed and action == REPLY_ACTION:
            replies[worker] += 1
    return lambda position: made_for[position] if 0 <= position < len(made_for) else None


def grade_team(
    case: RefundCase,
    entries: Iterable[LogEntry | Mapping[str, Any]],
    rules: str,
    lists: Mapping[str, Sequence[int]],
    *,
    verified: bool,
) -> TeamScore:
    """The desk's score of the shared log, and each worker's part (every worker listed)."""
    entries = list(entries)
    ticket_of = team_position(lists, entries)
    score = grade(case, entries, rules, verified=verified, ticket_of=ticket_of)
    parts = {worker: [0, 0, 0, 0] for worker in lists}
    payments = [
        p for p in executed_payments(entries) if isinstance(p.amount_cents, int) and p.amount_cents > 0
    ]
    tickets = case.tickets
    for order_id in dict.fromkeys(ticket.order.order_id for ticket in tickets):
        first = next(ticket for ticket in tickets if ticket.order.order_id == order_id)
        mine = [p for p in payments if _order_of(tickets, ticket_of(p.position)) == order_id]
        for payment, past in zip(mine, duplicate_cents_each(first, mine), strict=True):
            part = parts.get(_worker(entries[payment.position]))
            if part is not None:
                part[0] += 1
                part[1] += payment.amount_cents
                part[2] += int(past > 0)
                part[3] += past
    return TeamScore(score, {worker: AgentContribution(*numbers) for worker, numbers in parts.items()})


def _order_of(tickets: Sequence[RefundCase], index: int | None) -> str | None:
    return None if index is None else tickets[index].order.order_id


__all__ = ["AgentContribution", "TeamScore", "grade_team", "team_position"]
