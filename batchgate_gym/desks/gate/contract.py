"""The data contract every case is judged against.

One contract for every case, as the spec fixes its structure and values. The rule
texts are written for this project; the machine-readable ``limits`` and the
``reporting_window`` are what the rules as SQL (:mod:`.rules_sql`) and careful
agents read.
"""

from __future__ import annotations

import json
from typing import Any, Final

WINDOW_START: Final = "2026-09-01"
WINDOW_END: Final = "2026-09-30"
MAX_AMOUNT: Final = 50000
CURRENCY: Final = "USD"
ALLOWED_STATUS: Final = ("placed", "shipped", "delivered", "returned", "refunded")
ALLOWED_COUNTRIES: Final = ("US", "CA", "GB", "DE", "FR", "KR", "JP", "AU")
DEFECT_TYPES: Final = (
    "duplicate_key",
    "missing_value",
    "invalid_value",
    "orphan_reference",
    "out_of_range",
    "wrong_currency",
    "out_of_window",
)

ORDER_COLUMNS: Final = ("order_id", "customer_id", "amount", "currency", "status", "order_date")
CUSTOMER_COLUMNS: Final = ("customer_id", "email", "country", "signup_date")
TABLE_COLUMNS: Final = {"orders": ORDER_COLUMNS, "customers": CUSTOMER_COLUMNS}

_CONTRACT: Final[dict[str, Any]] = {
    "reporting_window": {"start": WINDOW_START, "end": WINDOW_END},
    "orders": {
        "order_id": "no two orders share an id, counting the warehouse and the batch together",
        "customer_id": (
            "names a customer already in wh_customers, or one that arrived in a customers"
            " batch loaded earlier in this run"
        ),
        "amount": (
            f"must be present and numeric; greater than 0 and at most {MAX_AMOUNT}, except for"
            f" status 'refunded', where it lies from -{MAX_AMOUNT} up to (not including) 0"
        ),
        "currency": f"'{CURRENCY}' only: the revenue mart adds amounts up without converting them",
        "status": ("one of " + ", ".join(ALLOWED_STATUS) + ", spelled exactly so (lower case, no padding)"),
        "order_date": "a YYYY-MM-DD date that falls inside the reporting window",
    },
    "customers": {
        "customer_id": "no two customers share an id, counting the warehouse and the batch together",
        "email": "must be present and not blank",
        "country": "a two-letter code, one of " + ", ".join(ALLOWED_COUNTRIES),
        "signup_date": "a YYYY-MM-DD date no later than the last day of the reporting window",
    },
    "limits": {
        "max_amount": MAX_AMOUNT,
        "currency": CURRENCY,
        "allowed_status": list(ALLOWED_STATUS),
        "allowed_countries": list(ALLOWED_COUNTRIES),
    },
    "defect_types": list(DEFECT_TYPES),
}


def contract() -> dict[str, Any]:
    """A fresh copy of the contract, safe for the caller to modify.

    Read back from its JSON text: the contract holds only JSON values (strings, ints,
    lists, objects), so this is the same copy ``copy.deepcopy`` makes, made in C.
    """
    copied: dict[str, Any] = json.loads(_CONTRACT_JSON)
    return copied


# Keys sorted, at every level, as a case file's line holds them (the original files are
# written so): a procedural case then shows the agent the same contract text as the same
# case read from a file.
_CONTRACT_JSON: Final = json.dumps(_CONTRACT, sort_keys=True)
