"""The question templates: levels 1 to 7, each with its conventions, answer type and tolerance.

A template is a sentence with parameters drawn from the data (a status, a seller, a
month) and the conventions that decide how the dirt is treated, stated in the
question itself. Answer types:

* ``number``: one number; ``ranking``: an ordered list (order matters);
* ``list``: a list in the order the question names (here, alphabetical);
* ``table``: rows, each a list (all expected rows, no extra, in any order);
* ``report``: ``{metric_id: value}`` (every requested id, none invented);
* ``decline``: the data cannot answer (costs, causes, outside facts): decline.

Tolerances are absolute: counts exact, money to 0.01, ratios to 0.0001, averages
to 0.001. A template names the tables its answer depends on; the evidence must read
them all. Level 4 splits the data over two stores (orders in ``sqlite``, the
catalog in ``lake``); level 6 questions come with a snapshot date and compare two
periods on a schedule (months for delivery times, quarters for repeat purchases,
weeks for categories); level 7 asks TPC-H's classic questions (:mod:`.tpch_questions`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from .template import COUNT, MEAN, MONEY, RATIO, Template
from .tpch_questions import TPCH_TEMPLATES

TEST_RULE = "Test orders (order_id starting with 'TEST') do not count."
REVENUE_RULE = "Revenue is the sum of item price; freight is not revenue."
# Level 4's pair by default: orders in the first store, the catalog in the second.
CROSS_STORES = ("sqlite", "lake")
# Every level-4 pair: the seed's own (orders in PostgreSQL, catalog in SQLite) asked by name.
CROSS_PAIRS = (CROSS_STORES, ("postgres", "sqlite"))
CATALOG = ("products", "sellers")  # in the second store at level 4; everything else in the first
SNAPSHOT = (
    "The data is a snapshot taken on {cutoff}: later orders are absent, and deliveries and reviews dated after it "
    "are not recorded yet. "
)
PLACED_RULE = (
    "Here an order is one whose status is neither 'canceled' nor 'unavailable' and whose order_id does not start "
    "with 'TEST' (a test order)."
)


def _pick(rng: np.random.Generator, values: Any) -> Any:
    values = sorted(set(values))
    return values[int(rng.integers(len(values)))]


def _delivered_items(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    orders = tables["orders"].filter(
        (pl.col("status") == "delivered") & ~pl.col("order_id").str.starts_with("TEST")
    )
    return tables["order_items"].join(orders.select("order_id"), on="order_id")


def _status(rng: np.random.Generator, tables: Mapping[str, pl.DataFrame]) -> dict[str, Any]:
    return {"status": _pick(rng, ("delivered", "canceled", "shipped", "unavailable"))}


def _method(rng: np.random.Generator, tables: Mapping[str, pl.DataFrame]) -> dict[str, Any]:
    return {"method": _pick(rng, tables["payments"]["method"].to_list())}


def _seller(rng: np.random.Generator, tables: Mapping[str, pl.DataFrame]) -> dict[str, Any]:
    return {"seller": _pick(rng, tables["order_items"]["seller_id"].to_list())}


def _k(rng: np.random.Generator, tables: Mapping[str, pl.DataFrame]) -> dict[str, Any]:
    return {"k": int(rng.choice([3, 5]))}


def _category(rng: np.random.Generator, tables: Mapping[str, pl.DataFrame]) -> dict[str, Any]:
    items = _delivered_items(tables).join(tables["products"], on="product_id")
    return {"category": _pick(rng, items["category"].to_list())}


def _seller_state(rng: np.random.Generator, tables: Mapping[str, pl.DataFrame]) -> dict[str, Any]:
    items = _delivered_items(tables).join(tables["sellers"], on="seller_id")
    return {"state": _pick(rng, items["state"].to_list())}


def _profit(rng: np.random.Generator, tables: Mapping[str, pl.DataFrame]) -> dict[str, Any]:
    return {**_category(rng, tables), "year": int(rng.choice([2017, 2018]))}


def _customer_state(rng: np.random.Generator, tables: Mapping[str, pl.DataFrame]) -> dict[str, Any]:
    return {"state": _pick(rng, tables["customers"]["state"].to_list())}


def _month(rng: np.random.Generator, tables: Mapping[str, pl.DataFrame]) -> dict[str, Any]:
    delivered = tables["orders"].filter(pl.col("status") == "delivered")
    months = delivered["purchased_at"].dt.strftime("%Y-%m").to_list()
    return {"month": _pick(rng, months)}


def months_before(cutoff: dt.date) -> tuple[str, str]:
    """The two whole months before the snapshot's month: (earlier, later)."""
    first = cutoff.replace(day=1)
    m2 = (first - dt.timedelta(days=1)).replace(day=1)
    m1 = (m2 - dt.timedelta(days=1)).replace(day=1)
    return m1.strftime("%Y-%m"), m2.strftime("%Y-%m")


Span = tuple[dt.date, dt.date]  # first and last day, both included


def quarters_before(cutoff: dt.date, back: int = 0) -> tuple[Span, Span]:
    """Two consecutive calendar quarters before the snapshot's quarter, ``back`` quarters earlier: (earlier, later).

    The later one is the last quarter that ends before the snapshot date when ``back`` is 0.
    """
    index = cutoff.year * 4 + (cutoff.month - 1) // 3 - 1 - back  # the later quarter, counted from year 0

    def span(i: int) -> Span:
        start = dt.date(i // 4, 3 * (i % 4) + 1, 1)
        after = dt.date((i + 1) // 4, 3 * ((i + 1) % 4) + 1, 1)
        return start, after - dt.timedelta(days=1)

    return span(index - 1), span(index)


def weeks_before(cutoff: dt.date, back: int = 0) -> tuple[Span, Span]:
    """Two consecutive Monday-to-Sunday weeks ending before the snapshot date, ``back`` weeks earlier: (earlier, later)."""
    eve = cutoff - dt.timedelta(days=1)
    end = eve - dt.timedelta(days=(eve.weekday() + 1) % 7 + 7 * back)  # a Sunday before the cutoff
    start = end - dt.timedelta(days=6)
    return (start - dt.timedelta(days=7), start - dt.timedelta(days=1)), (start, end)


TEMPLATES: tuple[Template, ...] = (
    Template(
        "count-status",
        1,
        "number",
        "How many orders have status '{status}'? " + TEST_RULE,
        ("orders",),
        COUNT,
        draw=_status,
    ),
    Template(
        "avg-installments",
        1,
        "number",
        "What is the average number of installments over payment rows with method '{method}'? Every payment row counts "
        "once; 0 if there is no such row.",
        ("payments",),
        MEAN,
        draw=_method,
    ),
    Template(
        "seller-freight",
        1,
        "number",
        "What is the total freight of all order items sold by seller '{seller}', whatever the order's status? 0 if "
        "the seller sold nothing.",
        ("order_items",),
        MONEY,
        draw=_seller,
    ),
    Template(
        "top-states",
        2,
        "ranking",
        "Which {k} customer states bring the most revenue from delivered orders? "
        + REVENUE_RULE
        + " "
        + TEST_RULE
        + " Ties go to the state name that sorts first. Answer the states as a list, highest revenue first.",
        ("orders", "order_items", "customers"),
        draw=_k,
    ),
    Template(
        "category-share",
        2,
        "number",
        "What share (a fraction between 0 and 1) of the revenue of delivered orders comes from products in category '{category}'? "
        + REVENUE_RULE
        + " "
        + TEST_RULE,
        ("orders", "order_items", "products"),
        RATIO,
        draw=_category,
    ),
    Template(
        "top-sellers",
        2,
        "table",
        "Which {k} sellers sold the most items in delivered orders? "
        + TEST_RULE
        + " Ties go to the seller_id that "
        "sorts first. Answer a table: one row [seller_id, items] per seller.",
        ("orders", "order_items"),
        draw=_k,
    ),
    Template(
        "avg-review",
        3,
        "number",
        "What is the average review score? The export repeats some review rows: each review_id counts once.",
        ("reviews",),
        MEAN,
    ),
    Template(
        "late-share",
        3,
        "number",
        "Of the delivered orders whose delivery date is known, what share (a fraction between 0 and 1) arrived after "
        "their estimated delivery date? Orders with no delivered_at are left out; 0 if none is left. "
        + TEST_RULE,
        ("orders",),
        RATIO,
    ),
    Template(
        "payment-mismatch",
        3,
        "number",
        "How many delivered orders have payments whose total differs from the sum of their items' price plus freight "
        "by more than 0.01? " + TEST_RULE,
        ("orders", "order_items", "payments"),
        COUNT,
    ),
    # The questions to decline are phrased like an answerable twin (category-revenue,
    # avg-review, category-share): what gives them away is the data, not the wording.
    Template(
        "profit",
        3,
        "decline",
        "What is the profit margin of delivered orders for products in category '{category}' purchased in {year}? "
        + REVENUE_RULE
        + " "
        + TEST_RULE,
        draw=_profit,
    ),
    Template(
        "causal",
        3,
        "decline",
        "What is the effect a late delivery causes on the review score? The export repeats some review rows: each "
        "review_id counts once.",
    ),
    Template(
        "market-share",
        3,
        "decline",
        "What share (a fraction between 0 and 1) of the revenue of all e-commerce shops from customers in state "
        "'{state}' comes from this shop? " + REVENUE_RULE + " " + TEST_RULE,
        draw=_customer_state,
    ),
    Template(
        "category-revenue",
        4,
        "number",
        "What is the revenue of delivered orders for products in category '{category}'? "
        + REVENUE_RULE
        + " "
        + TEST_RULE
        + " Orders, items, payments, reviews and customers are in the sqlite store; products and "
        "sellers are in the lake store.",
        ("sqlite.orders", "sqlite.order_items", "lake.products"),
        MONEY,
        draw=_category,
    ),
    Template(
        "seller-state-items",
        4,
        "number",
        "How many items of delivered orders were sold by sellers in state '{state}'? "
        + TEST_RULE
        + " Orders, "
        "items, payments, reviews and customers are in the sqlite store; products and sellers are in the lake store.",
        ("sqlite.orders", "sqlite.order_items", "lake.sellers"),
        COUNT,
        draw=_seller_state,
    ),
    Template(
        "month-report",
        5,
        "report",
        "Report on the orders purchased in {month} (YYYY-MM). "
        + TEST_RULE
        + " Answer an object with exactly "
        "these metric ids: delivered_orders (how many have status 'delivered'), revenue (the item price of those "
        "delivered orders; freight is not revenue; 0 if there is none) and avg_review_score (the average score of "
        "the distinct review_ids of those delivered orders; the export repeats some review rows; 0 if there is "
        "none).",
        ("orders", "order_items", "reviews"),
        metrics={"delivered_orders": COUNT, "revenue": MONEY, "avg_review_score": MEAN},
        draw=_month,
    ),
    Template(
        "delivery-change",
        6,
        "list",
        SNAPSHOT + "Monthly delivery review: for each customer state, take the delivered orders purchased "
        "in {m1} and those purchased in {m2} that have a delivered_at, and their mean delivery time in days "
        "(delivered_at minus purchased_at). "
        + TEST_RULE
        + " A state changed when its mean moved by 25% or more "
        "(|mean {m2} - mean {m1}| >= 0.25 * mean {m1}); states without such an order in either month are left out. "
        "Which states changed? Answer the state codes as a list in alphabetical order.",
        ("orders", "customers"),
    ),
    *TPCH_TEMPLATES,
    # level 6 again, after level 7: a split's case seeds follow a template's place in this tuple
    Template(
        "repeat-purchase-change",
        6,
        "list",
        SNAPSHOT
        + "Quarterly repeat-purchase review: compare the quarters {q1} ({q1_start} to {q1_end}) and {q2} "
        "({q2_start} to {q2_end}), first and last day included; an order falls in the quarter of its purchased_at. "
        + PLACED_RULE
        + " For each customer state (the state in customers) and each of the two quarters, take the customers who "
        "placed an order in the quarter, and of them those who had also placed such an order before the quarter's first "
        "day; the quarter's repeat-purchase rate is the second count divided by the first. A state changed when its "
        "rate moved by 25% or more (|rate {q2} - rate {q1}| >= 0.25 * rate {q1}); a state is left out when no "
        "customer of it placed an order in {q1}, or none in {q2}, or when its rate in {q1} is 0. Which states "
        "changed? Answer the state codes as a list in alphabetical order.",
        ("orders", "customers"),
    ),
    Template(
        "category-week-change",
        6,
        "list",
        SNAPSHOT
        + "Weekly category review: compare the weeks {w1_start} to {w1_end} and {w2_start} to {w2_end} "
        "(each Monday to Sunday, first and last day included); an item falls in the week of its order's "
        "purchased_at. "
        + PLACED_RULE
        + " For each product category, count the items (order_items rows) of the orders of each week; a category "
        "with no item in the second week counts 0 there. A category changed when its count moved by 25% or more "
        "(|items in the second week - items in the first week| >= 0.25 * items in the first week); a category "
        "with no item in the first week is left out. Which categories changed? Answer the category names as a "
        "list in alphabetical order.",
        ("orders", "order_items", "products"),
    ),
    # Questions to decline at levels 1, 2 and 5, each the twin of an answerable one: the data
    # holds no interest, no costs and so no margin.
    Template(
        "avg-interest",
        1,
        "decline",
        "What is the average interest rate over payment rows with method '{method}'? Every payment row counts once; "
        "0 if there is no such row.",
        draw=_method,
    ),
    Template(
        "category-profit-share",
        2,
        "decline",
        "What share (a fraction between 0 and 1) of the profit of delivered orders comes from products in category "
        "'{category}'? Profit is revenue minus the cost of the goods sold. " + TEST_RULE,
        draw=_category,
    ),
    Template(
        "month-margin-report",
        5,
        "decline",
        "Report on the orders purchased in {month} (YYYY-MM). "
        + TEST_RULE
        + " Answer an object with exactly these metric ids: delivered_orders (how many have status 'delivered'), "
        "revenue (the item price of those delivered orders; freight is not revenue; 0 if there is none) and "
        "gross_margin (that revenue minus the cost of the goods sold, over that revenue).",
        draw=_month,
    ),
)

BY_ID: Mapping[str, Template] = {t.id: t for t in TEMPLATES}
LEVELS = tuple(sorted({t.level for t in TEMPLATES}))


def of_level(level: int) -> tuple[Template, ...]:
    return tuple(t for t in TEMPLATES if t.level == level)


__all__ = [
    "BY_ID",
    "CATALOG",
    "CROSS_PAIRS",
    "CROSS_STORES",
    "LEVELS",
    "TEMPLATES",
    "Span",
    "Template",
    "months_before",
    "of_level",
    "quarters_before",
    "weeks_before",
]
