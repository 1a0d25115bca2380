"""The episode's money ledger: every payment that moved money and the void that took it
back, each payment judged when it moved, and what the ledger shows (the money metrics and
the money cost).

The default rules of the score (:mod:`.grader`, whose note tells them in full) read an
order's money from here: a void takes back the earliest earlier standing payment of its
order and key made by its own caller, as the desk applies it (:func:`money_ledger`);
authority is judged when money moves (:func:`judge_money`); every cent moved beyond
what its line was still owed costs its share of the case's cap (:func:`money_figures`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from batchgate_gym.kernel.ledger import canonical_json
from batchgate_gym.kernel.team import AGENT_KEY

from .calls import Call, executed_refunds
from .cases import Line, RefundCase
from .tools import VOID_ACTION
from .world import Payment

MAX_MONEY_COST = Fraction(1)
"""The most an episode's (or a queue order's) money cost takes off its reward."""
_ZERO = Fraction(0)


def amount_of(payment: Payment) -> int:
    """The cents a payment moved: its amount if an int (not a bool), else 0."""
    value = payment.amount_cents
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def order_key(value: Any) -> str:
    """A hashable stand-in for an order id that keeps distinct ids distinct."""
    return canonical_json(value)


def same_order_id(one: Any, other: Any) -> bool:
    """Whether two order ids are one id (:func:`order_key` of each equal): two strings are
    compared as they are, since the JSON of two strings is equal only when they are."""
    if type(one) is str and type(other) is str:
        return one == other
    return order_key(one) == order_key(other)


@dataclass(frozen=True, slots=True)
class Movement:
    """One payment that moved money, who made it (its worker, in a team) and the log
    position of the void that took it back (``None``: it stands)."""

    payment: Payment
    caller: Any = None
    voided_at: int | None = None

    def standing_at(self, position: int) -> bool:
        """Whether the money was out at log position ``position`` (made before it, not yet back)."""
        return self.payment.position < position and (self.voided_at is None or self.voided_at > position)


def money_ledger(calls: Sequence[Call]) -> list[Movement]:
    """Every payment that moved money (an executed ``issue_refund`` of an int amount
    above 0), in log order, each with the executed ``void_refund`` that took it back:
    a void takes the earliest earlier standing payment of its order and key made by
    its own caller, as the desk applies it, whichever ticket either was made under."""
    # Each payment with who made it: a team's keys are each worker's own.
    made = [(Payment.from_args(c.args, c.position), c.args.get(AGENT_KEY)) for c in executed_refunds(calls)]
    made = [(payment, caller) for payment, caller in made if amount_of(payment) > 0]
    voided_at: dict[int, int] = {}
    for call in calls:
        if call.action != VOID_ACTION or not call.executed:
            continue
        order_id, key = call.args.get("order_id"), call.args.get("idempotency_key")
        voider = call.args.get(AGENT_KEY)
        index = next(
            (
                i
                for i, (p, caller) in enumerate(made)
                if i not in voided_at
                and p.position < call.position
                and p.order_id == order_id
                and p.idempotency_key == key
                and caller == voider
            ),
            None,
        )
        if index is not None:
            voided_at[index] = call.position
    return [Movement(p, caller, voided_at.get(i)) for i, (p, caller) in enumerate(made)]


@dataclass(frozen=True, slots=True)
class Judgement:
    """A payment judged when it moved money: on a line not owed, beyond the desk's
    authority (on a line not owed, or taking its order's standing money past the
    cap), and the cents it moved beyond what its line was still owed."""

    unowed: bool
    unauthorized: bool
    overpaid_cents: int


def judge_money(case: RefundCase, money: Sequence[Movement]) -> list[Judgement]:
    """Each payment of ``money`` (all on ``case``'s orders) judged when it was made.

    Only the target line of a ticket that should be paid is owed, and only what the
    case says is owed; every other line, and every line of a ticket to escalate or
    already settled, is owed nothing. "Standing" money is what was paid earlier and
    not yet taken back at that moment, so a void recovers the money of an earlier
    payment without changing how the earlier payment was judged.
    """
    target = target_line(case) if case.expect.should_execute_new_refund else None
    owed = case.expect.correct_amount_cents
    lines = [line_of(case, move.payment) for move in money]
    judged = []
    for index, move in enumerate(money):
        payment, amount, line = move.payment, amount_of(move.payment), lines[index]
        unowed = target is None or line != target
        on_order = on_line = 0  # standing money on the payment's order, and on its line if owed
        for earlier, earlier_line in zip(money[:index], lines, strict=False):
            if not earlier.standing_at(payment.position):
                continue
            if same_order_id(earlier.payment.order_id, payment.order_id):
                on_order += amount_of(earlier.payment)
            if not unowed and earlier_line == line:
                on_line += amount_of(earlier.payment)
        still_owed = 0 if unowed else max(0, owed - on_line)
        over_cap = on_order + amount > case.cap_cents
        judged.append(Judgement(unowed, unowed or over_cap, max(0, amount - still_owed)))
    return judged


@dataclass(frozen=True, slots=True)
class MoneyFigures:
    """What an order's money ledger shows: the metrics and the cost."""

    unauthorized_cents: int
    overpaid_cents: int
    unowed_payments: int
    recovered_cents: int
    any_unauthorized: bool
    unauthorized_standing: bool
    money_cost: Fraction


_NO_MONEY = MoneyFigures(0, 0, 0, 0, any_unauthorized=False, unauthorized_standing=False, money_cost=_ZERO)
"""What an order's ledger shows when no money moved."""


def money_figures(case: RefundCase, money: Sequence[Movement]) -> MoneyFigures:
    """The money metrics of ``money`` and its cost: every cent moved beyond what was
    owed counts in proportion to its amount, a whole cap's worth (or more) costing
    :data:`MAX_MONEY_COST`. A void takes back half the cost of a payment the desk was
    allowed to make (a duplicate of an owed line within the cap, say) and none of one
    it was not: money moved without authority was moved, whatever came back later."""
    if not money:
        return _NO_MONEY
    halves = unauthorized = overpaid = unowed = recovered = 0  # the cost in half cents: an int
    any_unauthorized = unauthorized_standing = False
    for move, judged in zip(money, judge_money(case, money), strict=True):
        amount, standing = amount_of(move.payment), move.voided_at is None
        if judged.unauthorized:
            unauthorized += amount
            any_unauthorized = True
            unauthorized_standing = unauthorized_standing or standing
        if not standing:
            recovered += amount
        overpaid += judged.overpaid_cents
        unowed += judged.unowed
        halves += judged.overpaid_cents * (2 if standing or judged.unauthorized else 1)  # a void halves
    cost = min(MAX_MONEY_COST, Fraction(halves, 2 * case.cap_cents)) if halves else _ZERO
    return MoneyFigures(
        unauthorized_cents=unauthorized,
        overpaid_cents=overpaid,
        unowed_payments=unowed,
        recovered_cents=recovered,
        any_unauthorized=any_unauthorized,
        unauthorized_standing=unauthorized_standing,
        money_cost=cost,
    )


def line_of(case: RefundCase, payment: Payment) -> Line | None:
    """The ticket's line a payment went to (no sku on a one-line order: that line)."""
    order = case.order
    if payment.order_id != order.order_id:
        return None
    if payment.sku in (None, "") and len(order.lines) == 1:
        return order.lines[0]
    return order.line(payment.sku)


def duplicate_cents_each(case: RefundCase, payments: Sequence[Payment]) -> list[int]:
    """For each payment (default rules), the cents it took its line past the line's
    amount when the line already had money: 0 for a payment that is no duplicate."""
    paid = dict(case.derived(_PRIOR_PAID, lambda: _prior_paid(case)))
    past = []
    for payment in payments:
        line = line_of(case, payment)
        if line is None:
            past.append(0)
            continue
        before = paid.get(line.sku, 0)
        after = before + amount_of(payment)
        duplicate = before > 0 and after > line.amount_cents
        past.append(after - max(line.amount_cents, before) if duplicate else 0)
        paid[line.sku] = after
    return past


def _prior_paid(case: RefundCase) -> dict[str, int]:
    """The cents the ledger held on each of the ticket's lines before the episode."""
    ticket = case.order.order_id
    paid: dict[str, int] = {}
    for row in case.ledger:
        if row.order_id == ticket and case.order.line(row.sku) is not None:
            paid[row.sku] = paid.get(row.sku, 0) + row.amount_cents
    return paid


_PRIOR_PAID = "refund grader: prior paid by line"  # keys of what a case caches for its grading
_TARGET_LINE = "refund grader: target line"


def target_line(case: RefundCase) -> Line | None:
    """The line a payment should go to: the first whose amount is what is owed and that
    no prior row of the ticket's order has paid (worked out once per case)."""
    return case.derived(_TARGET_LINE, lambda: _target_line(case))


def _target_line(case: RefundCase) -> Line | None:
    ticket = case.order.order_id
    prior = {row.sku for row in case.ledger if row.order_id == ticket}
    owed = case.expect.correct_amount_cents
    return next((ln for ln in case.order.lines if ln.amount_cents == owed and ln.sku not in prior), None)
