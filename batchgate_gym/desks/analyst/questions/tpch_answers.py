"""Level 7's reference answers, in polars over the generator's Parquet: no SQL, no store.

The canonical TPC-H Parquet carries decimals, and every money sum here is taken in them,
exactly, then turned into a float once. A float sum depends on the order of its terms,
which a join or a group chooses and a new polars release may change (polars 2.2 moved
the promotion effect's last digit): an exact sum is the same in any order, so the
shipped splits rebuild byte for byte under any polars. Nothing here goes through the
stores' typing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import polars as pl

Tables = Mapping[str, pl.DataFrame]


def _day(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def _num(name: str) -> pl.Expr:
    return pl.col(name).cast(pl.Float64)


def _exact(name: str) -> pl.Expr:
    """A decimal(15,2) column at scale 4: polars rounds a product of decimals to the larger
    of its factors' scales, and two factors of scale 2 need 4 to be exact."""
    return pl.col(name).cast(_SCALE_4)


def _revenue() -> pl.Expr:
    """A line's discounted price, exact."""
    return _exact("l_extendedprice") * (_ONE - _exact("l_discount"))


_SCALE_4 = pl.Decimal(38, 4)
_ONE = pl.lit(Decimal(1), dtype=_SCALE_4)


def _between(column: str, p: Mapping[str, Any]) -> pl.Expr:
    return (pl.col(column) >= _day(p["start"])) & (pl.col(column) < _day(p["end"]))


def pricing_summary(tables: Tables, p: Mapping[str, Any]) -> list[list[Any]]:
    shipped = tables["lineitem"].filter(pl.col("l_shipdate") <= _day(p["shipped_by"]))
    groups = (
        shipped.group_by("l_returnflag", "l_linestatus")
        .agg(pl.col("l_quantity").sum().alias("sum_qty"), pl.len().alias("count_order"))
        .sort("l_returnflag", "l_linestatus")
    )
    return [[flag, status, float(qty), int(n)] for flag, status, qty, n in groups.iter_rows()]


def shipping_priority(tables: Tables, p: Mapping[str, Any]) -> list[list[Any]]:
    day = _day(p["date"])
    customers = tables["customer"].filter(pl.col("c_mktsegment") == p["segment"]).select("c_custkey")
    orders = (
        tables["orders"]
        .filter(pl.col("o_orderdate") < day)
        .join(customers, left_on="o_custkey", right_on="c_custkey", how="semi")
        .select("o_orderkey", "o_orderdate")
    )
    lines = tables["lineitem"].filter(pl.col("l_shipdate") > day)
    top = (
        lines.join(orders, left_on="l_orderkey", right_on="o_orderkey")
        .group_by("l_orderkey", "o_orderdate")
        .agg(_revenue().sum().alias("revenue"))
        .sort(["revenue", "o_orderdate", "l_orderkey"], descending=[True, False, False])
        .head(10)
    )
    return [[int(key), float(revenue)] for key, revenue in top.select("l_orderkey", "revenue").iter_rows()]


def order_priority(tables: Tables, p: Mapping[str, Any]) -> list[list[Any]]:
    late = tables["lineitem"].filter(pl.col("l_commitdate") < pl.col("l_receiptdate")).select("l_orderkey")
    counts = (
        tables["orders"]
        .filter(_between("o_orderdate", p))
        .join(late, left_on="o_orderkey", right_on="l_orderkey", how="semi")
        .group_by("o_orderpriority")
        .agg(pl.len().alias("order_count"))
        .sort("o_orderpriority")
    )
    return [[priority, int(n)] for priority, n in counts.iter_rows()]


def local_supplier_volume(tables: Tables, p: Mapping[str, Any]) -> list[str]:
    region = tables["region"].filter(pl.col("r_name") == p["region"])
    nations = tables["nation"].join(region, left_on="n_regionkey", right_on="r_regionkey", how="semi")
    customers = tables["customer"].select("c_custkey", "c_nationkey")
    suppliers = tables["supplier"].select("s_suppkey", "s_nationkey")
    orders = tables["orders"].filter(_between("o_orderdate", p)).select("o_orderkey", "o_custkey")
    lines = (
        tables["lineitem"]
        .join(orders, left_on="l_orderkey", right_on="o_orderkey")
        .join(customers, left_on="o_custkey", right_on="c_custkey")
        .join(suppliers, left_on="l_suppkey", right_on="s_suppkey")
        .filter(pl.col("c_nationkey") == pl.col("s_nationkey"))
        .join(nations.select("n_nationkey", "n_name"), left_on="s_nationkey", right_on="n_nationkey")
    )
    volume = (
        lines.group_by("n_name")
        .agg(_revenue().sum().alias("revenue"))
        .sort(["revenue", "n_name"], descending=[True, False])
    )
    return volume["n_name"].to_list()


def forecast_revenue(tables: Tables, p: Mapping[str, Any]) -> float:
    discount = _num("l_discount")
    picked = tables["lineitem"].filter(
        _between("l_shipdate", p)
        & (discount >= float(p["low"]))
        & (discount <= float(p["high"]))
        & (_num("l_quantity") < p["quantity"])
    )
    value = picked.select((_exact("l_extendedprice") * _exact("l_discount")).sum()).item()
    return float(value or 0.0)


def promotion_effect(tables: Tables, p: Mapping[str, Any]) -> float:
    lines = (
        tables["lineitem"]
        .filter(_between("l_shipdate", p))
        .join(tables["part"].select("p_partkey", "p_type"), left_on="l_partkey", right_on="p_partkey")
    )
    promo = pl.col("p_type").str.starts_with("PROMO")
    total, part = lines.select(
        _revenue().sum().alias("total"), _revenue().filter(promo).sum().alias("promo")
    ).row(0)
    return 100.0 * float(part) / float(total) if total else 0.0


TPCH_ANSWERS = {
    "tpch-pricing-summary": pricing_summary,
    "tpch-shipping-priority": shipping_priority,
    "tpch-order-priority": order_priority,
    "tpch-local-supplier-volume": local_supplier_volume,
    "tpch-forecast-revenue": forecast_revenue,
    "tpch-promotion-effect": promotion_effect,
}

__all__ = ["TPCH_ANSWERS"]
