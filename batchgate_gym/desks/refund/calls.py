"""The desk's calls as the grader reads them from an episode's log.

Nothing the agent says is trusted: payments are the executed ``issue_refund``
entries of the hash-chained log (any order id), reads and escalations its other
entries. The log is read leniently (an entry that is not one, or whose arguments
are not a mapping, counts as no call or as a call with no arguments), so a log
written by hand grades instead of failing.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from batchgate_gym.kernel.episode import INVALID_ACTION
from batchgate_gym.kernel.ledger import BEGIN_ACTION, SEAL_ACTION, LogEntry, entry_parts

from .cases import RefundCase
from .tools import REPLY_ACTION
from .world import Payment

_NOT_CALLS = (BEGIN_ACTION, SEAL_ACTION, REPLY_ACTION, INVALID_ACTION)


class Call(NamedTuple):  # a tuple: made for every logged call of every graded episode
    """One call of the log: its position there, its action, arguments and whether it ran."""

    position: int
    action: Any
    args: Mapping[str, Any]
    executed: bool


def calls_in(entries: Iterable[LogEntry | Mapping[str, Any]]) -> list[Call]:
    """The desk's calls in the log (no begin, seal, reply or unparsable action), read leniently."""
    calls = []
    for position, entry in enumerate(entries):
        if not isinstance(entry, (LogEntry, Mapping)):
            continue
        action, args, executed = entry_parts(entry)
        if action in _NOT_CALLS:
            continue
        plain = type(args) is dict or isinstance(args, Mapping)  # a dict needs no ABC check
        calls.append(Call(position, action, args if plain else {}, executed))
    return calls


def executed_payments(entries: Iterable[LogEntry | Mapping[str, Any]]) -> list[Payment]:
    """Every payment the log shows as executed, in log order."""
    return payments_of(calls_in(entries))


def payments_of(calls: Sequence[Call]) -> list[Payment]:
    """The payments of ``calls``' executed ``issue_refund`` calls, in log order."""
    return [Payment.from_args(c.args, c.position) for c in executed_refunds(calls)]


def executed_refunds(calls: Sequence[Call]) -> list[Call]:
    """The executed ``issue_refund`` calls: the payments the tool made."""
    return [c for c in calls if c.action == "issue_refund" and c.executed]


def written_payments(calls: Sequence[Call]) -> list[Payment]:
    """The payments as the desk wrote them: every ``issue_refund`` carrying an effect id,
    whatever its ``executed`` says."""
    return [
        Payment.from_args(c.args, c.position)
        for c in calls
        if c.action == "issue_refund" and isinstance(c.args.get("effect_id"), str)
    ]


def has_read(
    calls: Sequence[Call], action: str, order_id: Any, *, before: int | None, executed_only: bool
) -> bool:
    """Whether the log reads ``order_id`` with ``action`` (before position ``before``, if given)."""
    return any(
        c.action == action
        and (before is None or c.position < before)
        and c.args.get("order_id") == order_id
        and (c.executed or not executed_only)
        for c in calls
    )


def queue_position(
    case: RefundCase, entries: Sequence[LogEntry | Mapping[str, Any]]
) -> Callable[[int], int | None]:
    """The ticket being worked at each log position of a one-worker queue: a ticket ends
    at its executed reply; anything after the last reply counts for the last ticket."""
    replies = [position for position, entry in enumerate(entries) if is_reply(entry)]
    last = len(case.tickets) - 1
    return lambda position: min(bisect.bisect_left(replies, position), last)


def is_reply(entry: object) -> bool:
    """Whether ``entry`` is an executed reply to the customer: the end of a queue's ticket."""
    if not isinstance(entry, (LogEntry, Mapping)):
        return False
    action, _, executed = entry_parts(entry)
    return executed and action == REPLY_ACTION
