"""The reference answers, in polars over the canonical Parquet: no SQL, no store, no shared code.

Each function reads the canonical tables of one dataset and the question's
parameters and returns the answer in its JSON form (a number, a list, rows, a
report). Nothing here is shown to the agent, and nothing here is used to query a
store: the cross-check test compares every template's reference with an
independent SQL solution run in a store.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any

import polars as pl

from .tpch_answers import TPCH_ANSWERS

Tables = Mapping[str, pl.DataFrame]

_NOT_TEST = ~pl.col("order_id").str.starts_with("TEST")


def _delivered(tables: Tables) -> pl.DataFrame:
    return tables["orders"].filter((pl.col("status") == "delivered") & _NOT_TEST)


def _delivered_items(tables: Tables) -> pl.DataFrame:
    return tables["order_items"].join(_delivered(tables).select("order_id"), on="order_id", how="semi")


def _float(value: Any) -> float:
    return float(value) if value is not None else 0.0


def count_status(tables: Tables, p: Mapping[str, Any]) -> int:
    return tables["orders"].filter((pl.col("status") == p["status"]) & _NOT_TEST).height


def avg_installments(tables: Tables, p: Mapping[str, Any]) -> float:
    rows = tables["payments"].filter(pl.col("method") == p["method"])
    return _float(rows["installments"].mean())


def seller_freight(tables: Tables, p: Mapping[str, Any]) -> float:
    return _float(tables["order_items"].filter(pl.col("seller_id") == p["seller"])["freight"].sum())


def top_states(tables: Tables, p: Mapping[str, Any]) -> list[str]:
    items = _delivered_items(tables).join(tables["orders"].select("order_id", "customer_id"), on="order_id")
    by_state = (
        items.join(tables["customers"].select("customer_id", "state"), on="customer_id")
        .group_by("state")
        .agg(pl.col("price").sum().alias("revenue"))
        .sort(["revenue", "state"], descending=[True, False])
    )
    return by_state["state"].head(p["k"]).to_list()


def category_share(tables: Tables, p: Mapping[str, Any]) -> float:
    items = _delivered_items(tables).join(tables["products"], on="product_id")
    total = _float(items["price"].sum())
    part = _float(items.filter(pl.col("category") == p["category"])["price"].sum())
    return part / total if total else 0.0


def top_sellers(tables: Tables, p: Mapping[str, Any]) -> list[list[Any]]:
    counts = (
        _delivered_items(tables)
        .group_by("seller_id")
        .agg(pl.len().alias("items"))
        .sort(["items", "seller_id"], descending=[True, False])
        .head(p["k"])
    )
    return [[seller, int(n)] for seller, n in counts.iter_rows()]


def avg_review(tables: Tables, p: Mapping[str, Any]) -> float:
    return _float(tables["reviews"].unique(subset="review_id", keep="first")["score"].mean())


def late_share(tables: Tables, p: Mapping[str, Any]) -> float:
    known = _delivered(tables).filter(pl.col("delivered_at").is_not_null())
    late = known.filter(pl.col("delivered_at") > pl.col("estimated_delivery_at")).height
    return late / known.height if known.height else 0.0


def payment_mismatch(tables: Tables, p: Mapping[str, Any]) -> int:
    due = (
        _delivered_items(tables)
        .group_by("order_id")
        .agg((pl.col("price") + pl.col("freight")).sum().alias("due"))
    )
    paid = tables["payments"].group_by("order_id").agg(pl.col("value").sum().alias("paid"))
    both = due.join(paid, on="order_id", how="left").with_columns(pl.col("paid").fill_null(0.0))
    return both.filter((pl.col("paid") - pl.col("due")).abs() > 0.01).height


def category_revenue(tables: Tables, p: Mapping[str, Any]) -> float:
    items = _delivered_items(tables).join(tables["products"], on="product_id")
    return _float(items.filter(pl.col("category") == p["category"])["price"].sum())


def seller_state_items(tables: Tables, p: Mapping[str, Any]) -> int:
    items = _delivered_items(tables).join(tables["sellers"], on="seller_id")
    return items.filter(pl.col("state") == p["state"]).height


def month_report(tables: Tables, p: Mapping[str, Any]) -> dict[str, Any]:
    orders = _delivered(tables).filter(pl.col("purchased_at").dt.strftime("%Y-%m") == p["month"])
    items = tables["order_items"].join(orders.select("order_id"), on="order_id", how="semi")
    reviews = tables["reviews"].join(orders.select("order_id"), on="order_id", how="semi")
    scores = reviews.unique(subset="review_id", keep="first")["score"]
    return {
        "delivered_orders": orders.height,
        "revenue": _float(items["price"].sum()),
        "avg_review_score": _float(scores.mean()) if scores.len() else 0.0,
    }


def delivery_change(tables: Tables, p: Mapping[str, Any]) -> list[str]:
    orders = (
        _delivered(tables)
        .filter(pl.col("delivered_at").is_not_null())
        .with_columns(
            pl.col("purchased_at").dt.strftime("%Y-%m").alias("month"),
            (pl.col("delivered_at") - pl.col("purchased_at")).dt.total_days().alias("days"),
        )
        .filter(pl.col("month").is_in([p["m1"], p["m2"]]))
        .join(tables["customers"].select("customer_id", "state"), on="customer_id")
    )
    sums = orders.group_by("state", "month").agg(pl.col("days").sum().alias("s"), pl.len().alias("n"))
    first = sums.filter(pl.col("month") == p["m1"]).select("state", s1="s", n1="n")
    second = sums.filter(pl.col("month") == p["m2"]).select("state", s2="s", n2="n")
    both = first.join(second, on="state")
    # |s2/n2 - s1/n1| >= s1/n1 / 4, in whole numbers: 4 |s2 n1 - s1 n2| >= s1 n2
    moved = both.filter(
        4 * (pl.col("s2") * pl.col("n1") - pl.col("s1") * pl.col("n2")).abs() >= pl.col("s1") * pl.col("n2")
    )
    return sorted(moved["state"].to_list())


def _placed(tables: Tables) -> pl.DataFrame:
    """The orders the snapshot questions count: neither canceled nor unavailable, no test order."""
    return tables["orders"].filter(~pl.col("status").is_in(["canceled", "unavailable"]) & _NOT_TEST)


def _day(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def repeat_purchase_change(tables: Tables, p: Mapping[str, Any]) -> list[str]:
    placed = _placed(tables).join(tables["customers"].select("customer_id", "state"), on="customer_id")
    first = placed.group_by("customer_id").agg(pl.col("purchased_at").min().alias("first"))
    rates = []
    for k in ("q1", "q2"):
        start, end = _day(p[f"{k}_start"]), _day(p[f"{k}_end"])
        buyers = (
            placed.filter(pl.col("purchased_at").is_between(start, end))
            .select("customer_id", "state")
            .unique()
            .join(first, on="customer_id")
        )
        rates.append(
            buyers.group_by("state").agg(
                (pl.col("first") < start).sum().cast(pl.Int64).alias(f"r_{k}"),
                pl.len().cast(pl.Int64).alias(f"n_{k}"),
            )
        )
    both = rates[0].join(rates[1], on="state")
    # |r2/n2 - r1/n1| >= r1/n1 / 4, in whole numbers: 4 |r2 n1 - r1 n2| >= r1 n2
    moved = both.filter(
        (pl.col("r_q1") > 0)
        & (
            4 * (pl.col("r_q2") * pl.col("n_q1") - pl.col("r_q1") * pl.col("n_q2")).abs()
            >= pl.col("r_q1") * pl.col("n_q2")
        )
    )
    return sorted(moved["state"].to_list())


def category_week_change(tables: Tables, p: Mapping[str, Any]) -> list[str]:
    orders = _placed(tables).select("order_id", "purchased_at")
    items = tables["order_items"].join(orders, on="order_id").join(tables["products"], on="product_id")

    def count(week: str) -> pl.DataFrame:
        start, end = _day(p[f"{week}_start"]), _day(p[f"{week}_end"])
        inside = items.filter(pl.col("purchased_at").is_between(start, end))
        return inside.group_by("category").agg(pl.len().cast(pl.Int64).alias(week))

    both = count("w1").join(count("w2"), on="category", how="left").with_columns(pl.col("w2").fill_null(0))
    moved = both.filter(4 * (pl.col("w2") - pl.col("w1")).abs() >= pl.col("w1"))
    return sorted(moved["category"].to_list())


ANSWERS: Mapping[str, Callable[[Tables, Mapping[str, Any]], Any]] = {
    "count-status": count_status,
    "avg-installments": avg_installments,
    "seller-freight": seller_freight,
    "top-states": top_states,
    "category-share": category_share,
    "top-sellers": top_sellers,
    "avg-review": avg_review,
    "late-share": late_share,
    "payment-mismatch": payment_mismatch,
    "category-revenue": category_revenue,
    "seller-state-items": seller_state_items,
    "month-report": month_report,
    "delivery-change": delivery_change,
    **TPCH_ANSWERS,
    "repeat-purchase-change": repeat_purchase_change,
    "category-week-change": category_week_change,
}


def expected_answer(template: str, tables: Tables, params: Mapping[str, Any]) -> Any:
    """The reference answer, or ``None`` for a question the data cannot answer."""
    compute = ANSWERS.get(template)
    return None if compute is None else compute(tables, params)


__all__ = ["ANSWERS", "expected_answer"]
