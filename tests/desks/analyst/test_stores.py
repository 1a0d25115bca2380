"""Every store is read-only by construction and bounded: a hostile suite run against each.

Writes and DDL, reading files outside the case's directory, writing files,
installing or loading extensions, the network, several statements, settings, and
queries whose result or work is huge: each is refused, or stopped at the time or
memory budget, within its budget plus a margin; afterwards the data is unchanged
and no file was written into the dataset's directory. The optional iceberg store (DuckDB over
the files of Iceberg tables) runs the suite too where its extra is installed.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest

from batchgate_gym.desks.analyst.datasets.canonical import dataset_dir
from batchgate_gym.desks.analyst.datasets.iceberg import catalog_home
from batchgate_gym.desks.analyst.datasets.market import DataSpec
from batchgate_gym.desks.analyst.engines.base import MAX_ROWS, StoreFailure, StoreRefused
from batchgate_gym.desks.analyst.engines.stores import STORES, open_store

from .hostile import refuse_all, run_bounded

SPEC = DataSpec(5, 300)
BUDGET = 0.5  # seconds: the stores are opened with a short time budget to keep the suite fast
MARGIN = 1.5  # seconds past the budget a stopped query may take to return
ONE_CALL = 1.0  # seconds: a huge single built-in call is refused before it runs

WRITES = [
    "INSERT INTO orders (order_id) VALUES ('x')",
    "UPDATE orders SET status = 'delivered'",
    "DELETE FROM reviews",
    "DROP TABLE payments",
    "CREATE TABLE t (a INT)",
    "CREATE TEMP TABLE t AS SELECT 1 AS a",
    "CREATE VIEW v AS SELECT 1 AS a",
    "ALTER TABLE orders ADD COLUMN x INT",
    "SELECT 1; DELETE FROM orders",
    "WITH x AS (SELECT 1) DELETE FROM orders",
]
FILES = [
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM read_parquet('/tmp/../etc/passwd')",
    "COPY orders TO '/tmp/batchgate-analyst-leak.csv'",
    "SELECT * FROM glob('/*')",
    "ATTACH '/tmp/batchgate-analyst-leak.db' AS leak",
    "ATTACH DATABASE ':memory:' AS m",
    "SELECT readfile('/etc/passwd')",
    "SELECT load_extension('/tmp/x.so')",
]
EXTENSIONS = [
    "INSTALL httpfs",
    "LOAD httpfs",
    "INSTALL tpch",
    "FORCE INSTALL json",
    "SET autoinstall_known_extensions = true",
    "SET enable_external_access = true",
    "PRAGMA query_only = 0",
    "SELECT * FROM duckdb_secrets()",
]
NETWORK = [
    "SELECT * FROM read_parquet('https://example.com/x.parquet')",
    "SELECT * FROM read_csv('http://127.0.0.1:1/x.csv')",
    "SELECT * FROM read_json('s3://bucket/x.json')",
]
# The engine's own catalogue and settings: its files, paths and settings, none of it the case's data.
ENGINE = [
    "SELECT current_setting('allowed_directories')",
    "SELECT * FROM duckdb_settings()",
    "SELECT * FROM duckdb_databases()",
    "SELECT sql FROM duckdb_views()",
    "SELECT * FROM pragma_database_list",
    "SELECT * FROM main.duckdb_tables()",
    "SELECT * FROM pragma_table_info('orders')",
]
HUGE = [
    "SELECT * FROM orders a, orders b, orders c, orders d",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    "SELECT count(*) FROM order_items a, order_items b, order_items c",
    "SELECT * FROM range(1000000000000)",
    "SELECT count(*) FROM (SELECT unnest(range(1000000000)))",
    "SELECT lpad('x', 1000000000, 'y')",
    "SELECT length(printf('%1000000000d', 1))",
    "SELECT string_agg(a.order_id || b.order_id, ',') FROM orders a, orders b",
]


# SQL given as text runs past every check of the statement's parse tree; a file of the case's own
# directory, named by its path, is read outside the store's tables (and a missing one failed as
# the store's fault, an infrastructure error the agent chose).
SQL_TEXT = [
    "SELECT * FROM query('SELECT random() AS r')",
    "SELECT * FROM query('SELECT name, value FROM duckdb_settings()')",
    "SELECT length(x) FROM query('SELECT repeat(''x'', 1000) AS x')",
    "SELECT * FROM query_table('orders')",
    "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT now() AS t'))",
    "SELECT count(*) FROM orders WHERE EXISTS (SELECT 1 FROM query('SELECT 1'))",
]


HAVE_ICEBERG = importlib.util.find_spec("pyiceberg") is not None
# every store DuckDB reads, the optional iceberg store's Iceberg tables too (with its extra)
DUCKDB_READ = [
    *STORES,
    pytest.param(
        "iceberg", marks=pytest.mark.skipif(not HAVE_ICEBERG, reason="needs the 'analyst-iceberg' extra")
    ),
]


@pytest.fixture(params=DUCKDB_READ)
def store(request: pytest.FixtureRequest):
    opened = open_store(request.param, SPEC, seconds=BUDGET)
    yield opened
    opened.close()


def _fingerprint(store) -> list:
    return [store.run(f"SELECT count(*) FROM {t}").rows[0][0] for t in store.tables()]


def _files(kind: str) -> set[Path]:
    folder = dataset_dir(SPEC, kind if kind in ("duckdb", "lake", "iceberg") else "files")
    return {p for p in folder.parent.rglob("*")}


@pytest.mark.parametrize(
    "queries",
    [WRITES, FILES, EXTENSIONS, NETWORK, ENGINE],
    ids=["writes", "files", "extensions", "network", "engine"],
)
def test_refused(store, queries: list[str]) -> None:
    before, files = _fingerprint(store), _files(store.name)
    refuse_all(store, queries)
    assert _fingerprint(store) == before
    assert _files(store.name) == files
    assert not Path("/tmp/batchgate-analyst-leak.csv").exists()
    assert not Path("/tmp/batchgate-analyst-leak.db").exists()


@pytest.mark.parametrize("query", HUGE, ids=range(len(HUGE)))
def test_bounded(store, query: str) -> None:
    run_bounded(store, query, BUDGET)
    assert store.run("SELECT count(*) AS n FROM orders").rows == [[300]]


def test_one_huge_builtin_call_is_refused(store) -> None:
    """A single call is one step no budget can interrupt: it is refused before it runs."""
    start = time.process_time()  # CPU time: a refusal does no work, however busy the machine
    with pytest.raises(StoreRefused):
        store.run("SELECT repeat('x', 1000000000)")  # SQLite: past the value limit; DuckDB: by name
    assert time.process_time() - start < ONE_CALL


def test_sql_as_text_and_the_cases_own_files_are_refused_as_the_agents(store) -> None:
    folder = dataset_dir(SPEC, "lake" if store.name == "sqlite" else store.name)
    if store.name == "iceberg":  # the tables' own data files, where the catalog wrote them
        folder = catalog_home(folder) / "warehouse" / "analyst" / "orders" / "data"
    own = [
        f"SELECT count(*) FROM '{folder}/nothing.parquet'",
        f"SELECT count(*) FROM '{folder}/orders.parquet'",
        f"SELECT count(*) FROM read_parquet('{folder}/nothing.parquet')",
        f"SELECT count(*) FROM read_text('{folder}/*')",
    ]
    refuse_all(store, SQL_TEXT + own)  # StoreRefused: a StoreFailure would count as infrastructure
    if store.name != "sqlite":  # a table function that computes on values still runs
        assert store.run("SELECT count(*) AS n FROM unnest([1, 2, 3])").rows == [[3]]


def test_tables_read_is_what_the_store_records(store) -> None:
    assert store.run("SELECT 42").tables_read == ()
    assert store.run("WITH orders AS (SELECT 1 AS n) SELECT n FROM orders").tables_read == ()
    joined = store.run("SELECT count(*) FROM orders o JOIN customers c ON c.customer_id = o.customer_id")
    assert joined.tables_read == ("customers", "orders")


def test_at_most_50_rows_and_a_flag(store) -> None:
    result = store.run("SELECT order_id FROM orders ORDER BY order_id")
    assert len(result.rows) == MAX_ROWS and result.truncated


def test_a_store_whose_files_vanish_fails_as_infrastructure(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("BATCHGATE_ANALYST_CACHE", str(tmp_path))
    lake = open_store("lake", SPEC)
    (dataset_dir(SPEC, "lake") / "orders.parquet").unlink()
    with pytest.raises(StoreFailure):
        lake.run("SELECT count(*) FROM orders")
    with pytest.raises(StoreRefused):  # the agent's own mistake is not an infrastructure error
        lake.run("SELECT nope FROM customers")
    lake.close()


def test_stores_over_one_dataset_are_separate_connections_and_outlive_the_cache() -> None:
    """A DuckDB store is its own connection to a database opened once per process: a query
    stopped at one store's budget leaves another store over the same data untouched, and a
    database dropped from the process's cache stays usable by the store still open on it."""
    import itertools
    import threading

    from batchgate_gym.desks.analyst.engines.duck_store import DUCK_BASES_KEPT

    first = open_store("lake", SPEC, seconds=BUDGET)
    other = open_store("lake", SPEC, seconds=5.0)
    assert first.con is not other.con
    answers: list = []
    worker = threading.Thread(target=lambda: answers.append(other.run("SELECT count(*) FROM orders").rows))
    with pytest.raises(StoreRefused, match=r"CPU budget|memory budget"):
        first.run("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r")
    worker.start()
    worker.join(10)
    assert answers == [[[300]]]
    names = sorted(first.tables())
    subsets = [s for n in range(1, len(names)) for s in itertools.combinations(names, n)]
    for visible in subsets[: DUCK_BASES_KEPT + 2]:  # each subset is a database of its own
        open_store("lake", SPEC, visible=tuple(visible)).close()
    assert first.run("SELECT count(*) FROM orders").rows == [[300]]
    with pytest.raises(StoreRefused):
        first.run("SET enable_external_access = true")
    first.close()
    other.close()


@pytest.mark.slow  # hostile SQL: 32 queries run to their budget
def test_one_action_of_32_slow_queries_is_bounded_by_the_actions_budget(store) -> None:
    """An action's queries share one budget (three queries' worth): the rest are refused at once."""
    slow = "SELECT count(*) FROM order_items a, order_items b, order_items c WHERE a.order_id < b.order_id || c.order_id"
    store.begin_action()
    started = time.thread_time()
    refusals = []
    for _ in range(32):
        try:
            store.run(slow)
        except StoreRefused as refused:
            refusals.append(str(refused))
    assert time.thread_time() - started < 3 * BUDGET + MARGIN
    assert sum("this action's queries have used their" in r for r in refusals) >= 28, refusals[-1]
    store.begin_action()
    assert store.run("SELECT count(*) AS n FROM orders").rows == [[300]]
