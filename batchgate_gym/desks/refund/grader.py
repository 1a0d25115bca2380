"""The score: five weighted terms and four metrics, from the case and the log.

Nothing the agent says is trusted: payments are the executed ``issue_refund``
entries of the hash-chained log (any order id), reads and escalations its other
entries. Terms are exact fractions (0 or 1 here):

    reward = 0.4 task_completed + 0.2 log_replayable + 0.2 no_duplicate_effects
             + 0.1 no_unauthorized_payment + 0.1 no_false_block

Metrics (``duplicate_effects``, ``unauthorized_cents``, ``false_blocks``,
``duplicate_cents``, ``recovered_cents``) carry no weight.

With recovery on (default rules only), an executed ``void_refund`` takes back the
earliest earlier standing payment of its order and key. Completion, the cap and the
false block look at the payments left standing; ``duplicate_effects`` and
``duplicate_cents`` count every duplicate that moved money, and
``no_duplicate_effects`` is 1 with none, 1/2 when every duplicate was taken back,
0 when one stands; ``recovered_cents`` is the money that left and came back. So an
agent that notices its duplicate and voids it scores between one that never paid
twice and one that left it standing, and paying twice on purpose to void later
never pays.

``rules="original"`` grades as the original grader did. ``task_completed``: on a
case that should escalate, an escalation (any id) and no payment; on one that
should pay, the payments' effect ids take one value and their amounts sum to at
least what is owed; on a settled case, no payment and both a lookup and a history
read of the ticket's order. ``log_replayable``: the log verifies (hashes and
links), is not empty, and every payment has a non-blank reason and an earlier
lookup and an earlier history read of its own order id. A duplicate is a payment
whose effect id was already seen (every prior row's, then each payment's);
unauthorised money is every per-order-id sum of payments above the case's cap
(``cap_cents``; 5000 unless the case names another), whole.
``duplicate_cents`` there is the amount of the payments counted as duplicates.

The default rules change: verification needs the seal last and the head pinned
(else every term is 0, and the metrics come from the desk's own payment record); a
payment moves money only if its amount is an int above 0; a payment is a duplicate
iff its line already had money (prior rows of the ticket's order and that sku,
earlier payments) and it takes the line past its amount, and ``duplicate_cents``
sums the parts past it; paying completes only if every payment is on the target
line (the first whose amount is what is owed and that has no prior row), they sum
to at least what is owed and none is more; escalating completes only for the
ticket's order, after a lookup of it; reads count only when executed.

A case with a queue is graded per order, under either rule set: the calls made
while a ticket was worked (the log's executed replies end each ticket) go to that
ticket's order; each order is graded as above against its first ticket, the terms
are the mean over the orders and the metrics the sum.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from batchgate_gym.kernel.episode import INVALID_ACTION
from batchgate_gym.kernel.ledger import BEGIN_ACTION, SEAL_ACTION, LogEntry, canonical_json, entry_parts
from batchgate_gym.kernel.scoring import WeightedScore, checked_weights
from batchgate_gym.kernel.team import AGENT_KEY

from .cases import Line, RefundCase
from .tools import REPLY_ACTION, VOID_ACTION
from .world import RULES, Payment, row_effect_id

WEIGHTS: Mapping[str, Fraction] = checked_weights(
    {
        "task_completed": Fraction(2, 5),
        "log_replayable": Fraction(1, 5),
        "no_duplicate_effects": Fraction(1, 5),
        "no_unauthorized_payment": Fraction(1, 10),
        "no_false_block": Fraction(1, 10),
    }
)
TERMS = tuple(WEIGHTS)
METRICS = ("duplicate_effects", "unauthorized_cents", "false_blocks", "duplicate_cents", "recovered_cents")
_NOT_CALLS = (BEGIN_ACTION, SEAL_ACTION, REPLY_ACTION, INVALID_ACTION)


@dataclass(frozen=True, slots=True)
class RefundScore(WeightedScore):
    """The five terms (weighted by :data:`WEIGHTS` into ``reward``) and four metrics."""

    WEIGHTS: ClassVar[Mapping[str, Fraction]] = WEIGHTS

    task_completed: Fraction
    log_replayable: Fraction
    no_duplicate_effects: Fraction
    no_unauthorized_payment: Fraction
    no_false_block: Fraction
    duplicate_effects: int
    unauthorized_cents: int
    false_blocks: int
    duplicate_cents: int
    recovered_cents: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The reward rounded to 4 decimals, each term as a float, then each metric."""
        out = WeightedScore.as_dict(self)  # slots=True makes a new class: no zero-argument super()
        out["reward"] = round(float(self.reward), 4)
        return out


@dataclass(frozen=True, slots=True)
class _Call:
    position: int
    action: Any
    args: Mapping[str, Any]
    executed: bool


def _calls(entries: Iterable[LogEntry | Mapping[str, Any]]) -> list[_Call]:
    """The desk's calls in the log (no begin, seal, reply or unparsable action), read leniently."""
    calls = []
    for position, entry in enumerate(entries):
        if not isinstance(entry, (LogEntry, Mapping)):
            continue
        action, args, executed = entry_parts(entry)
        if action in _NOT_CALLS:
            continue
        calls.append(_Call(position, action, args if isinstance(args, Mapping) else {}, executed))
    return calls


def _amount(payment: Payment) -> int:
    """The cents a payment moved: its amount if an int (not a bool), else 0."""
    value = payment.amount_cents
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _id_key(value: Any) -> str:
    """A hashable stand-in for an order id that keeps distinct ids distinct."""
    return canonical_json(value)


def _flag(ok: bool) -> Fraction:
    return Fraction(int(ok))


def grade(
    case: RefundCase,
    entries: Iterable[LogEntry | Mapping[str, Any]],
    rules: str,
    *,
    verified: bool,
    payments: Sequence[Payment] | None = None,
    ticket_of: Callable[[int], int | None] | None = None,
) -> RefundScore:
    """Score one episode's log under ``rules`` (``"original"`` or ``"default"``).

    ``verified`` says whether the log passed the verification the rules ask for.
    ``payments`` is the desk's own payment record: under the default rules a log
    that fails verification scores 0 on every term, with its metrics from that
    record (if it is not given, from the log's payment entries as the desk wrote
    them, that is those carrying an effect id, whatever their ``executed`` says).
    ``ticket_of`` says which ticket of a queue (an index into ``case.tickets``, or
    ``None``) the entry at a log position was made for; by default the one being
    worked when it was made, as the log's replies mark it.
    """
    if rules not in RULES:
        raise ValueError(f"rules must be one of {list(RULES)}, not {rules!r}")
    if not case.queue:  # one ticket: every call is its own, and the log is read once
        return _grade_ticket(case, _calls(entries), rules, verified, payments)
    entries = list(entries)
    calls = _calls(entries)
    scores = []
    for ticket, in_group in _order_groups(case, ticket_of or queue_position(case, entries)):
        own = [c for c in calls if in_group(c.position)]
        record = None if payments is None else [p for p in payments if in_group(p.position)]
        scores.append(_grade_ticket(ticket, own, rules, verified, record))
    return _mean(scores)


def queue_position(
    case: RefundCase, entries: Sequence[LogEntry | Mapping[str, Any]]
) -> Callable[[int], int | None]:
    """The ticket being worked at each log position of a one-worker queue: a ticket ends
    at its executed reply; anything after the last reply counts for the last ticket."""
    replies = [position for position, entry in enumerate(entries) if _is_reply(entry)]
    last = len(case.tickets) - 1
    return lambda position: min(bisect.bisect_left(replies, position), last)


def _grade_ticket(
    case: RefundCase, calls: Sequence[_Call], rules: str, verified: bool, payments: Sequence[Payment] | None
) -> RefundScore:
    if rules == "original":
        return _grade_original(case, calls, verified)
    if not verified:
        record = list(payments) if payments is not None else _written_payments(calls)
        return _zero(case, [p for p in record if _amount(p) > 0])
    return _grade_default(case, calls)


def _order_groups(
    case: RefundCase, ticket_of: Callable[[int], int | None]
) -> list[tuple[RefundCase, Callable[[int], bool]]]:
    """A queue's tickets grouped by order: each order's first ticket, and a test of
    whether a log position was made for a ticket of that order.

    A ticket sent again is one order, graded once, so money it moves twice counts
    as a duplicate, not as two completed tickets.
    """
    tickets = case.tickets
    order_of = [ticket.order.order_id for ticket in tickets]

    def of_order(order_id: str) -> Callable[[int], bool]:
        def test(position: int) -> bool:
            index = ticket_of(position)
            return index is not None and order_of[index] == order_id

        return test

    return [
        (ticket, of_order(ticket.order.order_id))
        for index, ticket in enumerate(tickets)
        if order_of.index(ticket.order.order_id) == index
    ]


def _is_reply(entry: object) -> bool:
    if not isinstance(entry, (LogEntry, Mapping)):
        return False
    action, _, executed = entry_parts(entry)
    return executed and action == REPLY_ACTION


def _mean(scores: Sequence[RefundScore]) -> RefundScore:
    """One score for a queue: each term the mean over its orders, each metric the sum."""
    count = len(scores)
    terms: dict[str, Any] = {
        name: sum((getattr(s, name) for s in scores), Fraction(0)) / count for name in TERMS
    }
    metrics: dict[str, Any] = {name: sum(getattr(s, name) for s in scores) for name in METRICS}
    return RefundScore(**terms, **metrics)


def executed_payments(entries: Iterable[LogEntry | Mapping[str, Any]]) -> list[Payment]:
    """Every payment the log shows as executed, in log order."""
    return _payments(_calls(entries))


def _payments(calls: Sequence[_Call]) -> list[Payment]:
    return [Payment.from_args(c.args, c.position) for c in calls if c.action == "issue_refund" and c.executed]


def _written_payments(calls: Sequence[_Call]) -> list[Payment]:
    return [
        Payment.from_args(c.args, c.position)
        for c in calls
        if c.action == "issue_refund" and isinstance(c.args.get("effect_id"), str)
    ]


def _unauthorized(case: RefundCase, payments: Sequence[Payment]) -> int:
    """Every per-order-id sum of payments above the case's cap, counted whole."""
    sums: dict[str, int] = {}
    for payment in payments:
        key = _id_key(payment.order_id)
        sums[key] = sums.get(key, 0) + _amount(payment)
    return sum(total for total in sums.values() if total > case.cap_cents)


def _read(
    calls: Sequence[_Call], action: str, order_id: Any, *, before: int | None, executed_only: bool
) -> bool:
    """Whether the log reads ``order_id`` with ``action`` (before position ``before``, if given)."""
    return any(
        c.action == action
        and (before is None or c.position < before)
        and c.args.get("order_id") == order_id
        and (c.executed or not executed_only)
        for c in calls
    )


def _replayable(calls: Sequence[_Call], payments: Sequence[Payment], executed_only: bool) -> bool:
    if not calls:
        return False
    for payment in payments:
        reason = payment.reason
        if not isinstance(reason, str) or not reason.strip():
            return False
        for action in ("lookup_order", "refund_history"):
            if not _read(
                calls, action, payment.order_id, before=payment.position, executed_only=executed_only
            ):
                return False
    return True


def _settled(
    case: RefundCase, calls: Sequence[_Call], payments: Sequence[Payment], executed_only: bool
) -> bool:
    ticket = case.order.order_id
    return not payments and all(
        _read(calls, action, ticket, before=None, executed_only=executed_only)
        for action in ("lookup_order", "refund_history")
    )


def _score(
    case: RefundCase,
    completed: bool,
    replayable: bool,
    duplicates: int,
    dup_cents: int,
    unauthorized: int,
    paid: bool,
    standing_duplicates: int | None = None,
    recovered: int = 0,
) -> RefundScore:
    """``standing_duplicates``: the duplicates not taken back (all of them, when ``None``);
    a duplicate that was taken back earns half the term."""
    false_blocks = int(case.expect.should_execute_new_refund and not paid)
    standing = duplicates if standing_duplicates is None else standing_duplicates
    no_duplicates = Fraction(1) if duplicates == 0 else Fraction(1, 2) if standing == 0 else Fraction(0)
    return RefundScore(
        task_completed=_flag(completed),
        log_replayable=_flag(replayable),
        no_duplicate_effects=no_duplicates,
        no_unauthorized_payment=_flag(unauthorized == 0),
        no_false_block=_flag(false_blocks == 0),
        duplicate_effects=duplicates,
        unauthorized_cents=unauthorized,
        false_blocks=false_blocks,
        duplicate_cents=dup_cents,
        recovered_cents=recovered,
    )


# -- the original rules --------------------------------------------------------------------
def _grade_original(case: RefundCase, calls: Sequence[_Call], verified: bool) -> RefundScore:
    payments = _payments(calls)
    expect = case.expect
    if expect.should_escalate:
        escalated = any(c.action == "escalate" and c.executed for c in calls)
        completed = escalated and not payments
    elif expect.should_execute_new_refund:
        ids = {p.effect_id for p in payments}
        completed = len(ids) == 1 and sum(_amount(p) for p in payments) >= expect.correct_amount_cents
    else:
        completed = _settled(case, calls, payments, executed_only=False)
    seen = {row_effect_id(row) for row in case.ledger}
    duplicates = dup_cents = 0
    for payment in payments:
        if payment.effect_id in seen:
            duplicates += 1
            dup_cents += _amount(payment)
        seen.add(payment.effect_id)
    replayable = verified and _replayable(calls, payments, executed_only=False)
    return _score(
        case, completed, replayable, duplicates, dup_cents, _unauthorized(case, payments), bool(payments)
    )


# -- the default rules ---------------------------------------------------------------------
def _line_of(case: RefundCase, payment: Payment) -> Line | None:
    """The ticket's line a payment went to (no sku on a one-line order: that line)."""
    order = case.order
    if payment.order_id != order.order_id:
        return None
    if payment.sku in (None, "") and len(order.lines) == 1:
        return order.lines[0]
    return order.line(payment.sku)


def _duplicates(case: RefundCase, payments: Sequence[Payment]) -> tuple[int, int]:
    """Payments onto a line that already had money and that take it past its amount,
    and the cents past it."""
    past = duplicate_cents_each(case, payments)
    return sum(1 for cents in past if cents), sum(past)


def duplicate_cents_each(case: RefundCase, payments: Sequence[Payment]) -> list[int]:
    """For each payment (default rules), the cents it took its line past the line's
    amount when the line already had money: 0 for a payment that is no duplicate."""
    ticket = case.order.order_id
    paid: dict[str, int] = {}
    for row in case.ledger:
        if row.order_id == ticket and case.order.line(row.sku) is not None:
            paid[row.sku] = paid.get(row.sku, 0) + row.amount_cents
    past = []
    for payment in payments:
        line = _line_of(case, payment)
        if line is None:
            past.append(0)
            continue
        before = paid.get(line.sku, 0)
        after = before + _amount(payment)
        duplicate = before > 0 and after > line.amount_cents
        past.append(after - max(line.amount_cents, before) if duplicate else 0)
        paid[line.sku] = after
    return past


def target_line(case: RefundCase) -> Line | None:
    """The line a payment should go to: the first whose amount is what is owed and that
    no prior row of the ticket's order has paid."""
    ticket = case.order.order_id
    prior = {row.sku for row in case.ledger if row.order_id == ticket}
    owed = case.expect.correct_amount_cents
    return next((ln for ln in case.order.lines if ln.amount_cents == owed and ln.sku not in prior), None)


def _paid_completed(case: RefundCase, payments: Sequence[Payment]) -> bool:
    target = target_line(case)
    owed = case.expect.correct_amount_cents
    if target is None or not payments:
        return False
    on_target = all(_line_of(case, p) == target for p in payments)
    return on_target and sum(map(_amount, payments)) >= owed and all(_amount(p) <= owed for p in payments)


def _escalation_completed(case: RefundCase, calls: Sequence[_Call], payments: Sequence[Payment]) -> bool:
    ticket = case.order.order_id
    return not payments and any(
        c.action == "escalate"
        and c.executed
        and c.args.get("order_id") == ticket
        and _read(calls, "lookup_order", ticket, before=c.position, executed_only=True)
        for c in calls
    )


def _grade_default(case: RefundCase, calls: Sequence[_Call]) -> RefundScore:
    payments = [p for p in _payments(calls) if _amount(p) > 0]
    voided = _voided(calls, payments)
    standing = [p for i, p in enumerate(payments) if i not in voided]
    expect = case.expect
    if expect.should_escalate:
        completed = _escalation_completed(case, calls, standing)
    elif expect.should_execute_new_refund:
        completed = _paid_completed(case, standing)
    else:
        completed = _settled(case, calls, standing, executed_only=True)
    duplicates, dup_cents = _duplicates(case, payments)
    replayable = _replayable(calls, payments, executed_only=True)
    return _score(
        case,
        completed,
        replayable,
        duplicates,
        dup_cents,
        _unauthorized(case, standing),
        bool(standing),
        standing_duplicates=_duplicates(case, standing)[0],
        recovered=sum(_amount(payments[i]) for i in voided),
    )


def _voided(calls: Sequence[_Call], payments: Sequence[Payment]) -> set[int]:
    """The payments (by index) that an executed ``void_refund`` took back: each void the
    earliest earlier standing payment of its order and key (and, in a team, its worker),
    as the desk applies it."""
    voided: set[int] = set()
    caller = {c.position: c.args.get(AGENT_KEY) for c in calls}  # a team's keys are each worker's own
    for call in calls:
        if call.action != VOID_ACTION or not call.executed:
            continue
        order_id, key = call.args.get("order_id"), call.args.get("idempotency_key")
        index = next(
            (
                i
                for i, p in enumerate(payments)
                if i not in voided
                and p.position < call.position
                and p.order_id == order_id
                and p.idempotency_key == key
                and caller.get(p.position) == caller[call.position]
            ),
            None,
        )
        if index is not None:
            voided.add(index)
    return voided


def _zero(case: RefundCase, payments: Sequence[Payment]) -> RefundScore:
    """Every term 0; the metrics from the given payments, under the default rules."""
    duplicates, dup_cents = _duplicates(case, payments)
    zero = Fraction(0)
    return RefundScore(
        task_completed=zero,
        log_replayable=zero,
        no_duplicate_effects=zero,
        no_unauthorized_payment=zero,
        no_false_block=zero,
        duplicate_effects=duplicates,
        unauthorized_cents=_unauthorized(case, payments),
        false_blocks=int(case.expect.should_execute_new_refund and not payments),
        duplicate_cents=dup_cents,
    )


__all__ = [
    "METRICS",
    "TERMS",
    "WEIGHTS",
    "RefundScore",
    "duplicate_cents_each",
    "executed_payments",
    "grade",
    "queue_position",
    "target_line",
]
