"""What a profile alone can prove about a batch, rule by rule.

``profile-only`` judges batches from ``profile_batch`` and the contract and never
queries the warehouse. Some breaches show in a profile (a blank amount, a status
outside the allowed list, a date past the window, an id repeated inside the
batch); others only show against the warehouse (an order id already loaded, a
customer re-sent, an order for a customer who does not exist). This module holds
the first kind, in the order ``careful`` cites them, so the baseline loses exactly
what skipping the warehouse costs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Profile = dict[str, Any]
Finding = tuple[str, str]  # (column, defect_type)

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _values(column: dict[str, Any]) -> list[str]:
    return [value for value, _count in column["top_values"]]


def _outside(column: dict[str, Any], allowed: list[str]) -> bool:
    """A value outside ``allowed`` is shown, or there are more distinct values than allowed ones."""
    return column["n_distinct"] > len(allowed) or any(v not in allowed for v in _values(column))


def _repeats(profile: Profile, column: str) -> bool:
    stats = profile["columns"][column]
    seen: int = stats["n_distinct"] + stats["n_null"]
    rows: int = profile["rows"]
    return seen < rows


def _is_date(text: str | None) -> bool:
    return text is not None and bool(_DATE.match(text))


def _dates(profile: Profile, column: str) -> tuple[str | None, str | None, bool]:
    stats = profile["columns"][column]
    low, high = stats["min"], stats["max"]
    return low, high, _is_date(low) and _is_date(high) and stats["n_blank"] == 0


def _amount(profile: Profile, contract: dict[str, Any]) -> Finding | None:
    stats = profile["columns"]["amount"]
    if stats["n_blank"]:
        return "amount", "missing_value"
    numeric = [v for v in _values(stats) if _is_number(v)]
    if len(numeric) < len(_values(stats)):
        return "amount", "invalid_value"
    cap = float(contract["limits"]["max_amount"])
    low, high = stats["numeric_min"], stats["numeric_max"]
    refunds = "refunded" in _values(profile["columns"]["status"])
    if high is not None and high > cap:
        return "amount", "out_of_range"
    if low is not None and (low < -cap or low == 0 or (low < 0 and not refunds)):
        return "amount", "out_of_range"
    return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


Check = tuple[Finding, Callable[[], bool]]


def _first_broken(checks: list[Check]) -> Finding | None:
    return next((finding for finding, broken in checks if broken()), None)


def _order_findings(profile: Profile, contract: dict[str, Any]) -> Finding | None:
    limits, window = contract["limits"], contract["reporting_window"]
    columns = profile["columns"]
    low, high, dated = _dates(profile, "order_date")
    found = _first_broken(
        [
            (("order_id", "duplicate_key"), lambda: _repeats(profile, "order_id")),
            (("currency", "wrong_currency"), lambda: _outside(columns["currency"], [limits["currency"]])),
            (
                ("status", "invalid_value"),
                lambda: _outside(columns["status"], list(limits["allowed_status"])),
            ),
            (("order_date", "invalid_value"), lambda: not dated),
            (("order_date", "out_of_window"), lambda: low < window["start"] or high > window["end"]),
        ]
    )
    return found or _amount(profile, contract)


def _customer_findings(profile: Profile, contract: dict[str, Any]) -> Finding | None:
    limits, window = contract["limits"], contract["reporting_window"]
    columns = profile["columns"]
    _low, high, dated = _dates(profile, "signup_date")
    countries = list(limits["allowed_countries"])
    return _first_broken(
        [
            (("customer_id", "duplicate_key"), lambda: _repeats(profile, "customer_id")),
            (("email", "missing_value"), lambda: columns["email"]["n_blank"] > 0),
            (("country", "invalid_value"), lambda: _outside(columns["country"], countries)),
            (("signup_date", "invalid_value"), lambda: not dated),
            (("signup_date", "out_of_window"), lambda: high > window["end"]),
        ]
    )


def profile_finding(profile: Profile, contract: dict[str, Any]) -> Finding | None:
    """The first rule a profile proves broken, as a citation, or None if it shows none."""
    if profile["table"] == "orders":
        return _order_findings(profile, contract)
    return _customer_findings(profile, contract)
