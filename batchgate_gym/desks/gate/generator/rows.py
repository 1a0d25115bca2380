"""Plausible clean rows: every value drawn from one distribution per column.

Every batch of a case, clean or not, and the warehouse draw their rows from the
same distributions, so nothing but a planted defect sets a batch apart. Rows are
built column by column with ``random.Random.choices`` because a case is built on
every environment reset and a scaled case may hold 100k-row batches.
"""

from __future__ import annotations

import datetime as dt
import random
from bisect import bisect_right
from itertools import accumulate, repeat, starmap
from math import floor

from ..contract import ALLOWED_COUNTRIES, ALLOWED_STATUS, CURRENCY, MAX_AMOUNT, WINDOW_END, WINDOW_START


def _days(first: str, last: str) -> tuple[str, ...]:
    """Every ISO date from ``first`` to ``last`` inclusive."""
    start, end = dt.date.fromisoformat(first), dt.date.fromisoformat(last)
    return tuple((start + dt.timedelta(days=n)).isoformat() for n in range((end - start).days + 1))


WINDOW_DATES = _days(WINDOW_START, WINDOW_END)
SIGNUP_DATES = _days("2025-01-01", WINDOW_END)
SALE_STATUSES = tuple(status for status in ALLOWED_STATUS if status != "refunded")
_STATUS_CUM = tuple(accumulate(4 if status == "refunded" else 24 for status in ALLOWED_STATUS))
# The status ``choices`` picks for a product ``x`` of ``random()`` and the total weight:
# bisect_right(_STATUS_CUM, x), the same for every x of one whole part, as the weights are whole.
_STATUS_TOTAL = float(_STATUS_CUM[-1])
_STATUS_AT = tuple(ALLOWED_STATUS[bisect_right(_STATUS_CUM, whole)] for whole in range(_STATUS_CUM[-1]))
AMOUNT_CENTS = range(1200, 190_000)  # 12.00 .. 1899.99, like the original's orders
BIG_CENTS = range(MAX_AMOUNT + 1, 190_000)  # a plausible amount whose x100 passes the cap
EMAIL_DOMAIN = "example.com"
WAREHOUSE_CUSTOMERS = 20
WAREHOUSE_ORDERS = 30


def amount_text(cents: int) -> str:
    """Cents as the string the exports carry: ``117806`` -> ``"1178.06"``."""
    return _MONEY % divmod(cents, 100) if cents >= 0 else _REFUND % divmod(-cents, 100)


_MONEY, _REFUND = "%d.%02d", "-%d.%02d"  # whole units and cents, as ``amount_text`` writes them
_UNITS = tuple(map(str, range(AMOUNT_CENTS.stop // 100 + 1)))  # the whole units of a plausible amount
_DOT_CENTS = tuple(f".{cents:02d}" for cents in range(100))


def email_for(customer_id: str) -> str:
    """One address pattern for every customer, so a re-sent row cannot differ in it."""
    return customer_id.lower() + _AT_DOMAIN


_AT_DOMAIN = "@" + EMAIL_DOMAIN


def plausible_cents(rng: random.Random) -> int:
    """One positive amount from the orders' distribution."""
    return AMOUNT_CENTS[int(rng.random() * len(AMOUNT_CENTS))]


def big_cents(rng: random.Random) -> int:
    """A plausible amount above 500.00: multiplied by 100 it lands above the cap."""
    return BIG_CENTS[int(rng.random() * len(BIG_CENTS))]


def order_rows(rng: random.Random, order_ids: list[str], refs: list[str]) -> list[dict[str, str]]:
    """Clean orders, one per id, for customers drawn from ``refs``; refunds are negative.

    The draws are ``random.Random.choices``' own, in its order (every order's customer,
    then every status, every amount, every date), made from one run of ``random()``s:
    ``choices`` picks ``population[floor(random() * n)]``, and a status by bisecting its
    whole-number cumulative weights, which is the same as looking the product's floor up
    in a table (:data:`_STATUS_AT`).
    """
    count = len(order_ids)
    draws = list(starmap(rng.random, repeat((), 4 * count)))
    people = len(refs)
    customers = [refs[floor(r * people)] for r in draws[:count]]
    statuses = [_STATUS_AT[floor(r * _STATUS_TOTAL)] for r in draws[count : 2 * count]]
    low, spread = AMOUNT_CENTS.start, len(AMOUNT_CENTS)
    dates, days = WINDOW_DATES, len(WINDOW_DATES)
    # amount_text(cents) of a sale, amount_text(-cents) of a refund, from tables of the
    # texts of whole units and of cents (formatting each amount cost three times as much)
    units, cents_part = _UNITS, _DOT_CENTS
    return [
        {
            "order_id": order_id,
            "customer_id": customer,
            "amount": ("-" if status == "refunded" else "")
            + units[(cents := low + floor(amount * spread)) // 100]
            + cents_part[cents % 100],
            "currency": CURRENCY,
            "status": status,
            "order_date": dates[floor(day * days)],
        }
        for order_id, customer, status, amount, day in zip(
            order_ids, customers, statuses, draws[2 * count : 3 * count], draws[3 * count :], strict=True
        )
    ]


def customer_rows(rng: random.Random, customer_ids: list[str]) -> list[dict[str, str]]:
    """Clean customers, one per id; signups spread over the same range as the warehouse's.

    The draws are ``random.Random.choices``' own, in its order (every country, then every
    signup), made from one run of ``random()``s, as :func:`order_rows` makes its own.
    """
    count = len(customer_ids)
    draws = list(starmap(rng.random, repeat((), 2 * count)))
    countries, signups = ALLOWED_COUNTRIES, SIGNUP_DATES
    country_count, signup_count = len(countries), len(signups)
    return [
        {
            "customer_id": customer,
            "email": customer.lower() + _AT_DOMAIN,  # email_for(customer)
            "country": countries[floor(country * country_count)],
            "signup_date": signups[floor(signup * signup_count)],
        }
        for customer, country, signup in zip(customer_ids, draws[:count], draws[count:], strict=True)
    ]
