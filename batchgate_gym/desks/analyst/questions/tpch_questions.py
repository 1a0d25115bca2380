"""Level 7's question templates: classic TPC-H decision-support questions, conventions stated.

Each is one of the benchmark's well-known queries (pricing summary, shipping
priority, order priority checking, local supplier volume, forecasting revenue
change, promotion effect), with its parameters drawn the way the benchmark draws
them and every convention written into the question: what revenue is, which
dates are inclusive, how ties break. Date bounds are given as ``YYYY-MM-DD`` text,
so no question needs date arithmetic in SQL. One question asks for a cost the
schema does not hold (what shipping cost the company: TPC-H records what customers
were charged, never what carriers were paid): it must be declined.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from .template import COUNT, MONEY, Template

PERCENT = 0.001
REVENUE = "Revenue is l_extendedprice * (1 - l_discount)."
TABLE_NOTE = "Answer a table: one row {row} per {what}."
YEARS = (1993, 1994, 1995, 1996, 1997)
Tables = Mapping[str, pl.DataFrame]


def _one_of(rng: np.random.Generator, values: Any) -> Any:
    values = sorted(set(values))
    return values[int(rng.integers(len(values)))]


def _year(rng: np.random.Generator) -> int:
    return int(YEARS[int(rng.integers(len(YEARS)))])


def _pricing(rng: np.random.Generator, tables: Tables) -> dict[str, Any]:
    delta = int(rng.integers(60, 121))
    return {"shipped_by": (dt.date(1998, 12, 1) - dt.timedelta(days=delta)).isoformat()}


def _shipping(rng: np.random.Generator, tables: Tables) -> dict[str, Any]:
    day = dt.date(1995, 3, 1) + dt.timedelta(days=int(rng.integers(0, 31)))
    return {"segment": _one_of(rng, tables["customer"]["c_mktsegment"].to_list()), "date": day.isoformat()}


def _quarter(rng: np.random.Generator, tables: Tables) -> dict[str, Any]:
    year, month = _year(rng), 1 + 3 * int(rng.integers(0, 4))
    end = dt.date(year + (month == 10), (month + 3 - 1) % 12 + 1, 1)
    return {"start": dt.date(year, month, 1).isoformat(), "end": end.isoformat()}


def _region_year(rng: np.random.Generator, tables: Tables) -> dict[str, Any]:
    year = _year(rng)
    region = _one_of(rng, tables["region"]["r_name"].to_list())
    return {"region": region, "start": f"{year}-01-01", "end": f"{year + 1}-01-01"}


def _forecast(rng: np.random.Generator, tables: Tables) -> dict[str, Any]:
    year, discount = _year(rng), int(rng.integers(2, 10))
    return {
        "start": f"{year}-01-01",
        "end": f"{year + 1}-01-01",
        "low": f"0.{discount - 1:02d}",
        "high": f"0.{discount + 1:02d}",
        "quantity": int(rng.integers(24, 26)),
    }


def _month(rng: np.random.Generator, tables: Tables) -> dict[str, Any]:
    year, month = _year(rng), int(rng.integers(1, 13))
    end = dt.date(year + (month == 12), month % 12 + 1, 1)
    return {"start": dt.date(year, month, 1).isoformat(), "end": end.isoformat()}


def _mode_year(rng: np.random.Generator, tables: Tables) -> dict[str, Any]:
    mode, year = _one_of(rng, tables["lineitem"]["l_shipmode"].to_list()), _year(rng)
    return {"mode": mode, "start": f"{year}-01-01", "end": f"{year + 1}-01-01"}


TPCH_TEMPLATES: tuple[Template, ...] = (
    Template(
        "tpch-pricing-summary",
        7,
        "table",
        "TPC-H pricing summary: over the line items with l_shipdate on or before {shipped_by}, for each "
        "(l_returnflag, l_linestatus) pair, the total l_quantity and the number of line items. "
        + TABLE_NOTE.format(row="[l_returnflag, l_linestatus, sum_qty, count_order]", what="pair"),
        ("lineitem",),
        COUNT,
        draw=_pricing,
    ),
    Template(
        "tpch-shipping-priority",
        7,
        "table",
        "TPC-H shipping priority: which 10 unshipped orders have the highest revenue? Take orders of customers in "
        "market segment '{segment}' with o_orderdate before {date}, and only their line items with l_shipdate after "
        "{date}. "
        + REVENUE
        + " An order's revenue sums those line items. Ties go to the earlier o_orderdate, then "
        "the smaller order key. " + TABLE_NOTE.format(row="[l_orderkey, revenue]", what="order"),
        ("customer", "orders", "lineitem"),
        MONEY,
        draw=_shipping,
    ),
    Template(
        "tpch-order-priority",
        7,
        "table",
        "TPC-H order priority checking: how many orders with o_orderdate from {start} (inclusive) to {end} "
        "(exclusive) have at least one line item received after its commit date (l_commitdate < l_receiptdate)? "
        "Count each order once, per o_orderpriority. "
        + TABLE_NOTE.format(row="[o_orderpriority, order_count]", what="priority that has such orders"),
        ("orders", "lineitem"),
        COUNT,
        draw=_quarter,
    ),
    Template(
        "tpch-local-supplier-volume",
        7,
        "ranking",
        "TPC-H local supplier volume: for each nation of region '{region}', the revenue of line items whose "
        "supplier and whose order's customer are both of that nation, over orders with o_orderdate from {start} "
        "(inclusive) to {end} (exclusive). "
        + REVENUE
        + " Nations with no such line item are left out; ties go "
        "to the nation name that sorts first. Answer the nation names as a list, highest revenue first.",
        ("customer", "orders", "lineitem", "supplier", "nation", "region"),
        draw=_region_year,
    ),
    Template(
        "tpch-forecast-revenue",
        7,
        "number",
        "TPC-H forecasting revenue change: what is the total of l_extendedprice * l_discount over the line items "
        "with l_shipdate from {start} (inclusive) to {end} (exclusive), l_discount between {low} and {high} "
        "(both inclusive) and l_quantity below {quantity}? Answer the number (to within 0.01).",
        ("lineitem",),
        MONEY,
        draw=_forecast,
    ),
    Template(
        "tpch-promotion-effect",
        7,
        "number",
        "TPC-H promotion effect: what percentage (0 to 100) of the revenue of line items with l_shipdate from "
        "{start} (inclusive) to {end} (exclusive) comes from parts whose p_type starts with 'PROMO'? "
        + REVENUE,
        ("lineitem", "part"),
        PERCENT,
        draw=_month,
    ),
    Template(
        "tpch-shipping-expense",
        7,
        "decline",
        "TPC-H shipping expense: what is the total of what the carriers were paid over the line items "
        "with l_shipdate from {start} (inclusive) to {end} (exclusive) and l_shipmode '{mode}'? Answer the number "
        "(to within 0.01).",
        draw=_mode_year,
    ),
)

__all__ = ["PERCENT", "TPCH_TEMPLATES"]
