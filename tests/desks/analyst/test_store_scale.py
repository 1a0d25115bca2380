"""The stores at TPC-H's scale: SQLite from a database file on disk, budgets that grow with the data.

At SF 1 the SQLite image (1,096 MB) was over SQLite's 1 GiB heap limit and the store
could not start; the TPC-H sqlite store now opens the dataset's database file
read-only. An honest query's work grows with the rows it reads, so every store's
counted budgets (and its wall-clock safety net) are :func:`budget_scale` times the
defaults, a function of the dataset alone. The tests use TPC-H at SF 0.01 (the
level-7 tests' dataset) and, where a budget must be seen to grow, lower the scale
factor at which budgets start growing instead of building SF 1.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from batchgate_gym.desks.analyst.datasets.canonical import canonical_tables, dataset_dir
from batchgate_gym.desks.analyst.datasets.market import DataSpec
from batchgate_gym.desks.analyst.engines import base, sqlite_store
from batchgate_gym.desks.analyst.engines.base import StoreRefused, budget_scale
from batchgate_gym.desks.analyst.engines.sqlite_store import SQLITE_BUDGET, sqlite_budget
from batchgate_gym.desks.analyst.engines.stores import open_store

SPEC = DataSpec(0, 0, tpch=0.01)
# about 60,000 lineitem rows times the 25 nations and 5 regions: over the default 20 million
# VM steps, within ten times that
HEAVY = (
    "SELECT count(*) AS n FROM lineitem l, nation n, region r "
    "WHERE l.l_quantity + n.n_nationkey + r.r_regionkey > 0"
)


def test_budget_scale_is_one_up_to_sf_01_and_grows_with_the_scale_factor_above() -> None:
    assert budget_scale(DataSpec(3, 1000)) == 1.0
    assert budget_scale(SPEC) == 1.0
    assert budget_scale(DataSpec(0, 0, tpch=0.1)) == 1.0
    assert budget_scale(DataSpec(0, 0, tpch=1.0)) == pytest.approx(10.0)
    assert budget_scale(DataSpec(0, 0, tpch=1.0, shuffle=5)) == pytest.approx(10.0)  # a copy: its dataset's


def test_the_sqlite_budget_grows_in_every_counted_limit_and_the_safety_net() -> None:
    big = sqlite_budget(DataSpec(0, 0, tpch=1.0))
    assert big.max_steps == 10 * SQLITE_BUDGET.max_steps
    assert big.max_action_steps == 10 * SQLITE_BUDGET.max_action_steps
    assert big.max_cpu_seconds == pytest.approx(10 * SQLITE_BUDGET.max_cpu_seconds)
    assert big.max_memory_bytes == 10 * SQLITE_BUDGET.max_memory_bytes
    assert big.max_seconds == pytest.approx(10 * SQLITE_BUDGET.max_seconds)
    assert big.max_rows == SQLITE_BUDGET.max_rows  # what comes back does not grow
    assert sqlite_budget(SPEC) == SQLITE_BUDGET
    assert sqlite_budget(SPEC, 1.0).max_action_cpu_seconds == 3.0


def test_a_tpch_sqlite_store_reads_its_database_file_read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_image(*_args: Any) -> bytes:
        raise AssertionError("a TPC-H dataset is not loaded as an image into the heap")

    monkeypatch.setattr(sqlite_store, "sqlite_image_of", no_image)
    store: Any = open_store("sqlite", SPEC)
    try:
        conn: sqlite3.Connection = store.guard.conn
        (_seq, _name, path), *_ = conn.execute("PRAGMA database_list").fetchall()
        assert path == str(dataset_dir(SPEC, "sqlite") / "store.sqlite")
        # orders' key is its row id: a join on it is a lookup
        assert ["o_orderkey", 1] in [[r[1], r[5]] for r in conn.execute("PRAGMA table_info(orders)")]
        assert store.run("SELECT count(*) AS n FROM orders").rows == [
            [canonical_tables(SPEC)["orders"].height]
        ]
        with pytest.raises(StoreRefused):
            store.run("DELETE FROM orders")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM orders")  # the file itself is opened read-only, not only guarded
    finally:
        store.close()


def test_a_marketplace_sqlite_store_is_still_an_image_in_memory() -> None:
    store: Any = open_store("sqlite", DataSpec(3, 200))
    try:
        path = store.guard.conn.execute("PRAGMA database_list").fetchall()[0][2]
        assert (
            not path.endswith("store.sqlite")
            and not (dataset_dir(DataSpec(3, 200), "lake").parent / "sqlite").exists()
        )
    finally:
        store.close()


def test_a_query_over_the_default_steps_runs_where_the_dataset_grants_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = open_store("sqlite", SPEC)
    try:
        with pytest.raises(StoreRefused, match="VM-step budget"):
            store.run(HEAVY)
    finally:
        store.close()
    monkeypatch.setattr(base, "BUDGET_SF", SPEC.tpch / 10)  # SF 0.01 is now ten times the base
    store = open_store("sqlite", SPEC)
    try:
        assert store.run(HEAVY).rows[0][0] > 0
    finally:
        store.close()


@pytest.mark.parametrize("kind", ("duckdb", "files"))
def test_duckdb_stores_scale_their_cpu_budget_and_safety_net(
    monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.setattr(base, "BUDGET_SF", SPEC.tpch / 10)
    store: Any = open_store(kind, SPEC)
    try:
        assert store.seconds == pytest.approx(10 * base.DUCK_CPU_SECONDS)
        assert store.safety_net == pytest.approx(10 * base.SAFETY_NET_SECONDS)
        assert store.action.per_action == pytest.approx(10 * base.DUCK_ACTION_CPU_SECONDS)
    finally:
        store.close()
    assert open_store(kind, SPEC, seconds=0.5).seconds == 0.5  # a budget asked for is kept
