"""What an analyst reads in a question, and the SQL that answers it, in SQLite's, DuckDB's, ClickHouse's and PostgreSQL's dialects.

This is the analyst's side: it knows nothing of the desk but the question's text. The
same solutions are the independent SQL the cross-check test holds every template's
polars reference against (``tests/desks/analyst/test_crosscheck.py``).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .tpch_sql import DATE, TPCH_DECLINE, TPCH_PATTERNS, tpch_answer, tpch_solution

PAGE = 50  # rows a query returns at most
# Each store's SQL dialect, as its task text names the engine (the DuckDB stores speak DuckDB's).
STORE_DIALECTS = {"sqlite": "sqlite", "chdb": "clickhouse", "postgres": "postgres"}


def dialect_of(store: str) -> str:
    return STORE_DIALECTS.get(store, "duckdb")


@dataclass(frozen=True)
class Reading:
    """A question as read: which kind it is and its parameters."""

    kind: str
    params: Mapping[str, Any]


_PATTERNS: tuple[tuple[str, str], ...] = (
    *TPCH_PATTERNS,
    (
        "repeat-purchase-change",
        rf"compare the quarters (?P<q1>\d{{4}}-Q\d) \((?P<q1_start>{DATE}) to (?P<q1_end>{DATE})\) and "
        rf"(?P<q2>\d{{4}}-Q\d)\s+\((?P<q2_start>{DATE}) to (?P<q2_end>{DATE})\)",
    ),
    (
        "category-week-change",
        rf"compare the weeks (?P<w1_start>{DATE}) to (?P<w1_end>{DATE}) and (?P<w2_start>{DATE}) to (?P<w2_end>{DATE})",
    ),
    # the questions to decline first: each reads like an answerable twin below
    ("avg-interest", r"average interest rate"),
    ("category-profit-share", r"of the profit of delivered orders"),
    ("month-margin-report", r"gross_margin"),
    ("profit", r"profit margin"),
    ("causal", r"effect a late delivery causes"),
    ("market-share", r"revenue of all e-commerce shops"),
    ("count-status", r"How many orders have status '(?P<status>\w+)'"),
    ("avg-installments", r"installments over payment rows with method '(?P<method>\w+)'"),
    ("seller-freight", r"sold by seller '(?P<seller>\w+)'"),
    ("top-states", r"Which (?P<k>\d+) customer states"),
    ("category-share", r"comes from products in category '(?P<category>\w+)'"),
    ("top-sellers", r"Which (?P<k>\d+) sellers sold the most items"),
    ("avg-review", r"What is the average review score\?"),
    ("late-share", r"arrived after\s+their estimated delivery date"),
    ("payment-mismatch", r"have payments whose total differs"),
    ("category-revenue", r"revenue of delivered orders for products in category '(?P<category>\w+)'"),
    ("seller-state-items", r"sold by sellers in state '(?P<state>\w+)'"),
    ("month-report", r"orders purchased in (?P<month>\d{4}-\d{2}) \(YYYY-MM\)"),
    ("delivery-change", r"purchased\s+in (?P<m1>\d{4}-\d{2}) and those purchased in (?P<m2>\d{4}-\d{2})"),
)
DECLINE_REASONS: Mapping[str, tuple[str, ...]] = {
    "costs": ("profit", "category-profit-share", "month-margin-report", *TPCH_DECLINE),
    "causes": ("causal",),
    "outside-facts": ("market-share", "avg-interest"),
}
"""Why the data cannot answer a question: the kinds careful declines, by reason."""
DECLINE = tuple(kind for kinds in DECLINE_REASONS.values() for kind in kinds)
CROSS = ("category-revenue", "seller-state-items")


def read_question(text: str) -> Reading | None:
    """The kind and parameters of a question, or ``None`` for one this analyst cannot read."""
    for kind, pattern in _PATTERNS:
        found = re.search(pattern, text)
        if found:
            params = {k: int(v) if k in ("k", "quantity") else v for k, v in found.groupdict().items()}
            return Reading(kind, params)
    return None


def _month(column: str, dialect: str) -> str:
    if dialect == "clickhouse":
        return f"substring(toString({column}), 1, 7)"
    if dialect == "postgres":
        return f"to_char({column}, 'YYYY-MM')"
    return f"substr({column}, 1, 7)" if dialect == "sqlite" else f"strftime({column}, '%Y-%m')"


def _days(later: str, earlier: str, dialect: str) -> str:
    if dialect == "sqlite":
        return f"CAST(julianday({later}) - julianday({earlier}) AS INTEGER)"
    if dialect == "postgres":
        return f"({later} - {earlier})"
    return f"date_diff('day', {earlier}, {later})"


# The dirt each query must step around, written once so that an ablation can leave one out.
NOT_TEST = "order_id NOT LIKE 'TEST%'"  # test orders do not count
UNIQUE_REVIEWS = "SELECT DISTINCT review_id, score FROM reviews"  # the export repeats review rows
DATED = "o.delivered_at IS NOT NULL"  # some delivered orders have no delivery date
DELIVERED = f"o.status = 'delivered' AND o.{NOT_TEST}"
ITEMS = f"order_items i JOIN orders o ON o.order_id = i.order_id WHERE {DELIVERED}"
PLACED = f"o.status NOT IN ('canceled', 'unavailable') AND o.{NOT_TEST}"


def _within(column: str, p: Mapping[str, Any], period: str) -> str:
    return f"{column} >= '{p[period + '_start']}' AND {column} <= '{p[period + '_end']}'"


def _repeat_purchase_change(p: Mapping[str, Any]) -> str:
    """Per state and quarter: buyers, and buyers whose first counted order came before the quarter."""
    quarters = (
        f"{name} AS (SELECT k.state, count(DISTINCT k.customer_id) AS n, "
        f"count(DISTINCT CASE WHEN f.since < '{p[q + '_start']}' THEN k.customer_id END) AS r "
        f"FROM k JOIN f ON f.customer_id = k.customer_id WHERE {_within('k.d', p, q)} GROUP BY k.state)"
        for name, q in (("a", "q1"), ("b", "q2"))
    )
    return (
        "WITH k AS (SELECT c.state, o.customer_id, o.purchased_at AS d FROM orders o "
        f"JOIN customers c ON c.customer_id = o.customer_id WHERE {PLACED}), "
        "f AS (SELECT customer_id, min(d) AS since FROM k GROUP BY customer_id), "
        + ", ".join(quarters)
        + " SELECT a.state FROM a JOIN b ON b.state = a.state "
        "WHERE a.r > 0 AND 4 * abs(b.r * a.n - a.r * b.n) >= a.r * b.n ORDER BY a.state"
    )


def _category_week_change(p: Mapping[str, Any]) -> str:
    """Items per category in each week, a week without items counting 0."""
    return (
        "WITH t AS (SELECT p.category, o.purchased_at AS d FROM order_items i "
        "JOIN orders o ON o.order_id = i.order_id JOIN products p ON p.product_id = i.product_id "
        f"WHERE {PLACED}), "
        f"c AS (SELECT category, sum(CASE WHEN {_within('d', p, 'w1')} THEN 1 ELSE 0 END) AS n1, "
        f"sum(CASE WHEN {_within('d', p, 'w2')} THEN 1 ELSE 0 END) AS n2 FROM t GROUP BY category) "
        "SELECT category FROM c WHERE n1 > 0 AND 4 * abs(n2 - n1) >= n1 ORDER BY category"
    )


def solution(kind: str, p: Mapping[str, Any], dialect: str) -> str:
    """One query whose result holds the answer (templates answered from one store)."""
    tpch = tpch_solution(kind, p, dialect)
    if tpch is not None:
        return tpch
    if kind == "count-status":
        return f"SELECT count(*) AS orders FROM orders WHERE status = '{p['status']}' AND {NOT_TEST}"
    if kind == "avg-installments":
        return f"SELECT coalesce(avg(installments), 0) AS avg_installments FROM payments WHERE method = '{p['method']}'"
    if kind == "seller-freight":
        return (
            f"SELECT coalesce(sum(freight), 0) AS freight FROM order_items WHERE seller_id = '{p['seller']}'"
        )
    if kind == "top-states":
        return (
            "SELECT c.state, sum(i.price) AS revenue FROM order_items i JOIN orders o ON o.order_id = i.order_id "
            f"JOIN customers c ON c.customer_id = o.customer_id WHERE {DELIVERED} "
            f"GROUP BY c.state ORDER BY revenue DESC, c.state LIMIT {int(p['k'])}"
        )
    if kind == "category-share":
        return (
            f"SELECT sum(CASE WHEN p.category = '{p['category']}' THEN i.price ELSE 0 END) / sum(i.price) AS share "
            f"FROM order_items i JOIN orders o ON o.order_id = i.order_id JOIN products p ON p.product_id = i.product_id "
            f"WHERE {DELIVERED}"
        )
    if kind == "top-sellers":
        return (
            f"SELECT i.seller_id, count(*) AS items FROM {ITEMS} "
            f"GROUP BY i.seller_id ORDER BY items DESC, i.seller_id LIMIT {int(p['k'])}"
        )
    if kind == "avg-review":
        return f"SELECT avg(score) AS avg_score FROM ({UNIQUE_REVIEWS}) AS r"
    if kind == "late-share":
        return (
            "SELECT coalesce(sum(CASE WHEN o.delivered_at > o.estimated_delivery_at THEN 1 ELSE 0 END) * 1.0 "
            f"/ nullif(count(*), 0), 0) AS late_share FROM orders o WHERE {DELIVERED} AND {DATED}"
        )
    if kind == "payment-mismatch":
        return (
            f"WITH due AS (SELECT i.order_id, sum(i.price + i.freight) AS d FROM {ITEMS} GROUP BY i.order_id), "
            "paid AS (SELECT order_id, sum(value) AS v FROM payments GROUP BY order_id) "
            "SELECT count(*) AS mismatched FROM due LEFT JOIN paid ON paid.order_id = due.order_id "
            "WHERE abs(coalesce(paid.v, 0) - due.d) > 0.01"
        )
    if kind == "month-report":
        month = _month("o.purchased_at", dialect)
        return (
            f"WITH d AS (SELECT o.order_id FROM orders o WHERE {DELIVERED} AND {month} = '{p['month']}') "
            "SELECT (SELECT count(*) FROM d) AS delivered_orders, "
            "(SELECT coalesce(sum(price), 0) FROM order_items WHERE order_id IN (SELECT order_id FROM d)) AS revenue, "
            f"(SELECT coalesce(avg(score), 0) FROM ({UNIQUE_REVIEWS} "
            "WHERE order_id IN (SELECT order_id FROM d)) AS r) AS avg_review_score"
        )
    if kind == "delivery-change":
        month = _month("o.purchased_at", dialect)
        days = _days("o.delivered_at", "o.purchased_at", dialect)
        return (
            f"WITH t AS (SELECT c.state, {month} AS m, {days} AS d FROM orders o "
            f"JOIN customers c ON c.customer_id = o.customer_id WHERE {DELIVERED} AND {DATED}), "
            f"a AS (SELECT state, sum(d) AS s, count(*) AS n FROM t WHERE m = '{p['m1']}' GROUP BY state), "
            f"b AS (SELECT state, sum(d) AS s, count(*) AS n FROM t WHERE m = '{p['m2']}' GROUP BY state) "
            "SELECT a.state FROM a JOIN b ON b.state = a.state "
            "WHERE 4 * abs(b.s * a.n - a.s * b.n) >= a.s * b.n ORDER BY a.state"
        )
    if kind == "repeat-purchase-change":
        return _repeat_purchase_change(p)
    if kind == "category-week-change":
        return _category_week_change(p)
    raise ValueError(f"no single-store solution for {kind!r}")


DATA_RULES: Mapping[str, tuple[str, str]] = {
    "test-orders": (NOT_TEST, "order_id IS NOT NULL"),
    "repeated-reviews": (UNIQUE_REVIEWS, UNIQUE_REVIEWS.replace("DISTINCT ", "")),
    "undated-deliveries": (f" AND {DATED}", ""),
}
"""Each rule of the data a query obeys: its SQL, and what a query that ignores the rule has there."""


def ignoring(query: str, rules: Collection[str]) -> str:
    """``query`` with the named :data:`DATA_RULES` left out (an ablation's query)."""
    for rule in rules:
        kept, ignored = DATA_RULES[rule]
        query = query.replace(kept, ignored)
    return query


def catalog_page(kind: str, p: Mapping[str, Any], offset: int) -> str:
    """A page of the catalog ids a cross-store question filters on (the lake's side)."""
    if kind == "category-revenue":
        where = f"FROM products WHERE category = '{p['category']}' ORDER BY product_id"
        return f"SELECT product_id {where} LIMIT {PAGE} OFFSET {offset}"
    where = f"FROM sellers WHERE state = '{p['state']}' ORDER BY seller_id"
    return f"SELECT seller_id {where} LIMIT {PAGE} OFFSET {offset}"


def cross_query(kind: str, ids: Sequence[str]) -> str:
    """The order side of a cross-store question, the catalog's ids written in (the sqlite side)."""
    listed = ", ".join(f"'{i}'" for i in ids) or "NULL"
    if kind == "category-revenue":
        return f"SELECT coalesce(sum(i.price), 0) AS revenue FROM {ITEMS} AND i.product_id IN ({listed})"
    return f"SELECT count(*) AS items FROM {ITEMS} AND i.seller_id IN ({listed})"


def answer_from(kind: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Any:
    """The answer a solution's result holds."""
    if kind.startswith("tpch-") and kind not in ("tpch-forecast-revenue", "tpch-promotion-effect"):
        return tpch_answer(kind, [list(row) for row in rows])
    if kind in ("top-states", "delivery-change", "repeat-purchase-change", "category-week-change"):
        return [row[0] for row in rows]
    if kind == "top-sellers":
        return [[row[0], row[1]] for row in rows]
    if kind == "month-report":
        return dict(zip(columns, rows[0], strict=True))
    value = rows[0][0]
    return 0 if value is None else value


__all__ = [
    "CROSS",
    "DATA_RULES",
    "DECLINE",
    "DECLINE_REASONS",
    "PAGE",
    "STORE_DIALECTS",
    "Reading",
    "answer_from",
    "catalog_page",
    "cross_query",
    "dialect_of",
    "ignoring",
    "read_question",
    "solution",
]
