"""A small hand-made case whose every number is known, for rule-by-rule tests."""

from __future__ import annotations

from typing import Any

from batchgate_gym.desks.gate.cases import Case, load_cases
from batchgate_gym.desks.gate.contract import contract


def order(
    order_id: str,
    customer_id: str,
    amount: str,
    status: str = "placed",
    currency: str = "USD",
    order_date: str = "2026-09-10",
) -> dict[str, str]:
    return {
        "order_id": order_id,
        "customer_id": customer_id,
        "amount": amount,
        "currency": currency,
        "status": status,
        "order_date": order_date,
    }


def customer(customer_id: str, country: str = "US") -> dict[str, str]:
    return {
        "customer_id": customer_id,
        "email": f"{customer_id.lower()}@example.com",
        "country": country,
        "signup_date": "2026-01-05",
    }


def clean() -> dict[str, Any]:
    return {"defective": False, "defects": []}


def defective(column: str, kind: str, accepted: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    truth: dict[str, Any] = {"defective": True, "defects": [{"column": column, "type": kind}]}
    if accepted is not None:
        truth["accepted"] = [{"column": c, "type": t} for c, t in accepted]
    return truth


def small_case_dict() -> dict[str, Any]:
    """Warehouse: C1, C2 and order O1 (C1, 100). Mart before any load: 100.00.

    B-1 orders clean (C1 10.00, C2 20.00); B-2 orders with a blank amount (defective);
    B-3 customers clean (C3); B-4 orders clean for C3 (30.00): needs B-3 first.
    """
    return {
        "case_id": "small-0",
        "family": "hand-made",
        "variant": 0,
        "seed": 0,
        "prompt": "Four batches wait.",
        "contract": contract(),
        "warehouse": {"customers": [customer("C1"), customer("C2")], "orders": [order("O1", "C1", "100.00")]},
        "batches": [
            {
                "batch_id": "B-1",
                "table": "orders",
                "source": "pos",
                "rows": [order("O10", "C1", "10.00"), order("O11", "C2", "20.00")],
                "truth": clean(),
            },
            {
                "batch_id": "B-2",
                "table": "orders",
                "source": "pos",
                "rows": [order("O12", "C1", " "), order("O13", "C2", "5.00")],
                "truth": defective(
                    "amount", "missing_value", [("amount", "missing_value"), ("amount", "out_of_range")]
                ),
            },
            {
                "batch_id": "B-3",
                "table": "customers",
                "source": "crm",
                "rows": [customer("C3", "KR")],
                "truth": clean(),
            },
            {
                "batch_id": "B-4",
                "table": "orders",
                "source": "pos",
                "rows": [order("O14", "C3", "30.00")],
                "truth": clean(),
            },
        ],
    }


def small_case() -> Case:
    return load_cases([small_case_dict()])[0]
