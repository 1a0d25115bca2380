"""Legitimate edges: rows that look suspicious but meet the contract exactly.

These give the clean families their bite: an agent that quarantines every refund,
every amount at the cap or every date on the window's last day loses a clean
batch. Each edge rewrites rows in place, like a planted defect, and keeps them
clean.
"""

from __future__ import annotations

from ..contract import MAX_AMOUNT, WINDOW_END, WINDOW_START
from .context import CaseContext
from .defects import Free, Planter, Rows, as_sale
from .rows import amount_text, plausible_cents


def refunds(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """Two or three refunds, each with a negative amount."""
    for i in free.some(ctx.rng, 2, 3):
        rows[i]["status"] = "refunded"
        rows[i]["amount"] = amount_text(-plausible_cents(ctx.rng))


def at_cap(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A sale of exactly the cap, 50000.00 (the cap is inclusive)."""
    (i,) = free.take()
    as_sale(ctx.rng, rows[i])["amount"] = amount_text(MAX_AMOUNT * 100)


def smallest_sale(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A sale of 0.01, the smallest amount above zero."""
    (i,) = free.take()
    as_sale(ctx.rng, rows[i])["amount"] = amount_text(1)


def refund_floor(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A refund of exactly -50000.00 (the floor is inclusive)."""
    (i,) = free.take()
    rows[i]["status"] = "refunded"
    rows[i]["amount"] = amount_text(-MAX_AMOUNT * 100)


def last_day(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """One to three orders on the window's last day."""
    for i in free.some(ctx.rng, 1, 3):
        rows[i]["order_date"] = WINDOW_END


def first_day(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """One to three orders on the window's first day."""
    for i in free.some(ctx.rng, 1, 3):
        rows[i]["order_date"] = WINDOW_START


def signup_last_day(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """New customers who signed up on the window's last day (still allowed)."""
    for i in free.some(ctx.rng, 1, 2):
        rows[i]["signup_date"] = WINDOW_END


EDGES: dict[str, tuple[str, int, Planter]] = {
    "refunds": ("orders", 2, refunds),
    "at-cap": ("orders", 1, at_cap),
    "smallest-sale": ("orders", 1, smallest_sale),
    "refund-floor": ("orders", 1, refund_floor),
    "last-day": ("orders", 1, last_day),
    "first-day": ("orders", 1, first_day),
    "signup-last-day": ("customers", 1, signup_last_day),
}
