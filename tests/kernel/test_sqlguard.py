"""The read-only guard around agent SQL (the hostile-SQL suite goes much further)."""

from __future__ import annotations

import time

import pytest
from worldcase import small_case

from batchgate_gym.desks.gate.world import GateWorld
from batchgate_gym.kernel.sqlguard import SqlBudget


@pytest.fixture
def world():
    w = GateWorld()
    w.reset(small_case())
    return w


def warehouse_state(world):
    return [
        world.conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
        for t in ("wh_orders", "wh_customers", "stg_b_1")
    ]


@pytest.mark.parametrize(
    "query",
    [
        "DELETE FROM wh_orders",
        "UPDATE wh_orders SET amount = 0",
        "INSERT INTO wh_orders SELECT * FROM wh_orders",
        "DROP TABLE stg_b_1",
        "CREATE TABLE x (a)",
        "CREATE TEMP TABLE x (a)",
        "CREATE TEMP VIEW v AS SELECT 1",
        "PRAGMA writable_schema = 1",
        "PRAGMA table_info(wh_orders)",
        "ATTACH DATABASE ':memory:' AS other",
        "BEGIN",
        "SELECT 1; DELETE FROM wh_orders",
        "SELECT zeroblob(100000000)",
        "SELECT randomblob(10)",
        "SELECT load_extension('libc')",
        "REINDEX",
        "VACUUM",
        "WITH x AS (SELECT 1) DELETE FROM wh_orders",
    ],
)
def test_writes_ddl_pragmas_and_dangerous_functions_are_refused(world, query):
    before = warehouse_state(world)
    result = world.run_sql(query)
    assert set(result) == {"error"}
    assert warehouse_state(world) == before
    assert world.ledger.entries[-1].executed is False
    assert world.load_batch("B-1")["status"] == "loaded"  # the world's own writes still work


def test_runaway_recursive_cte_is_interrupted_within_budget(world):
    started = time.perf_counter()
    result = world.run_sql(
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT max(x) FROM r"
    )
    elapsed = time.perf_counter() - started
    assert "interrupted" in result["error"] and elapsed < 2.5
    assert world.run_sql("SELECT COUNT(*) FROM stg_b_1")["rows"] == [[2]]  # still responsive


def test_wall_clock_budget_interrupts_too():
    world = GateWorld(SqlBudget(max_steps=10**12, max_seconds=0.2))
    world.reset(small_case())
    started = time.perf_counter()
    result = world.run_sql(
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT max(x) FROM r"
    )
    assert "time budget" in result["error"] and time.perf_counter() - started < 0.5


def test_value_length_and_like_limits(world):
    assert world.run_sql("SELECT printf('%.30000c', 'x')")["rows"] == [[None]]  # over the limit: no value
    assert "too big" in world.run_sql("SELECT printf('%.15000c', 'x') || printf('%.15000c', 'x')")["error"]
    assert "error" in world.run_sql("SELECT 'a' LIKE printf('%.300c', '%')")
    wide = ", ".join(f"{i} AS c{i}" for i in range(65))
    assert "too many columns" in world.run_sql(f"SELECT {wide}")["error"]


def test_repeated_query_still_reports_tables_read(world):
    for _ in range(2):
        world.run_sql("SELECT COUNT(*) FROM stg_b_2")
        assert world.ledger.entries[-1].args["tables_read"] == ["stg_b_2"]


def test_reading_sqlite_master_is_allowed(world):
    names = {row[0] for row in world.run_sql("SELECT name FROM sqlite_master WHERE type = 'table'")["rows"]}
    assert {"wh_orders", "wh_customers", "stg_b_1", "stg_b_4"} <= names


@pytest.mark.parametrize("table", ["wh_orders", "wh_customers"])
def test_a_count_answered_from_an_index_still_reads_the_table(world, table):
    plan = " ".join(row[3] for row in world.conn.execute(f"EXPLAIN QUERY PLAN SELECT count(*) FROM {table}"))
    assert "INDEX" in plan  # SQLite counts through the key index, never opening the table itself
    world.run_sql(f"SELECT count(*) FROM {table}")
    assert world.ledger.entries[-1].args["tables_read"] == [table]
    world.run_sql(f"WITH {table}(n) AS (SELECT 1) SELECT count(*) FROM {table}")
    assert world.ledger.entries[-1].args["tables_read"] == []
