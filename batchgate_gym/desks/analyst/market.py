"""A seeded marketplace: seven tables shaped like a public e-commerce export, dirt included.

Everything comes from one ``numpy`` generator seeded by the data seed, so a seed
and a scale (the order count) give the same rows in any process. Dates are days
(``datetime.date``). The dirt real exports carry is planted on purpose: repeated
review rows, canceled and unavailable orders, delivered orders with no delivery
date, payments that do not sum to the items, a few test orders (ids starting with
``TEST``). There is no cost column: revenue is not profit.

A *snapshot* (level 6) cuts the data at a date: orders purchased after it are gone,
deliveries and reviews dated after it are hidden, estimated delivery dates stay (they
are known at purchase). A declared *change* adds days to one state's deliveries from
a date on, beside whatever changes naturally.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

STATES = ("SP", "RJ", "MG", "RS", "PR", "SC", "BA", "GO")
STATE_WEIGHTS = (0.34, 0.16, 0.14, 0.09, 0.08, 0.07, 0.07, 0.05)
STATE_DELIVERY_DAYS = (7, 10, 9, 12, 11, 12, 15, 13)  # typical days to deliver, by state
CATEGORIES = (
    "bed_bath",
    "beauty",
    "books",
    "computers",
    "garden",
    "housewares",
    "sports",
    "telephony",
    "toys",
    "watches",
)
METHODS = ("credit_card", "boleto", "voucher", "debit_card")
STATUSES = ("delivered", "shipped", "canceled", "unavailable", "invoiced", "processing")
STATUS_WEIGHTS = (0.88, 0.03, 0.035, 0.02, 0.02, 0.015)
FIRST_DAY = dt.date(2017, 1, 1)
DAYS = 608  # purchases run from 2017-01-01 to 2018-08-31
MIN_SCALE, MAX_SCALE = 50, 1_000_000
TEST_ORDERS = 3

TABLES = ("customers", "sellers", "products", "orders", "order_items", "payments", "reviews")


@dataclass(frozen=True, slots=True)
class Change:
    """A declared change: deliveries to ``state`` of orders purchased from ``start`` take ``days`` longer."""

    state: str
    start: dt.date
    days: int = 7


@dataclass(frozen=True, slots=True)
class DataSpec:
    """What the rows of one dataset are a function of."""

    seed: int
    scale: int
    cutoff: dt.date | None = None
    change: Change | None = None

    def key(self) -> str:
        parts = [str(self.seed), str(self.scale), str(self.cutoff or "-")]
        if self.change is not None:
            parts.append(f"{self.change.state}+{self.change.days}@{self.change.start}")
        return "_".join(parts)


def check_scale(scale: object) -> int:
    if not isinstance(scale, int) or isinstance(scale, bool) or not MIN_SCALE <= scale <= MAX_SCALE:
        raise ValueError(f"scale must be an int in {MIN_SCALE}..{MAX_SCALE:,}, not {scale!r}")
    return scale


def _ids(prefix: str, count: int, width: int) -> list[str]:
    return [f"{prefix}{i:0{width}d}" for i in range(count)]


def _days(offsets: np.ndarray) -> list[dt.date | None]:
    base = FIRST_DAY.toordinal()
    return [None if o < 0 else dt.date.fromordinal(base + int(o)) for o in offsets]


def _round2(values: np.ndarray) -> np.ndarray:
    return np.round(values, 2)


class _Builder:
    """The tables of one seed and scale, built in dependency order."""

    def __init__(self, seed: int, scale: int) -> None:
        self.rng = np.random.default_rng([seed, scale, 20_261_130])
        self.scale = scale
        self.n_customers = max(20, int(scale * 0.8))
        self.n_sellers = min(500, max(8, scale // 40))
        self.n_products = min(2000, max(30, scale // 20))

    def build(self) -> dict[str, pl.DataFrame]:
        rng = self.rng
        cust_state = rng.choice(len(STATES), self.n_customers, p=STATE_WEIGHTS)
        seller_state = rng.choice(len(STATES), self.n_sellers, p=STATE_WEIGHTS)
        product_cat = rng.integers(0, len(CATEGORIES), self.n_products)
        orders, order_state, total = self._orders(cust_state)
        items = self._items(orders["order_id"], total)
        tables = {
            "sellers": pl.DataFrame(
                {
                    "seller_id": _ids("s", self.n_sellers, 4),
                    "state": [STATES[i] for i in seller_state],
                }
            ),
            "products": pl.DataFrame(
                {
                    "product_id": _ids("p", self.n_products, 5),
                    "category": [CATEGORIES[i] for i in product_cat],
                }
            ),
            "order_items": items,
            "payments": self._payments(orders["order_id"], items),
            "reviews": self._reviews(orders),
        }
        tables["orders"] = pl.DataFrame(
            {k: v for k, v in orders.items() if not k.startswith("_")}
        ).with_columns(
            pl.col(c).cast(pl.Date)
            for c in ("purchased_at", "approved_at", "delivered_at", "estimated_delivery_at")
        )
        tables["customers"] = self._customers(cust_state, tables["orders"])
        del order_state
        return {name: tables[name] for name in TABLES}

    def _orders(self, cust_state: np.ndarray) -> tuple[dict[str, list[Any]], np.ndarray, int]:
        rng, n = self.rng, self.scale
        customer = rng.integers(0, self.n_customers, n)
        purchased = np.sort(rng.integers(0, DAYS, n))
        status = rng.choice(len(STATUSES), n, p=STATUS_WEIGHTS)
        state = cust_state[customer]
        base = np.array(STATE_DELIVERY_DAYS)[state]
        took = np.maximum(1, np.round(base * rng.gamma(4.0, 0.25, n))).astype(int)
        delivered = np.where(status == 0, purchased + took, -1)
        missing = (status == 0) & (rng.random(n) < 0.02)  # delivered, but no date recorded
        delivered = np.where(missing, -1, delivered)
        approved = np.where((status == 2) & (rng.random(n) < 0.5), -1, purchased + rng.integers(0, 3, n))
        estimated = purchased + base + rng.integers(8, 16, n)
        order_ids = _ids("o", n, 7)
        customers = [f"c{c:06d}" for c in customer]
        test = rng.choice(n, size=min(TEST_ORDERS, n), replace=False)
        for k, index in enumerate(sorted(test)):
            order_ids[index] = f"TEST-{k:03d}"
            status[index] = 0
            delivered[index] = purchased[index] + 3
        orders: dict[str, list[Any]] = {
            "order_id": order_ids,
            "customer_id": customers,
            "status": [STATUSES[s] for s in status],
            "purchased_at": _days(purchased),
            "approved_at": _days(approved),
            "delivered_at": _days(delivered),
            "estimated_delivery_at": _days(estimated),
        }
        return orders, state, n

    def _items(self, order_ids: list[str], n: int) -> pl.DataFrame:
        rng = self.rng
        counts = rng.choice([1, 2, 3], n, p=[0.8, 0.15, 0.05])
        order_index = np.repeat(np.arange(n), counts)
        seq = np.concatenate([np.arange(1, c + 1) for c in counts]) if n else np.array([], int)
        m = len(order_index)
        price = _round2(np.exp(rng.normal(4.2, 0.8, m)).clip(5, 3000))
        freight = _round2(rng.uniform(5, 40, m))
        return pl.DataFrame(
            {
                "order_id": [order_ids[i] for i in order_index],
                "item_seq": seq.astype(np.int64),
                "product_id": [f"p{p:05d}" for p in rng.integers(0, self.n_products, m)],
                "seller_id": [f"s{s:04d}" for s in rng.integers(0, self.n_sellers, m)],
                "price": price,
                "freight": freight,
            }
        )

    def _payments(self, order_ids: list[str], items: pl.DataFrame) -> pl.DataFrame:
        rng = self.rng
        due = items.group_by("order_id").agg((pl.col("price") + pl.col("freight")).sum().alias("due"))
        due_map = dict(zip(due["order_id"].to_list(), due["due"].to_list(), strict=True))
        rows: dict[str, list] = {"order_id": [], "seq": [], "method": [], "installments": [], "value": []}
        for order_id in order_ids:
            total = round(due_map[order_id], 2)
            if rng.random() < 0.03:  # planted: payments that do not sum to the items
                total = round(total + float(rng.choice([-1, 1])) * round(float(rng.uniform(1, 30)), 2), 2)
            parts = [total]
            if rng.random() < 0.1 and total > 20:
                voucher = round(float(rng.uniform(5, total / 2)), 2)
                parts = [round(total - voucher, 2), voucher]
            for seq, value in enumerate(parts, start=1):
                method = "voucher" if seq == 2 else METHODS[int(rng.choice(4, p=[0.7, 0.2, 0.05, 0.05]))]
                rows["order_id"].append(order_id)
                rows["seq"].append(seq)
                rows["method"].append(method)
                rows["installments"].append(int(rng.integers(1, 11)) if method == "credit_card" else 1)
                rows["value"].append(value)
        return pl.DataFrame(rows, schema_overrides={"seq": pl.Int64, "installments": pl.Int64})

    def _reviews(self, orders: dict[str, list]) -> pl.DataFrame:
        rng = self.rng
        rows: dict[str, list] = {"review_id": [], "order_id": [], "score": [], "created_at": []}
        count = 0
        for order_id, delivered, estimated in zip(
            orders["order_id"], orders["delivered_at"], orders["estimated_delivery_at"], strict=True
        ):
            if delivered is None or rng.random() > 0.85:
                continue
            late = delivered > estimated
            score = (
                int(rng.choice(5, p=[0.3, 0.15, 0.2, 0.2, 0.15] if late else [0.05, 0.05, 0.1, 0.3, 0.5])) + 1
            )
            review = (
                f"r{count:07d}",
                order_id,
                score,
                delivered + dt.timedelta(days=int(rng.integers(0, 6))),
            )
            count += 1
            copies = 2 if rng.random() < 0.04 else 1  # planted: the export repeats some rows
            for _ in range(copies):
                for key, value in zip(rows, review, strict=True):
                    rows[key].append(value)
        return pl.DataFrame(
            rows,
            schema={"review_id": pl.String, "order_id": pl.String, "score": pl.Int64, "created_at": pl.Date},
        )

    def _customers(self, cust_state: np.ndarray, orders: pl.DataFrame) -> pl.DataFrame:
        first = orders.group_by("customer_id").agg(pl.col("purchased_at").min().alias("first_order_at"))
        city = self.rng.integers(1, 4, self.n_customers)
        table = pl.DataFrame(
            {
                "customer_id": [f"c{c:06d}" for c in range(self.n_customers)],
                "state": [STATES[s] for s in cust_state],
                "city": [f"{STATES[s].lower()}-city-{k}" for s, k in zip(cust_state, city, strict=True)],
            }
        )
        return table.join(first, on="customer_id", how="inner").sort("customer_id")


def generate(spec: DataSpec) -> dict[str, pl.DataFrame]:
    """The tables of ``spec``: built from its seed and scale, the change applied, then cut."""
    check_scale(spec.scale)
    tables = _Builder(spec.seed, spec.scale).build()
    if spec.change is not None:
        tables = apply_change(tables, spec.change)
    if spec.cutoff is not None:
        tables = cut(tables, spec.cutoff)
    return tables


def apply_change(tables: dict[str, pl.DataFrame], change: Change) -> dict[str, pl.DataFrame]:
    """Deliveries to ``change.state`` of orders purchased from ``change.start`` take ``change.days`` longer."""
    in_state = tables["customers"].filter(pl.col("state") == change.state)["customer_id"]
    hit = pl.col("customer_id").is_in(in_state.implode()) & (pl.col("purchased_at") >= change.start)
    orders = tables["orders"].with_columns(
        pl.when(hit & pl.col("delivered_at").is_not_null())
        .then(pl.col("delivered_at") + pl.duration(days=change.days))
        .otherwise(pl.col("delivered_at"))
        .alias("delivered_at")
    )
    moved = orders.select("order_id", "delivered_at")
    reviews = (
        tables["reviews"]
        .join(moved, on="order_id", how="left")
        .with_columns(pl.max_horizontal("created_at", "delivered_at").alias("created_at"))
        .drop("delivered_at")
    )
    return {**tables, "orders": orders, "reviews": reviews}


def cut(tables: dict[str, pl.DataFrame], cutoff: dt.date) -> dict[str, pl.DataFrame]:
    """The snapshot taken on ``cutoff``: later orders absent, later deliveries and reviews hidden."""
    orders = tables["orders"].filter(pl.col("purchased_at") <= cutoff)
    orders = orders.with_columns(
        *(
            pl.when(pl.col(c) <= cutoff).then(pl.col(c)).otherwise(None).alias(c)
            for c in ("approved_at", "delivered_at")
        )
    )
    kept = orders["order_id"].implode()
    customers = tables["customers"].filter(pl.col("first_order_at") <= cutoff)
    return {
        **tables,
        "customers": customers,
        "orders": orders,
        "order_items": tables["order_items"].filter(pl.col("order_id").is_in(kept)),
        "payments": tables["payments"].filter(pl.col("order_id").is_in(kept)),
        "reviews": tables["reviews"].filter(
            pl.col("order_id").is_in(kept) & (pl.col("created_at") <= cutoff)
        ),
    }


__all__ = [
    "CATEGORIES",
    "STATES",
    "TABLES",
    "Change",
    "DataSpec",
    "apply_change",
    "check_scale",
    "cut",
    "generate",
]
