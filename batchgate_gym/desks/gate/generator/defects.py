"""Planted defects: each breaks exactly one contract rule, on rows it takes for itself.

A planter rewrites rows of a clean batch in place and never adds one (a longer
batch would give the defect away). Each takes its rows from ``free``, the
untouched row indices in random order, so two defects never share a row and the
defect row sits anywhere in the batch. A planter changes only what its rule needs: a
status typo row is turned into a sale with a positive amount first, so the typo
is the only thing wrong with it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from .context import CaseContext
from .rows import SALE_STATUSES, SIGNUP_DATES, WINDOW_DATES, amount_text, big_cents, plausible_cents

Rows = list[dict[str, str]]
Planter = Callable[[CaseContext, Rows, "Free"], None]

OUTSIDE_DATES = ("2026-08-24", "2026-08-27", "2026-08-29", "2026-08-30", "2026-08-31", "2026-10-01")
FUTURE_SIGNUPS = ("2026-10-01", "2026-10-02", "2027-09-12", "2027-09-21")
BAD_COUNTRIES = ("UK", "USA", "NL", "us", "kr", "Germany")
UNKNOWN_STATUSES = ("cancelled", "pending", "on_hold")


class NotEnoughRows(RuntimeError):
    """A planter ran out of rows: the row-count floor was computed wrong."""


@dataclass(frozen=True)
class Defect:
    """One kind of planted defect and the single (column, type) it creates."""

    name: str
    table: str
    column: str
    kind: str
    min_rows: int
    plant: Planter
    also_accepted: tuple[str, ...] = ()  # other defect types that read the same cells

    @property
    def pair(self) -> tuple[str, str]:
        return (self.column, self.kind)


class Free:
    """Row indices no defect or edge has taken yet, in random order.

    ``reserve`` rows are held back for the planters still to come, so one that
    takes "two or three" rows never leaves a later one without its row.
    """

    def __init__(self, indices: list[int]) -> None:
        self.indices = indices
        self.reserve = 0

    def __len__(self) -> int:
        return len(self.indices)

    def spare(self) -> int:
        """How many rows this planter may take beyond its minimum."""
        return len(self.indices) - self.reserve

    def take(self, count: int = 1) -> list[int]:
        """``count`` untouched row indices."""
        if len(self.indices) < count:
            raise NotEnoughRows(f"needed {count} free rows, {len(self.indices)} left")
        return [self.indices.pop() for _ in range(count)]

    def some(self, rng: random.Random, low: int, high: int) -> list[int]:
        """Between ``low`` and ``high`` rows, fewer if the batch is short (never below ``low``)."""
        return self.take(max(low, min(rng.randint(low, high), self.spare())))


def as_sale(rng: random.Random, row: dict[str, str]) -> dict[str, str]:
    """Make a refund row an ordinary sale, so a later edit breaks only its own rule."""
    if row["status"] == "refunded":
        row["status"] = rng.choice(SALE_STATUSES)
        row["amount"] = amount_text(plausible_cents(rng))
    return row


def timestamp(rng: random.Random, day: str) -> str:
    """A date sent as a timestamp: sorts inside the window, but is not YYYY-MM-DD."""
    return f"{day}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00"


# --- orders: order_id -------------------------------------------------------------


def resent_orders(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """One to three rows are exact copies of orders already in the warehouse."""
    for i in free.some(ctx.rng, 1, 3):
        rows[i] = ctx.resend_order()


def resent_update(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A warehouse order sent again with a newer status, as if an update were an insert."""
    (i,) = free.take()
    row = ctx.resend_order(sale_only=True)
    if row["status"] != "refunded":
        row["status"] = ctx.rng.choice([s for s in SALE_STATUSES if s != row["status"]])
    rows[i] = row


def repeated_order(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A row of the batch appears twice; the copy replaces another row."""
    source, target = free.take(2)
    rows[target] = dict(rows[source])


def corrected_order(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """An order sent twice in one file, the second time with a corrected amount."""
    source, target = free.take(2)
    row = dict(rows[source])
    cents = plausible_cents(ctx.rng)
    row["amount"] = amount_text(-cents if row["status"] == "refunded" else cents)
    rows[target] = row


# --- orders: customer_id ----------------------------------------------------------


def orphan(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """An order for a customer who exists nowhere (id from the shared range)."""
    (i,) = free.take()
    rows[i]["customer_id"] = ctx.customer_ids.one()


def orphan_several(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """Two or three orders for the same customer who exists nowhere."""
    missing = ctx.customer_ids.one()
    for i in free.some(ctx.rng, 2, 3):
        rows[i]["customer_id"] = missing


def orphan_two(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """Orders for two different customers who exist nowhere."""
    for i, missing in zip(free.take(2), ctx.customer_ids.take(2), strict=True):
        rows[i]["customer_id"] = missing


# --- orders: amount ---------------------------------------------------------------


def blank_amount(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """An empty amount (the loader would cast it to 0)."""
    (i,) = free.take()
    rows[i]["amount"] = ""


def spaces_amount(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """An amount of only spaces: blank once stripped."""
    (i,) = free.take()
    rows[i]["amount"] = " " * ctx.rng.randint(1, 3)


def blank_amounts(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """Two or three blank amounts, empty or spaces."""
    for i in free.some(ctx.rng, 2, 3):
        rows[i]["amount"] = ctx.rng.choice(("", " ", "  "))


def comma_amount(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """An amount with a decimal comma, as a European export writes it: not a number."""
    (i,) = free.take()
    rows[i]["amount"] = rows[i]["amount"].replace(".", ",")


def cents_as_dollars(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A sale in cents read as dollars: 100 times a plausible amount, above the cap."""
    (i,) = free.take()
    row = as_sale(ctx.rng, rows[i])
    row["amount"] = amount_text(big_cents(ctx.rng) * 100)


def cents_as_dollars_refund(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A refund in cents read as dollars: below the refund floor of -50000."""
    (i,) = free.take()
    rows[i]["status"] = "refunded"
    rows[i]["amount"] = amount_text(-big_cents(ctx.rng) * 100)


def negative_sale(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A negative amount on an order that is not a refund."""
    (i,) = free.take()
    row = as_sale(ctx.rng, rows[i])
    row["amount"] = amount_text(-plausible_cents(ctx.rng))


def positive_refund(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A refund booked with a positive amount."""
    (i,) = free.take()
    rows[i]["status"] = "refunded"
    rows[i]["amount"] = amount_text(plausible_cents(ctx.rng))


def zero_amount(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A sale of 0.00: the contract wants more than zero."""
    (i,) = free.take()
    as_sale(ctx.rng, rows[i])["amount"] = amount_text(0)


# --- orders: currency, status, order_date -----------------------------------------


def euro(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """EUR in a mart that sums USD."""
    (i,) = free.take()
    rows[i]["currency"] = "EUR"


def lower_usd(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """``usd``: the right currency, but not the code the contract names."""
    (i,) = free.take()
    rows[i]["currency"] = "usd"


def capital_status(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """``Delivered`` and the like: a status whose case drifted."""
    (i,) = free.take()
    row = as_sale(ctx.rng, rows[i])
    row["status"] = row["status"].capitalize() if ctx.rng.random() < 0.75 else row["status"].upper()


def padded_status(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """``shipped `` with a trailing space."""
    (i,) = free.take()
    row = as_sale(ctx.rng, rows[i])
    row["status"] = row["status"] + " "


def unknown_status(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A status the contract does not list, such as ``cancelled``."""
    (i,) = free.take()
    as_sale(ctx.rng, rows[i])["status"] = ctx.rng.choice(UNKNOWN_STATUSES)


def outside_window(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """An order dated just before the window or on the run date after it."""
    (i,) = free.take()
    rows[i]["order_date"] = ctx.rng.choice(OUTSIDE_DATES)


def timestamp_date(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """An order date sent as a timestamp inside the window."""
    (i,) = free.take()
    rows[i]["order_date"] = timestamp(ctx.rng, ctx.rng.choice(WINDOW_DATES))


# --- customers --------------------------------------------------------------------


def resent_customer(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """An existing customer re-sent exactly (same email, country, signup)."""
    (i,) = free.take()
    rows[i] = ctx.resend_customer()


def resync_customers(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A full re-sync: every row (up to the warehouse's size) is an existing customer."""
    for i in free.take(max(1, min(free.spare(), len(ctx.wh_customers)))):
        rows[i] = ctx.resend_customer()


def repeated_customer(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A new customer listed twice in the same batch, as an exact copy."""
    source, target = free.take(2)
    rows[target] = dict(rows[source])


def blank_email(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """An empty email."""
    (i,) = free.take()
    rows[i]["email"] = ""


def spaces_email(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """An email of only spaces."""
    (i,) = free.take()
    rows[i]["email"] = " " * ctx.rng.randint(1, 3)


def bad_country(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A country the contract does not allow (``UK`` for GB, lower case, a name)."""
    (i,) = free.take()
    rows[i]["country"] = ctx.rng.choice(BAD_COUNTRIES)


def future_signup(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A signup after the window's end (the run date, or a year typo)."""
    (i,) = free.take()
    rows[i]["signup_date"] = ctx.rng.choice(FUTURE_SIGNUPS)


def timestamp_signup(ctx: CaseContext, rows: Rows, free: Free) -> None:
    """A signup date sent as a timestamp."""
    (i,) = free.take()
    rows[i]["signup_date"] = timestamp(ctx.rng, ctx.rng.choice(SIGNUP_DATES))


def _d(name: str, table: str, column: str, kind: str, plant: Planter, rows: int = 1, *also: str) -> Defect:
    return Defect(name, table, column, kind, rows, plant, also)


DEFECTS: dict[str, Defect] = {
    d.name: d
    for d in (
        _d("resent-orders", "orders", "order_id", "duplicate_key", resent_orders),
        _d("resent-update", "orders", "order_id", "duplicate_key", resent_update),
        _d("repeated-order", "orders", "order_id", "duplicate_key", repeated_order, 2),
        _d("corrected-order", "orders", "order_id", "duplicate_key", corrected_order, 2),
        _d("orphan", "orders", "customer_id", "orphan_reference", orphan),
        _d("orphan-several", "orders", "customer_id", "orphan_reference", orphan_several, 2),
        _d("orphan-two", "orders", "customer_id", "orphan_reference", orphan_two, 2),
        _d("blank-amount", "orders", "amount", "missing_value", blank_amount, 1, "out_of_range"),
        _d("spaces-amount", "orders", "amount", "missing_value", spaces_amount, 1, "out_of_range"),
        _d("blank-amounts", "orders", "amount", "missing_value", blank_amounts, 2, "out_of_range"),
        _d("comma-amount", "orders", "amount", "invalid_value", comma_amount),
        _d("cents-as-dollars", "orders", "amount", "out_of_range", cents_as_dollars),
        _d("cents-as-dollars-refund", "orders", "amount", "out_of_range", cents_as_dollars_refund),
        _d("negative-sale", "orders", "amount", "out_of_range", negative_sale),
        _d("positive-refund", "orders", "amount", "out_of_range", positive_refund),
        _d("zero-amount", "orders", "amount", "out_of_range", zero_amount),
        _d("euro", "orders", "currency", "wrong_currency", euro),
        _d("lower-usd", "orders", "currency", "wrong_currency", lower_usd),
        _d("capital-status", "orders", "status", "invalid_value", capital_status),
        _d("padded-status", "orders", "status", "invalid_value", padded_status),
        _d("unknown-status", "orders", "status", "invalid_value", unknown_status),
        _d("outside-window", "orders", "order_date", "out_of_window", outside_window),
        _d("timestamp-date", "orders", "order_date", "invalid_value", timestamp_date),
        _d("resent-customer", "customers", "customer_id", "duplicate_key", resent_customer),
        _d("resync-customers", "customers", "customer_id", "duplicate_key", resync_customers),
        _d("repeated-customer", "customers", "customer_id", "duplicate_key", repeated_customer, 2),
        _d("blank-email", "customers", "email", "missing_value", blank_email),
        _d("spaces-email", "customers", "email", "missing_value", spaces_email),
        _d("bad-country", "customers", "country", "invalid_value", bad_country),
        _d("future-signup", "customers", "signup_date", "out_of_window", future_signup),
        _d("timestamp-signup", "customers", "signup_date", "invalid_value", timestamp_signup),
    )
}

# One defect per (column, type) a table can break: what extra defects are drawn
# from when a batch must carry more than its variant plants.
EXTRA_POOL: dict[str, tuple[str, ...]] = {
    "orders": (
        "resent-orders",
        "orphan",
        "blank-amount",
        "comma-amount",
        "cents-as-dollars",
        "euro",
        "capital-status",
        "outside-window",
        "timestamp-date",
    ),
    "customers": ("resent-customer", "blank-email", "bad-country", "future-signup", "timestamp-signup"),
}
