"""Apply the contract to a case's rows, knowing nothing of how they were made.

This is the check the truth labels are held to: it reads only the warehouse, the
batches and the contract module, and reports per batch every (column, defect
type) a rule finds. Customers batches are judged first, because an order may
refer to a customer of a clean customers batch of the same case (a careful agent
loads those before the orders).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ..contract import ALLOWED_COUNTRIES, ALLOWED_STATUS, CURRENCY, MAX_AMOUNT, WINDOW_END, WINDOW_START

Finding = tuple[str, str]
_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# A plain decimal, as the contract's amount rule reads "numeric": an optional minus,
# digits with at most one dot. No plus sign, exponent or thousands separator.
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_START, _END = dt.date.fromisoformat(WINDOW_START), dt.date.fromisoformat(WINDOW_END)


def audit_case(case: Mapping[str, Any]) -> list[list[Finding]]:
    """Per batch, in listing order, the sorted (column, defect_type) pairs the contract finds."""
    batches = case["batches"]
    warehouse = case["warehouse"]
    findings: list[list[Finding]] = [[] for _ in batches]
    known_customers = {row["customer_id"] for row in warehouse["customers"]}
    arriving: set[str] = set()
    for i, batch in enumerate(batches):
        if batch["table"] == "customers":
            findings[i] = audit_customers(batch["rows"], known_customers)
            if not findings[i]:
                arriving.update(row["customer_id"] for row in batch["rows"])
    known_orders = {row["order_id"] for row in warehouse["orders"]}
    for i, batch in enumerate(batches):
        if batch["table"] == "orders":
            findings[i] = audit_orders(batch["rows"], known_orders, known_customers | arriving)
    return findings


def audit_orders(rows: list[Mapping[str, str]], known_orders: set[str], customers: set[str]) -> list[Finding]:
    """Every rule of the orders table, applied to every row."""
    found: set[Finding] = set()
    _duplicates(found, (row["order_id"] for row in rows), known_orders, "order_id")
    for row in rows:
        if row["customer_id"] not in customers:
            found.add(("customer_id", "orphan_reference"))
        problem = amount_problem(row["amount"], row["status"])
        if problem:
            found.add(("amount", problem))
        if row["currency"] != CURRENCY:
            found.add(("currency", "wrong_currency"))
        if row["status"] not in ALLOWED_STATUS:
            found.add(("status", "invalid_value"))
        day = parse_day(row["order_date"])
        if day is None:
            found.add(("order_date", "invalid_value"))
        elif not _START <= day <= _END:
            found.add(("order_date", "out_of_window"))
    return sorted(found)


def audit_customers(rows: list[Mapping[str, str]], known_customers: set[str]) -> list[Finding]:
    """Every rule of the customers table, applied to every row."""
    found: set[Finding] = set()
    _duplicates(found, (row["customer_id"] for row in rows), known_customers, "customer_id")
    for row in rows:
        if not row["email"].strip():
            found.add(("email", "missing_value"))
        if row["country"] not in ALLOWED_COUNTRIES:
            found.add(("country", "invalid_value"))
        day = parse_day(row["signup_date"])
        if day is None:
            found.add(("signup_date", "invalid_value"))
        elif day > _END:
            found.add(("signup_date", "out_of_window"))
    return sorted(found)


def amount_problem(text: str, status: str) -> str | None:
    """The amount rule: present, a plain decimal number, inside the bounds for its status."""
    value = text.strip()
    if not value:
        return "missing_value"
    if not _NUMBER.fullmatch(value):
        return "invalid_value"
    amount = float(value)
    if status == "refunded":
        return None if -MAX_AMOUNT <= amount < 0 else "out_of_range"
    return None if 0 < amount <= MAX_AMOUNT else "out_of_range"


def parse_day(text: str) -> dt.date | None:
    """A strict YYYY-MM-DD calendar date, or None (timestamps and 2026-09-31 are not dates)."""
    if not _ISO_DAY.fullmatch(text):
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def _duplicates(found: set[Finding], keys: Iterable[str], known: set[str], column: str) -> None:
    """A key already in the warehouse, or twice in the batch, is a duplicate."""
    counts = Counter(keys)
    if any(n > 1 for n in counts.values()) or not known.isdisjoint(counts):
        found.add((column, "duplicate_key"))
