"""The analyst's reading of the TPC-H questions and the SQL that answers them.

The questions give every date bound as ``YYYY-MM-DD`` text, and every engine
compares such text with its date columns (SQLite holds dates as that text, DuckDB,
ClickHouse and PostgreSQL cast the literal), so one query serves every dialect but
where an engine needs another plan: ClickHouse joins in the order a query names its
tables, each right-hand side held in memory, so its local-supplier-volume query
narrows the orders to the span (and their customers' nations) before it meets
``lineitem`` (the six-table join as written holds the whole of ``orders`` and
``customer`` against it, past the store's memory budget from TPC-H SF 0.1 up).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DATE = r"\d{4}-\d{2}-\d{2}"
SPAN = rf"from (?P<start>{DATE}) \(inclusive\) to (?P<end>{DATE}) \(exclusive\)"
REVENUE = "l_extendedprice * (1 - l_discount)"

TPCH_PATTERNS: tuple[tuple[str, str], ...] = (
    ("tpch-pricing-summary", rf"TPC-H pricing summary: .* on or before (?P<shipped_by>{DATE})"),
    (
        "tpch-shipping-priority",
        rf"TPC-H shipping priority: .* segment '(?P<segment>[A-Z]+)' with o_orderdate before (?P<date>{DATE})",
    ),
    ("tpch-order-priority", rf"TPC-H order priority checking: .*o_orderdate {SPAN}"),
    ("tpch-local-supplier-volume", rf"TPC-H local supplier volume: .* region '(?P<region>[A-Z ]+)'.* {SPAN}"),
    (
        "tpch-forecast-revenue",
        rf"TPC-H forecasting revenue change: .* {SPAN}, l_discount between (?P<low>[\d.]+) and "
        r"(?P<high>[\d.]+) \(both inclusive\) and l_quantity below (?P<quantity>\d+)",
    ),
    ("tpch-promotion-effect", rf"TPC-H promotion effect: .* {SPAN}"),
    ("tpch-shipping-expense", r"TPC-H shipping expense:"),
)
TPCH_DECLINE = ("tpch-shipping-expense",)
TPCH_TABLES_ANSWERS = ("tpch-pricing-summary", "tpch-shipping-priority", "tpch-order-priority")


def _span(column: str, p: Mapping[str, Any]) -> str:
    return f"{column} >= '{p['start']}' AND {column} < '{p['end']}'"


def _local_supplier_volume_clickhouse(p: Mapping[str, Any]) -> str:
    """The orders of the span with their customer's nation first (a few hundred thousand rows at
    SF 1), then every line of them whose supplier is of that nation, in the region asked."""
    return (
        f"SELECT n.n_name, sum(l.{REVENUE}) AS revenue FROM lineitem l "
        "JOIN supplier s ON s.s_suppkey = l.l_suppkey "
        "JOIN nation n ON n.n_nationkey = s.s_nationkey JOIN region r ON r.r_regionkey = n.n_regionkey "
        "JOIN (SELECT o.o_orderkey, c.c_nationkey FROM orders o JOIN customer c ON c.c_custkey = o.o_custkey "
        f"WHERE {_span('o.o_orderdate', p)}) oc "
        "ON oc.o_orderkey = l.l_orderkey AND oc.c_nationkey = s.s_nationkey "
        f"WHERE r.r_name = '{p['region']}' "
        "GROUP BY n.n_name ORDER BY revenue DESC, n.n_name"
    )


def tpch_solution(kind: str, p: Mapping[str, Any], dialect: str) -> str | None:
    """The query answering a TPC-H question in ``dialect``, or ``None`` if ``kind`` is not one."""
    if kind == "tpch-local-supplier-volume" and dialect == "clickhouse":
        return _local_supplier_volume_clickhouse(p)
    if kind == "tpch-pricing-summary":
        return (
            "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, count(*) AS count_order FROM lineitem "
            f"WHERE l_shipdate <= '{p['shipped_by']}' GROUP BY l_returnflag, l_linestatus "
            "ORDER BY l_returnflag, l_linestatus"
        )
    if kind == "tpch-shipping-priority":
        return (
            f"SELECT l.l_orderkey, sum(l.{REVENUE}) AS revenue, o.o_orderdate FROM customer c "
            "JOIN orders o ON o.o_custkey = c.c_custkey JOIN lineitem l ON l.l_orderkey = o.o_orderkey "
            f"WHERE c.c_mktsegment = '{p['segment']}' AND o.o_orderdate < '{p['date']}' "
            f"AND l.l_shipdate > '{p['date']}' GROUP BY l.l_orderkey, o.o_orderdate "
            "ORDER BY revenue DESC, o.o_orderdate, l.l_orderkey LIMIT 10"
        )
    if kind == "tpch-order-priority":
        return (
            "SELECT o_orderpriority, count(*) AS order_count FROM orders o "
            f"WHERE {_span('o.o_orderdate', p)} AND o.o_orderkey IN (SELECT l_orderkey FROM lineitem "
            "WHERE l_commitdate < l_receiptdate) "
            "GROUP BY o_orderpriority ORDER BY o_orderpriority"
        )
    if kind == "tpch-local-supplier-volume":
        return (
            f"SELECT n.n_name, sum(l.{REVENUE}) AS revenue FROM lineitem l "
            "JOIN orders o ON o.o_orderkey = l.l_orderkey JOIN customer c ON c.c_custkey = o.o_custkey "
            "JOIN supplier s ON s.s_suppkey = l.l_suppkey AND s.s_nationkey = c.c_nationkey "
            "JOIN nation n ON n.n_nationkey = s.s_nationkey JOIN region r ON r.r_regionkey = n.n_regionkey "
            f"WHERE r.r_name = '{p['region']}' AND {_span('o.o_orderdate', p)} "
            "GROUP BY n.n_name ORDER BY revenue DESC, n.n_name"
        )
    if kind == "tpch-forecast-revenue":
        return (
            "SELECT coalesce(sum(l_extendedprice * l_discount), 0) AS revenue_change FROM lineitem "
            f"WHERE {_span('l_shipdate', p)} AND l_discount BETWEEN {p['low']} AND {p['high']} "
            f"AND l_quantity < {int(p['quantity'])}"
        )
    if kind == "tpch-promotion-effect":
        return (
            f"SELECT 100.0 * sum(CASE WHEN p.p_type LIKE 'PROMO%' THEN l.{REVENUE} ELSE 0 END) "
            f"/ sum(l.{REVENUE}) AS promo_revenue FROM lineitem l JOIN part p ON p.p_partkey = l.l_partkey "
            f"WHERE {_span('l.l_shipdate', p)}"
        )
    return None


def tpch_answer(kind: str, rows: list[list[Any]]) -> Any:
    """The answer a TPC-H solution's rows hold (tables and the ranking; numbers are the caller's)."""
    if kind == "tpch-shipping-priority":
        return [[row[0], row[1]] for row in rows]
    if kind in TPCH_TABLES_ANSWERS:
        return [list(row) for row in rows]
    return [row[0] for row in rows]


__all__ = ["TPCH_DECLINE", "TPCH_PATTERNS", "TPCH_TABLES_ANSWERS", "tpch_answer", "tpch_solution"]
