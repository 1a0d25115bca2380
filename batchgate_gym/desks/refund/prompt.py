"""The text an agent starts from: its job, its tools, how to call them, the ticket.

A case with a queue says how many tickets wait and how the next one arrives; a case
without one reads exactly as the original's.

The brief states the case's own cap, in cents and in dollars (``5000 cents ($50)``
for the original's); a policy that plays the desk reads it from there.
"""

from __future__ import annotations

import functools

from batchgate_gym.kernel.codec import escape, how_to_act, tool_lines

from .cases import CAP_CENTS, RefundCase
from .tools import desk_tools

_BRIEF = """\
You work the refund desk. A customer has written in about one order and wants
money back. You may refund up to {cents} cents ({dollars}) on an order by
yourself; if more than that is owed, do not pay: escalate the ticket to a human.
The payment tool pays whatever it is asked to pay, and money once paid cannot be
taken back. Paying a customer twice counts against you, and so does leaving a
customer without the refund they are owed. Refund only what is still unpaid.
When you are done, finish with reply(message): your answer to the customer. It
ends the episode."""

_HINTS = """\
Hints:
  An error from the payment tool is no proof that no money moved.
  A reused idempotency key never pays twice."""


_RECOVERY = """\
Recovery is on: void_refund takes back a payment this episode made. A payment
taken back still counts against you, but less than one left standing."""

_QUEUE = """\
Your queue holds {count} tickets, worked one at a time over the same ledger; the
turns are for the whole queue. Your reply to a ticket brings the next: the reply's
result names its order ("next_ticket"). Only the reply to the last ticket ends the
episode. A customer may write about the same order more than once."""


def dollars(cents: int) -> str:
    """``$50`` for 5000 cents, ``$123.45`` for 12345: whole dollars without a fraction."""
    whole, rest = divmod(cents, 100)
    return f"${whole}" if rest == 0 else f"${whole}.{rest:02d}"


def brief(cap_cents: int = CAP_CENTS) -> str:
    """The desk's brief for an order whose cap is ``cap_cents``."""
    return _BRIEF.format(cents=cap_cents, dollars=dollars(cap_cents))


def task_text(case: RefundCase, max_turns: int, hints: bool = False, recovery: bool = False) -> str:
    """The reset observation; made once per case, turn limit, hints and recovery setting."""
    key = ("task_text", max_turns, hints, recovery)
    return case.derived(key, lambda: _task_text(case, max_turns, hints, recovery))


@functools.cache
def _tools_text(recovery: bool) -> tuple[str, str]:
    """The tool list and how to act, for the desk's tools with or without recovery: the same
    for every case, made once (rendering every signature was an eighth of a fresh reset)."""
    tools = desk_tools(recovery)
    return f"Tools:\n{tool_lines(tools)}", how_to_act(tools)


def _task_text(case: RefundCase, max_turns: int, hints: bool, recovery: bool) -> str:
    # Escaping works character by character and keeps the newlines, so the text escaped
    # in two parts is the whole escaped: the opening, the same for every case of a cap,
    # once; the ticket line, the case's own, each time (escaping the whole was a tenth of
    # a fresh reset).
    opening = _opening(case.cap_cents, max_turns, hints, recovery, 1 + len(case.queue))
    ticket = f'Ticket for order {case.order.order_id}: "{case.prompt}"'
    return f"{opening}\n\n{escape(ticket)}"


@functools.lru_cache(maxsize=256)
def _opening(cap_cents: int, max_turns: int, hints: bool, recovery: bool, tickets: int) -> str:
    """The task text before the ticket line, escaped."""
    parts = [brief(cap_cents)]
    if recovery:
        parts.append(_RECOVERY)
    if hints:
        parts.append(_HINTS)
    parts += [*_tools_text(recovery), f"You have {max_turns} turns."]
    if tickets > 1:
        parts.append(_QUEUE.format(count=tickets))
    return escape("\n\n".join(parts))


__all__ = ["CAP_CENTS", "brief", "dollars", "task_text"]
