"""Each worker's first observation: the desk's brief, how the team works, its tools, its first ticket."""

from __future__ import annotations

from batchgate_gym.kernel.codec import escape, how_to_act, tool_lines

from ..cases import RefundCase
from ..prompt import brief
from .tools import team_tools

_TEAM = """\
You are {worker}, one of {count} refund workers sharing one ticket queue, one payment
provider and one ledger. Your list holds {mine} ticket(s); your reply to one brings
your next, and your reply to your last ends your part. Another worker may get a
ticket about the same order at the same time. The provider keeps idempotency keys
per worker: your key never protects against a colleague's payment. claim_order holds
an order for the first worker to claim it: nobody else may then pay, void or
escalate on it. The team shares one score."""


def team_task_text(
    case: RefundCase, worker: str, workers: int, tickets: tuple[int, ...], max_turns: int, recovery: bool
) -> str:
    first = case.tickets[tickets[0]]
    tools = team_tools(recovery)
    parts = [
        brief(case.cap_cents),
        _TEAM.format(worker=worker, count=workers, mine=len(tickets)),
        f"Tools:\n{tool_lines(tools)}",
        how_to_act(tools),
        f"You have {max_turns} turns.",
        f'Ticket for order {first.order.order_id}: "{first.prompt}"',
    ]
    return escape("\n\n".join(parts))


__all__ = ["team_task_text"]
