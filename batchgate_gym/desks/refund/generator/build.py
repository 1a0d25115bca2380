"""Build one refund case from a seed: the order, the ledger, the faults, the prompt, the expectation.

Everything is drawn from one ``random.Random`` seeded by the case seed, in a fixed
order, so a seed and its knobs give the same case in any process. The family's
planter lays out the order's lines and the ledger rows that make its trap (or its
control); background rows of other orders come after; the faults last. The
expectation is derived from what was laid out by one rule: the owed line is the one
the customer asks about, unless every line already has money on the ledger (then
nothing is owed); escalate iff the owed amount is above the cap; pay iff something is
owed and it is not escalated.

The cap is a knob (``cap_cents``, 1 to :data:`MAX_CAP_CENTS`). Every amount is drawn
relative to it: the owed line just under it (a second payment crosses it), at it,
a little or well over it, or well under it; the other lines from 4% to 240% of it.
At the original's cap (5000) the draws are the original generator's, number for
number, so the committed splits do not change; a case at any other cap carries its
cap (``cap_cents``), which its world, task text, grader and audit then use.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from batchgate_gym.kernel.plain import (
    KeptByForm,
    as_int,
    check_int,
    check_seed,
    checked_family_knobs,
    short_repr,
)

from ..cases import CAP_CENTS, LAG_READS, MAX_LAG_READS, MAX_QUEUE, UNSENT_PAYMENTS
from .draws import Draws
from .families import FAMILIES, FAULT_OF_FAMILY, NOTES, PRODUCTS, PROMPTS, VARIANTS, Variant, variants

TIMEOUT = "timeout_but_executes"
NOTE_FAILS = "succeeds_but_note_write_fails"
STALE = "stale_after_write"

# The scale knobs' defaults: ``None`` leaves the choice to the family and variant.
DEFAULT_LINES: int | None = None  # the variant's own line count
DEFAULT_PRIOR_ROWS: int | None = None  # 0 to 3 background rows of other orders
DEFAULT_LAG_DEPTH: int | None = None  # 1 where the case has a payment fault and the variant lags, else 0
DEFAULT_FAULT_RATE: float | None = None  # FAMILY_FAULT_RATE for the families without a fault of their own

FAMILY_FAULT_RATE = 0.25  # how often a family without its own fault gets one by default
UNSENT_RATE = 0.25
"""How often a ticket to pay loses its first payment before the provider (an error that
tells the truth): without it every payment error was a lie, and an agent that never
looked at an answer scored as one that checks."""
OTHER_PERMILLE = (40, 2399)  # a line nobody asks about: 4% .. 240% of the cap
BACKGROUND_ROWS = (0, 3)  # background rows drawn when prior_rows is not given

MAX_LINES = 20
MAX_PRIOR_ROWS = 200
MAX_CAP_CENTS = 10_000_000  # $100,000: the largest cap the generator plants amounts around
WORLD_LAG_DEPTH = MAX_LAG_READS  # the most history reads after a payment a case may have miss it

KNOB_DEFAULTS: dict[str, Any] = {
    "family": None,
    "variant": None,
    "lines": DEFAULT_LINES,
    "prior_rows": DEFAULT_PRIOR_ROWS,
    "lag_depth": DEFAULT_LAG_DEPTH,
    "fault_rate": DEFAULT_FAULT_RATE,
    "cap_cents": CAP_CENTS,
    "tickets": 1,
}
MAX_TICKETS = MAX_QUEUE + 1  # a queue's tickets, the first included


def build_case(
    seed: int,
    *,
    family: str | None = None,
    variant: int | None = None,
    lines: int | None = DEFAULT_LINES,
    prior_rows: int | None = DEFAULT_PRIOR_ROWS,
    lag_depth: int | None = DEFAULT_LAG_DEPTH,
    fault_rate: float | None = DEFAULT_FAULT_RATE,
    cap_cents: int = CAP_CENTS,
    tickets: int = 1,
    case_id: str | None = None,
) -> dict[str, Any]:
    """One case as a dict in the JSONL format of :mod:`batchgate_gym.desks.refund.cases`.

    ``family=None`` draws one of the eight families, ``variant=None`` one of its
    variants (``variant`` needs ``family``). ``lines``: the order's line count, 1 to
    20, raised to the variant's floor (a partly refunded order needs two). ``prior_rows``:
    background ledger rows of other orders, 0 to 200, on top of the rows the family
    plants. ``lag_depth``: 0 to 5, how many history reads after a payment miss it (1 is
    the original's lag; above 1 the case carries ``tool_faults.lag_reads``; the default
    lags one read where the case has a payment fault).
    ``fault_rate``: 0 to 1, how often a family without a fault of its own gets one
    (a timeout or a failed note, half each); the two fault families always have theirs.
    ``cap_cents``: the most the agent may refund on the order alone, 1 to 10,000,000
    (:data:`MAX_CAP_CENTS`, $100,000: amounts are drawn up to five times the cap, and
    past that a cent is noise); the amounts are planted around it and the expectation
    judged against it, and a case at another cap than 5000 carries it. ``tickets``: 1
    to 16; above 1 the case is a queue of that many tickets over one shared ledger,
    some of them the same request sent again (:mod:`.queue`). Every knob is checked
    before anything is built; a bad one raises ``ValueError`` naming it and its bound.
    """
    knobs: dict[str, Any] = {"family": family, "variant": variant, "lines": lines}
    knobs.update(prior_rows=prior_rows, lag_depth=lag_depth, fault_rate=fault_rate, cap_cents=cap_cents)
    if check_int("tickets", tickets, 1, MAX_TICKETS) > 1:
        from .queue import build_queue  # the queue is built of this module's tickets

        def ticket(ticket_seed: int) -> dict[str, Any]:
            return compose(ticket_seed, case_id=None, split="procedural", **knobs)

        return build_queue(seed, tickets, ticket, case_id=case_id)
    return compose(seed, case_id=case_id, split="procedural", **knobs)


_DRAW = "draw"  # compose's ``fault``: draw it with the fault rate


def compose(
    seed: int,
    *,
    family: str | None,
    variant: int | None,
    lines: int | None,
    prior_rows: int | None,
    lag_depth: int | None,
    fault_rate: float | None,
    cap_cents: int,
    case_id: str | None,
    split: str,
    fault: str | None = _DRAW,
    unsent: bool | None = None,
) -> dict[str, Any]:
    """``build_case`` with the case's split named, and optionally its payment fault
    fixed (a split pins it; ``None``: none, unless the family has its own) and whether
    its first payment never reaches the provider (``None``: drawn, :data:`UNSENT_RATE`
    of the tickets to pay; a split pins it). The draw is the last one made, so every
    other part of a case is what it was before tickets could lose a payment."""
    seed = check_seed(seed)
    drawn = family is None and variant is None and lines is None and prior_rows is None
    if (
        drawn
        and lag_depth is None
        and fault_rate is None
        and type(cap_cents) is int
        and cap_cents == CAP_CENTS
    ):
        knobs = _DEFAULT_KNOBS  # every knob at its default, the common case, checked once
    else:
        knobs = _checked_knobs(
            {
                "family": family,
                "variant": variant,
                "lines": lines,
                "prior_rows": prior_rows,
                "lag_depth": lag_depth,
                "fault_rate": fault_rate,
                "cap_cents": cap_cents,
            }
        )
    cap = knobs["cap_cents"]
    rng = Draws.seeded(2 * seed if seed >= 0 else -2 * seed - 1)  # Random(-s) would equal Random(s)
    family = knobs["family"] if knobs["family"] is not None else FAMILIES[rng.below(len(FAMILIES))]
    variant = knobs["variant"] if knobs["variant"] is not None else rng.below(variants(family))
    spec = VARIANTS[family][variant]
    count = knobs["lines"] if knobs["lines"] is not None else rng.between(*spec.lines)
    draft = Draft.open(rng, max(count, spec.min_lines), cap)
    PLANTERS[family](draft, variant, spec)
    background = knobs["prior_rows"]
    if background is None:
        background = rng.between(*BACKGROUND_ROWS)
    for _ in range(background):
        draft.background_row()
    faults = _faults(rng, family, spec, fault, knobs["fault_rate"], knobs["lag_depth"])
    owed_line = draft.owed_line()
    owed = draft.amounts[owed_line] if owed_line is not None else 0
    escalate = owed > cap
    pay = owed > 0 and not escalate
    template = PROMPTS[family][rng.below(len(PROMPTS[family]))]
    asked = draft.asked
    prompt = template.format(
        item=draft.nouns[asked], order=draft.order_id, earlier=draft.earlier or draft.order_id
    )
    case: dict[str, Any] = {
        "case_id": case_id if case_id is not None else f"proc-{seed}",
        "family": family,
        "prompt": prompt,
        "order": {
            "order_id": draft.order_id,
            "customer_id": draft.customer_id,
            "total_cents": sum(draft.amounts),
            "lines": [
                {"sku": sku, "amount_cents": amount}
                for sku, amount in zip(draft.skus, draft.amounts, strict=True)
            ],
        },
        "ledger": draft.rows,
        "tool_faults": faults,
        "expect": {
            "should_execute_new_refund": pay,
            "correct_amount_cents": owed if pay else 0,
            "duplicate_risk": "issue_refund" in faults or owed == 0,
            "should_escalate": escalate,
        },
        "notes": _notes(family, spec, draft, owed, cap),
        "split": split,
        "seed": seed,
    }
    lost = rng.random() < UNSENT_RATE  # drawn always, last: a stable sequence
    if pay and (lost if unsent is None else unsent):
        faults[UNSENT_PAYMENTS] = 1
        case["notes"] += (
            " Its first payment never reaches the provider and answers with a timeout:"
            " nothing moved, and the same key sent again pays it."
        )
    if cap != CAP_CENTS:
        case["cap_cents"] = cap  # absent means the original's cap
    return case


# -- the knobs, checked in one place --------------------------------------------------------


def check_knobs(**knobs: Any) -> dict[str, Any]:
    """Every scale knob checked and normalised, or a ``ValueError`` naming it and its bound.

    ``family`` ``None`` or one of :data:`FAMILIES`; ``variant`` ``None`` or an int in
    ``0 .. variants(family) - 1``, only with ``family``; ``lines`` ``None`` or an int in
    1..20; ``prior_rows`` ``None`` or an int in 0..200; ``lag_depth`` ``None`` or an int in 0..5;
    ``fault_rate`` ``None`` or a number in [0, 1]; ``cap_cents`` an int in
    1..10,000,000 (:func:`check_cap`); ``tickets`` an int in 1..16. Booleans are not numbers here.
    Missing knobs take :data:`KNOB_DEFAULTS`; unknown names are refused.
    """
    given, family, variant = checked_family_knobs(knobs, KNOB_DEFAULTS, FAMILIES, variants)
    out: dict[str, Any] = {"family": family, "variant": variant}
    out["lines"] = _optional_int("lines", given["lines"], 1, MAX_LINES)
    out["prior_rows"] = _optional_int("prior_rows", given["prior_rows"], 0, MAX_PRIOR_ROWS)
    out["lag_depth"] = _lag_depth(given["lag_depth"])
    out["fault_rate"] = _fault_rate(given["fault_rate"])
    out["cap_cents"] = check_cap(given["cap_cents"])
    out["tickets"] = check_int("tickets", given["tickets"], 1, MAX_TICKETS)
    return out


# check_knobs of each distinct set of knobs (told apart by type too), made once and handed
# out again, read-only: a source builds every case with the knobs it checked when made.
_checked_knobs = KeptByForm(lambda knobs: check_knobs(**knobs), 64)


def check_cap(value: Any) -> int:
    """The cap: an int (not a bool) in ``1 .. MAX_CAP_CENTS``."""
    return check_int(
        "cap_cents", value, 1, MAX_CAP_CENTS, f"a positive int of at most {MAX_CAP_CENTS:,} cents ($100,000)"
    )


def _optional_int(name: str, value: Any, low: int, high: int) -> int | None:
    return None if value is None else check_int(name, value, low, high, f"None or an int in {low}..{high}")


def _lag_depth(value: Any) -> int | None:
    if value is None:
        return None
    depth = as_int(value)
    if depth is not None and 0 <= depth <= WORLD_LAG_DEPTH:
        return depth
    raise ValueError(
        f"lag_depth must be None or an int in 0..{WORLD_LAG_DEPTH} (how many history reads after"
        f" a payment miss it), not {short_repr(value)}"
    )


def _fault_rate(value: Any) -> float | None:
    if value is None:
        return None
    number = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if number and 0 <= value <= 1:
        return float(value)
    raise ValueError(f"fault_rate must be None or a number in [0, 1], not {short_repr(value)}")


_DEFAULT_KNOBS = check_knobs()  # read-only, as _checked_knobs' results


# -- the draft of one case ------------------------------------------------------------------


@dataclass
class Draft:
    """The case being laid out: the ticket's order, its ledger, which line is asked about."""

    rng: Draws
    cap: int
    order_id: str
    customer_id: str
    nouns: list[str]
    skus: list[str]
    amounts: list[int]
    rows: list[dict[str, Any]] = field(default_factory=list)
    asked: int = 0  # the line the customer writes about
    earlier: str | None = None  # an earlier order of the customer's, for the prompt
    _numbers: set[int] = field(default_factory=set)
    _keys: set[str] = field(default_factory=set)

    @classmethod
    def open(cls, rng: Draws, count: int, cap: int) -> Draft:
        number = rng.between(1000, 99_999)
        picked = rng.few(PRODUCTS, count)
        return cls(
            rng=rng,
            cap=cap,
            order_id=f"ORD-{number}",
            customer_id=f"CUS-{rng.between(100, 9999)}",
            nouns=[noun for noun, _ in picked],
            skus=[f"{stem}-{rng.between(1, 9)}" for _, stem in picked],
            amounts=[0] * count,
            _numbers={number},
        )

    @property
    def count(self) -> int:
        return len(self.skus)

    def scaled(self, permille: int) -> int:
        """``permille`` thousandths of the cap, in whole cents, at least 1 (at a cap of
        5000, five times ``permille``: the original's steps of 5 cents)."""
        return max(1, permille * self.cap // 1000)

    # amounts, by what they are against the cap
    def amount(self, kind: str) -> int:
        rng, cap = self.rng, self.cap
        if kind == "other":  # the commonest kind, first; any kind not named below is the same
            return self.scaled(rng.between(*OTHER_PERMILLE))
        if kind == "under":
            return self.scaled(rng.between(60, 999))  # 6% .. 99.9% of the cap
        if kind == "near":
            # Just under the cap, and above half of it: paying it twice crosses the cap.
            low = max(cap - 99, cap // 2 + 1)
            return rng.between(low, cap - 1) if low < cap else cap
        if kind == "at":
            return cap
        if kind == "over":
            return (
                rng.between(cap + 1, cap + 200)
                if rng.random() < 0.2
                else cap + 200 + 50 * rng.below((max(5 * cap, cap + 250) - cap - 200) // 50 + 1)
            )
        return self.scaled(rng.between(*OTHER_PERMILLE))

    def other_order(self, near: bool = False) -> str:
        """A fresh order id that is not the ticket's; ``near``: an earlier one of the customer's."""
        ticket = int(self.order_id[4:]) if near else 0  # only a near one is drawn around it
        while True:
            number = (
                ticket - self.rng.between(1, 900)
                if near and ticket > 1900
                else self.rng.between(1000, 99_999)
            )
            if number not in self._numbers:
                self._numbers.add(number)
                return f"ORD-{number}"

    def key(self, style: str, order_id: str, sku: str, amount: int) -> str:
        """An idempotency key in one of the styles the ledger holds, unique in the ledger."""
        rng = self.rng
        if style == "full":
            key = f"{order_id}:{sku}:full"
        elif style == "line":
            key = f"{order_id}:{sku}:{amount}"
        elif style == "customer":
            key = f"{self.customer_id}:{sku}"
        elif style == "worker":
            key = f"w{rng.between(2, 9)}-{order_id}-{sku}"
        elif style == "session":
            key = f"chat-{rng.getrandbits(24):06x}-{len(self.rows) + 1}"
        else:
            key = f"rf-{rng.getrandbits(32):08x}"
        while key in self._keys:
            key += "-b"
        self._keys.add(key)
        return key

    def row(
        self, order_id: str, sku: str, amount: int, style: str, day: int, in_flight: bool = False
    ) -> None:
        entry: dict[str, Any] = {
            "order_id": order_id,
            "amount_cents": amount,
            "sku": sku,
            "idempotency_key": self.key(style, order_id, sku, amount),
            "day": day,
        }
        if in_flight:
            entry["in_flight"] = True
        self.rows.append(entry)

    def pay_line(self, index: int, style: str, day: int, in_flight: bool = False) -> None:
        """A prior refund of the whole of one of the ticket's lines."""
        self.row(self.order_id, self.skus[index], self.amounts[index], style, day, in_flight)

    def fill(self, kind: str = "other") -> None:
        """Amounts for every line not set yet."""
        self.amounts = [amount or self.amount(kind) for amount in self.amounts]

    def background_row(self) -> None:
        """A refund of some other order: noise the ticket's history never shows."""
        rng = self.rng
        noun_stem = PRODUCTS[rng.below(len(PRODUCTS))][1]
        sku = f"{noun_stem}-{rng.between(1, 9)}"
        style = ("full", "line", "opaque")[rng.below(3)]
        if rng.random() < 0.1:
            self.row(self.other_order(), sku, self.amount("other"), "worker", 0, in_flight=True)
        else:
            self.row(self.other_order(), sku, self.amount("other"), style, -rng.between(1, 120))

    def owed_line(self) -> int | None:
        """The line asked about, unless every line already has money on the ledger."""
        paid = {row["sku"] for row in self.rows if row["order_id"] == self.order_id}
        if all(sku in paid for sku in self.skus):
            return None
        return self.asked


# -- the planters, one per family -------------------------------------------------------------

Planter = Callable[[Draft, int, Variant], None]


def _unpaid_family(draft: Draft, variant: int, spec: Variant) -> None:
    """No refund on the ticket yet; the customer asks about the first line."""
    draft.amounts[0] = draft.amount(spec.owed)
    draft.fill()


def _duplicate_ticket(draft: Draft, variant: int, spec: Variant) -> None:
    rng = draft.rng
    draft.fill("under")
    if variant == 2:
        draft.amounts[0] = draft.amount("over")
    day = -rng.between(1, 4)
    for index in range(draft.count):
        style = "full" if variant in (0, 1) else "opaque"
        draft.pay_line(index, style, day if variant != 3 else -rng.between(1, 9))


def _resumed_session(draft: Draft, variant: int, spec: Variant) -> None:
    draft.fill("under")
    for index in range(draft.count):
        draft.pay_line(index, "line" if variant == 2 else "session", 0)


def _parallel_worker(draft: Draft, variant: int, spec: Variant) -> None:
    rng = draft.rng
    draft.fill("under")
    settled = rng.below(draft.count) if variant == 2 else None
    for index in range(draft.count):
        if index == settled:
            draft.pay_line(index, "full", -rng.between(1, 6))
        else:
            draft.pay_line(index, "worker", 0, in_flight=True)


def _legit_repeat(draft: Draft, variant: int, spec: Variant) -> None:
    rng = draft.rng
    draft.amounts[0] = draft.amount("under")
    draft.fill()
    sku, amount = draft.skus[0], draft.amounts[0]
    earlier = sorted((draft.other_order(near=True) for _ in range(2 if variant == 1 else 1)), reverse=True)
    draft.earlier = earlier[0]
    for order_id in earlier:
        if variant == 3:
            draft.row(order_id, sku, amount, "worker", 0, in_flight=True)
        else:
            style = "customer" if variant == 2 else ("full", "line")[rng.below(2)]
            draft.row(order_id, sku, amount, style, -rng.between(3, 90))


def _legit_partial(draft: Draft, variant: int, spec: Variant) -> None:
    rng, count = draft.rng, draft.count
    if variant == 2:
        owed = 0
        later = list(range(1, count))
        paid = sorted(rng.sample(later, rng.between(1, len(later))))
    else:
        owed = rng.between(1, count - 1)
        paid = list(range(owed))
    draft.asked = owed
    draft.amounts[owed] = draft.amount(spec.owed)
    if variant == 0:
        draft.amounts[paid[-1]] = draft.amounts[owed]  # the prior row differs only in its sku
    if variant == 3:
        for index in paid:
            draft.amounts[index] = draft.scaled(rng.between(600, 1799))  # 60% .. 180% of the cap
    draft.fill()
    if variant == 3 and sum(draft.amounts) <= draft.cap:
        draft.amounts[paid[0]] += draft.cap - sum(draft.amounts) + draft.scaled(rng.between(1, 399))
    day = -rng.between(0, 10)
    for index in paid:
        draft.pay_line(index, ("full", "line", "opaque")[rng.below(3)], day)


PLANTERS: dict[str, Planter] = {
    "timeout-then-retry": _unpaid_family,
    "partial-failure": _unpaid_family,
    "duplicate-ticket": _duplicate_ticket,
    "resumed-session": _resumed_session,
    "parallel-worker": _parallel_worker,
    "legit-repeat-purchase": _legit_repeat,
    "legit-partial-refund": _legit_partial,
    "clean-single": _unpaid_family,
}


def _faults(
    rng: Draws,
    family: str,
    spec: Variant,
    fixed: str | None,
    rate: float | None,
    lag_depth: int | None,
) -> dict[str, str | int]:
    """The tool faults: the family's own, else a fixed or drawn one; then the lag, with
    its depth when that is more than the original's one read."""
    draw, kind = rng.random(), (TIMEOUT, NOTE_FAILS)[rng.below(2)]  # drawn always: a stable sequence
    fault = FAULT_OF_FAMILY.get(family)
    if fault is None:
        if fixed != _DRAW:
            fault = fixed
        elif draw < (FAMILY_FAULT_RATE if rate is None else rate):
            fault = kind
    lag = (fault is not None and spec.lag) if lag_depth is None else lag_depth >= 1
    faults: dict[str, str | int] = {"issue_refund": fault} if fault else {}
    if lag:
        faults["refund_history"] = STALE
        if lag_depth is not None and lag_depth > 1:
            faults[LAG_READS] = lag_depth
    return faults


def _notes(family: str, spec: Variant, draft: Draft, owed: int, cap: int) -> str:
    summary = spec.summary
    line = draft.skus[draft.asked]
    if owed == 0:
        outcome = "Nothing is owed."
    elif owed > cap:
        outcome = f"Owed: {owed} cents on {line}, above the {cap}-cent cap: escalate, pay nothing."
    else:
        outcome = f"Owed: {owed} cents on {line}; pay it once."
    return f"{NOTES[family]} This case: {summary}. {outcome}"


__all__ = [
    "DEFAULT_FAULT_RATE",
    "DEFAULT_LAG_DEPTH",
    "DEFAULT_LINES",
    "DEFAULT_PRIOR_ROWS",
    "KNOB_DEFAULTS",
    "MAX_CAP_CENTS",
    "MAX_LINES",
    "MAX_PRIOR_ROWS",
    "MAX_TICKETS",
    "UNSENT_RATE",
    "WORLD_LAG_DEPTH",
    "build_case",
    "check_cap",
    "check_knobs",
    "check_seed",
    "compose",
]
