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
import functools
from dataclasses import dataclass

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


SNAPSHOT_VERSION = "cut2"  # bumped when :func:`cut` changes what a snapshot holds
MARKET_VERSION = (
    "m2"  # bumped when the rows a seed gives change: a dataset cached under an older one is not reused
)


@dataclass(frozen=True, slots=True)
class DataSpec:
    """What the rows of one dataset are a function of."""

    seed: int
    scale: int
    cutoff: dt.date | None = None
    change: Change | None = None
    tpch: float | None = None  # level 7: a TPC-H scale factor (then seed and scale are 0)
    # A TPC-H copy's seed: the generator's rows, each non-key column's values shuffled among
    # them (TPC-H's generator takes no seed, so this is how its data is drawn anew).
    shuffle: int | None = None

    def key(self) -> str:
        if self.tpch is not None:
            shuffled = "" if self.shuffle is None else f"-shuffled{self.shuffle}"
            return f"tpch-sf{self.tpch:g}{shuffled}"
        parts = [str(self.seed), str(self.scale), str(self.cutoff or "-"), MARKET_VERSION]
        if self.cutoff is not None:
            parts.append(SNAPSHOT_VERSION)  # a snapshot cached under an older cut is not reused
        if self.change is not None:
            parts.append(f"{self.change.state}+{self.change.days}@{self.change.start}")
        return "_".join(parts)


def check_scale(scale: object) -> int:
    if not isinstance(scale, int) or isinstance(scale, bool) or not MIN_SCALE <= scale <= MAX_SCALE:
        raise ValueError(f"scale must be an int in {MIN_SCALE}..{MAX_SCALE:,}, not {scale!r}")
    return scale


def _ids(prefix: str, numbers: np.ndarray, width: int) -> pl.Series:
    """``prefix`` and each number, zero-padded to ``width`` digits: taken from the ids of
    every number below the next power of two, which are written once per process. Each
    id column would otherwise pay for two string queries of its own (the padding and the
    prefix), most of a dataset's generation, to write texts the last dataset wrote too."""
    numbers = numbers.astype(np.int64)
    bound = 1 << int(numbers.max(initial=0)).bit_length()
    return _numbered(prefix, bound, width).gather(numbers)


@functools.lru_cache(maxsize=32)
def _numbered(prefix: str, count: int, width: int) -> pl.Series:
    """The ids of 0 to ``count - 1`` (:func:`_ids`); a gather copies, so nothing changes them."""
    return prefix + pl.Series(np.arange(count, dtype=np.int64)).cast(pl.String).str.zfill(width)


def _days(offsets: np.ndarray) -> pl.Series:
    """Day offsets from :data:`FIRST_DAY` as dates; a negative offset is a missing date."""
    base = (FIRST_DAY - dt.date(1970, 1, 1)).days
    days = np.where(offsets >= 0, offsets.astype(np.int64) + base, np.nan)  # NaN: no date
    return pl.Series(days, nan_to_null=True).cast(pl.Int32).cast(pl.Date)


def _round2(values: np.ndarray) -> np.ndarray:
    return np.round(values, 2)


def _draw(rng: np.random.Generator, probabilities: tuple[float, ...], size: int) -> np.ndarray:
    return rng.choice(len(probabilities), size, p=probabilities)


class _Builder:
    """The tables of one seed and scale, built in dependency order, vectorised."""

    def __init__(self, seed: int, scale: int) -> None:
        self.rng = np.random.default_rng([seed & (2**63 - 1), scale, 20_261_130])
        self.scale = scale
        self.n_customers = max(20, int(scale * 0.8))
        self.n_sellers = min(500, max(8, scale // 40))
        self.n_products = min(2000, max(30, scale // 20))

    def build(self) -> dict[str, pl.DataFrame]:
        rng = self.rng
        # Each dataset ranks the states its own way (the same shares, shuffled), so no state
        # leads in every dataset.
        weights = tuple(rng.permutation(STATE_WEIGHTS))
        cust_state = _draw(rng, weights, self.n_customers)
        seller_state = _draw(rng, weights, self.n_sellers)
        product_cat = rng.integers(0, len(CATEGORIES), self.n_products)
        orders = self._orders(cust_state)
        items, order_index = self._items()
        tables = {
            "customers": self._customers(cust_state, orders),
            "sellers": pl.DataFrame(
                {
                    "seller_id": _ids("s", np.arange(self.n_sellers), 4),
                    "state": np.array(STATES)[seller_state],
                }
            ),
            "products": pl.DataFrame(
                {
                    "product_id": _ids("p", np.arange(self.n_products), 5),
                    "category": np.array(CATEGORIES)[product_cat],
                }
            ),
            "orders": orders.drop("_delivered", "_estimated"),
            "order_items": items.with_columns(order_id=orders["order_id"].gather(order_index)),
            "payments": self._payments(orders["order_id"], items, order_index),
            "reviews": self._reviews(orders),
        }
        tables["order_items"] = tables["order_items"].select(
            "order_id", "item_seq", "product_id", "seller_id", "price", "freight"
        )
        return {name: tables[name] for name in TABLES}

    def _orders(self, cust_state: np.ndarray) -> pl.DataFrame:
        rng, n = self.rng, self.scale
        customer = rng.integers(0, self.n_customers, n)
        purchased = np.sort(rng.integers(0, DAYS, n))
        status = _draw(rng, STATUS_WEIGHTS, n)
        state = cust_state[customer]
        base = np.array(STATE_DELIVERY_DAYS)[state]
        took = np.maximum(1, np.round(base * rng.gamma(4.0, 0.25, n))).astype(np.int64)
        delivered = np.where(status == 0, purchased + took, -1)
        missing = (status == 0) & (rng.random(n) < 0.02)  # delivered, but no date recorded
        delivered = np.where(missing, -1, delivered)
        approved = np.where((status == 2) & (rng.random(n) < 0.5), -1, purchased + rng.integers(0, 3, n))
        estimated = purchased + base + rng.integers(8, 16, n)
        order_ids = _ids("o", np.arange(n), 7)
        test = np.sort(rng.choice(n, size=min(TEST_ORDERS, n), replace=False))
        status[test] = 0
        delivered[test] = purchased[test] + 3
        order_ids = order_ids.scatter(test, [f"TEST-{k:03d}" for k in range(len(test))])
        return pl.DataFrame(
            {
                "order_id": order_ids,
                "customer_id": _ids("c", customer, 6),
                "status": np.array(STATUSES)[status],
                "purchased_at": _days(purchased),
                "approved_at": _days(approved),
                "delivered_at": _days(delivered),
                "estimated_delivery_at": _days(estimated),
                "_delivered": delivered,
                "_estimated": estimated,
            }
        )

    def _items(self) -> tuple[pl.DataFrame, np.ndarray]:
        rng, n = self.rng, self.scale
        counts = _draw(rng, (0.8, 0.15, 0.05), n) + 1
        order_index = np.repeat(np.arange(n), counts)
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        seq = np.arange(len(order_index)) - starts + 1
        m = len(order_index)
        items = pl.DataFrame(
            {
                "item_seq": seq.astype(np.int64),
                "product_id": _ids("p", rng.integers(0, self.n_products, m), 5),
                "seller_id": _ids("s", rng.integers(0, self.n_sellers, m), 4),
                "price": _round2(np.exp(rng.normal(4.2, 0.8, m)).clip(5, 3000)),
                "freight": _round2(rng.uniform(5, 40, m)),
            }
        )
        return items, order_index

    def _payments(self, order_ids: pl.Series, items: pl.DataFrame, order_index: np.ndarray) -> pl.DataFrame:
        rng, n = self.rng, self.scale
        due = np.bincount(order_index, weights=(items["price"] + items["freight"]).to_numpy(), minlength=n)
        total = np.round(due, 2)
        off = rng.random(n) < 0.03  # planted: payments that do not sum to the items
        total = np.round(total + off * rng.choice([-1.0, 1.0], n) * np.round(rng.uniform(1, 30, n), 2), 2)
        split = (rng.random(n) < 0.1) & (total > 20)
        voucher = np.round(5 + rng.random(n) * (total / 2 - 5), 2)
        first = np.where(split, np.round(total - voucher, 2), total)
        method = _draw(rng, (0.7, 0.2, 0.05, 0.05), n)
        # Credit cards pay in 1 to 10 installments; the other methods mostly in one, some in
        # two or three, each dataset at its own rate (so no method's mean is a constant).
        extra = rng.uniform(0.05, 0.35, len(METHODS))[method]
        installments = np.where(method == 0, rng.integers(1, 11, n), 1 + rng.binomial(2, extra))
        index = np.concatenate([np.arange(n), np.flatnonzero(split)])
        seq = np.concatenate([np.ones(n, np.int64), np.full(int(split.sum()), 2, np.int64)])
        methods = np.concatenate([method, np.full(int(split.sum()), METHODS.index("voucher"))])
        values = np.concatenate([first, voucher[split]])
        installs = np.concatenate([installments, np.ones(int(split.sum()), np.int64)])
        order = np.lexsort((seq, index))
        return pl.DataFrame(
            {
                "order_id": order_ids.gather(index[order]),
                "seq": seq[order],
                "method": np.array(METHODS)[methods[order]],
                "installments": installs[order].astype(np.int64),
                "value": values[order],
            }
        )

    def _reviews(self, orders: pl.DataFrame) -> pl.DataFrame:
        rng = self.rng
        delivered, estimated = orders["_delivered"].to_numpy(), orders["_estimated"].to_numpy()
        reviewed = np.flatnonzero((delivered >= 0) & (rng.random(len(delivered)) <= 0.85))
        late = delivered[reviewed] > estimated[reviewed]
        k = len(reviewed)
        happy = _draw(rng, (0.05, 0.05, 0.1, 0.3, 0.5), k)
        unhappy = _draw(rng, (0.3, 0.15, 0.2, 0.2, 0.15), k)
        score = np.where(late, unhappy, happy) + 1
        created = delivered[reviewed] + rng.integers(0, 6, k)
        copies = np.where(rng.random(k) < 0.04, 2, 1)  # planted: the export repeats some rows
        rows = np.repeat(np.arange(k), copies)
        return pl.DataFrame(
            {
                "review_id": _ids("r", rows, 7),
                "order_id": orders["order_id"].gather(reviewed[rows]),
                "score": score[rows].astype(np.int64),
                "created_at": _days(created[rows]),
            }
        )

    def _customers(self, cust_state: np.ndarray, orders: pl.DataFrame) -> pl.DataFrame:
        first = orders.group_by("customer_id").agg(pl.col("purchased_at").min().alias("first_order_at"))
        city = self.rng.integers(1, 4, self.n_customers)
        states = np.array(STATES)[cust_state]
        table = pl.DataFrame(
            {
                "customer_id": _ids("c", np.arange(self.n_customers), 6),
                "state": states,
                "city": pl.Series(np.char.lower(states.astype(str)))
                + "-city-"
                + pl.Series(city).cast(pl.String),
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
        tables = snapshot_on(tables, spec.cutoff)
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


def snapshot_on(tables: dict[str, pl.DataFrame], cutoff: dt.date) -> dict[str, pl.DataFrame]:
    """The snapshot taken on ``cutoff``: later orders absent, later deliveries and reviews hidden.

    An order delivered after the cutoff was still on its way on the day: it reads
    ``shipped``, not ``delivered`` (with its date hidden it would otherwise pass for
    a delivered order whose date was never recorded, and tell the future).
    """
    orders = tables["orders"].filter(pl.col("purchased_at") <= cutoff)
    in_transit = (pl.col("status") == "delivered") & (pl.col("delivered_at") > cutoff)
    orders = orders.with_columns(
        pl.when(in_transit).then(pl.lit("shipped")).otherwise(pl.col("status")).alias("status")
    )
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
    "MARKET_VERSION",
    "STATES",
    "TABLES",
    "Change",
    "DataSpec",
    "apply_change",
    "check_scale",
    "generate",
    "snapshot_on",
]
