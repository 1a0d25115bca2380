"""The optional chdb store: read-only and bounded under a hostile suite, and careful scores as in DuckDB.

Writes, settings, files outside the case (table functions, the scalar ``file``,
``INTO OUTFILE``), the network and other servers, other databases and the
engine's own tables are refused; huge work is stopped at the time or memory
budget; results stop at 50 rows. careful scores 1.0 on the chdb split (the eval
questions DuckDB is asked, level 7's among them) with every log replayed to the
live score. Without the ``analyst-chdb`` extra these tests skip, except the one checking that
the store then says which extra to install.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from batchgate_gym.desks.analyst.datasets.canonical import cache_root
from batchgate_gym.desks.analyst.datasets.market import DataSpec
from batchgate_gym.desks.analyst.engines.base import MAX_ROWS, StoreFailure, StoreRefused
from batchgate_gym.desks.analyst.engines.stores import open_store
from batchgate_gym.desks.analyst.sources import split_cases
from batchgate_gym.evaluation import evaluate
from batchgate_gym.kernel.infra import InfraFailure
from batchgate_gym.policies.analyst.reference import CarefulAnalyst

from .hostile import careful_is_perfect, hide_module, refuse_all, run_bounded

NEEDS_CHDB = "the chdb store needs the optional 'analyst-chdb' extra (pip install chdb)"
try:
    import chdb  # noqa: F401

    HAVE_CHDB = True
except ImportError:
    HAVE_CHDB = False
needs_chdb = pytest.mark.skipif(not HAVE_CHDB, reason=NEEDS_CHDB)

SPEC = DataSpec(5, 300)
BUDGET = 0.5
SAFETY_NET_GRACE = 5.0  # seconds of wall clock past the budget a safety stop may take on a busy machine
LEAK = Path("/tmp/batchgate-analyst-chdb-leak.csv")

WRITES = [
    "INSERT INTO orders (order_id) VALUES ('x')",
    "ALTER TABLE orders DELETE WHERE 1",
    "ALTER TABLE orders UPDATE status = 'delivered' WHERE 1",
    "DELETE FROM reviews WHERE 1",
    "DROP TABLE payments",
    "TRUNCATE TABLE payments",
    "CREATE TABLE t (a Int32) ENGINE = Memory",
    "CREATE VIEW v AS SELECT 1 AS a",
    "CREATE DATABASE leak",
    "SELECT 1; DROP TABLE orders",
    "SET readonly = 0",
    "SET max_execution_time = 1000",
    "SELECT count() FROM orders SETTINGS max_memory_usage = 0",
    "SYSTEM DROP MARK CACHE",
    "KILL QUERY WHERE 1",
]
FILES = [
    "SELECT * FROM file('/etc/passwd', 'LineAsString')",
    "SELECT file('/etc/passwd')",
    "SELECT length(file('/etc/hostname')) FROM orders LIMIT 1",
    f"SELECT * FROM orders INTO OUTFILE '{LEAK}'",
    f"SELECT * FROM orders INTO OUTFILE '{LEAK}' FORMAT CSV",
    "SELECT * FROM orders FORMAT CSV",
    "SELECT * FROM file('../../../../etc/passwd', 'CSV')",
    "SELECT * FROM system.tables",
    "SELECT * FROM system.settings",
    "SELECT * FROM INFORMATION_SCHEMA.TABLES",
    "SELECT getSetting('max_memory_usage')",
    "SELECT * FROM numbers(10)",
    "SELECT * FROM merge('analyst', '.*')",
    "SELECT * FROM merge(currentDatabase(), '.*')",
    "SELECT * FROM default.orders",
]
NETWORK = [
    "SELECT * FROM url('http://127.0.0.1:1/x.csv', 'CSV')",
    "SELECT * FROM s3('https://bucket.s3.amazonaws.com/x.parquet')",
    "SELECT * FROM remote('127.0.0.1', system.one)",
    "SELECT * FROM mysql('127.0.0.1:3306', 'db', 't', 'u', 'p')",
    "SELECT * FROM postgresql('127.0.0.1:5432', 'db', 't', 'u', 'p')",
]
# Functions that tell about the host, the server or other databases, or reach a provider:
# refused by the allow-list whatever table the query reads.
OUTSIDE = [
    "SELECT getServerSetting('path') FROM orders LIMIT 1",
    "SELECT getOSKernelVersion() FROM orders LIMIT 1",
    "SELECT hasColumnInTable('system', 'tables', 'name') FROM orders LIMIT 1",
    "SELECT displayName(), hostName() FROM orders LIMIT 1",
    "SELECT version(), buildId(), uptime() FROM orders LIMIT 1",
    "SELECT queryID() FROM orders LIMIT 1",
    "SELECT currentDatabase(), currentUser(), tcpPort() FROM orders LIMIT 1",
    "SELECT aiGenerate('hello') FROM orders LIMIT 1",
    "SELECT joinGet('x', 'y', 1) FROM orders LIMIT 1",
    "SELECT dictGet('d', 'a', 1) FROM orders LIMIT 1",
    "SELECT MOD(5, 2), FQDN() FROM orders LIMIT 1",
]
HUGE = [
    "SELECT * FROM orders a, orders b, orders c, orders d",
    "SELECT count() FROM order_items a, order_items b, order_items c",
    "SELECT length(repeat('x', 1000000000))",
    "SELECT count() FROM (SELECT arrayJoin(range(100000000)) AS n)",
    "SELECT groupArray(concat(a.order_id, b.order_id)) FROM orders a, orders b",
    "SELECT sum(length(randomString(1000000))) FROM orders a, orders b",
]


@pytest.fixture
def store():
    opened = open_store("chdb", SPEC, seconds=BUDGET)
    yield opened
    opened.close()


def _fingerprint(store: Any) -> list[Any]:
    return [store.run(f"SELECT count() AS n FROM {t}").rows[0][0] for t in store.tables()]


def _files() -> set[Path]:
    return set(cache_root().rglob("*"))


@needs_chdb
@pytest.mark.parametrize(
    "queries", [WRITES, FILES, NETWORK, OUTSIDE], ids=["writes", "files", "network", "outside"]
)
@pytest.mark.slow  # hostile SQL: every refused query in chDB
def test_refused(store, queries: list[str]) -> None:
    before, files = _fingerprint(store), _files()
    refuse_all(store, queries)
    assert _fingerprint(store) == before
    assert dict(zip(store.tables(), before, strict=True))["orders"] == 300
    assert _files() == files
    assert not LEAK.exists()


@needs_chdb
@pytest.mark.parametrize("query", HUGE, ids=range(len(HUGE)))
def test_bounded(store, query: str) -> None:
    run_bounded(store, query, BUDGET)
    assert store.run("SELECT count() AS n FROM orders").rows == [[300]]


@needs_chdb
def test_value_functions_run_under_their_aliases(store) -> None:
    result = store.run(
        "SELECT mod(7, 3) AS m, replace(status, 'e', 'E') AS r, toYYYYMM(purchased_at) AS ym, "
        "countIf(status = 'delivered') OVER () AS n, toTypeName(1) AS t FROM orders ORDER BY order_id LIMIT 1"
    )
    assert result.rows[0][0] == 1 and result.rows[0][4] == "UInt8" and result.tables_read == ("orders",)
    with pytest.raises(StoreRefused, match="function getOSKernelVersion is not available"):
        store.run("SELECT getOSKernelVersion() FROM orders LIMIT 1")


@needs_chdb
def test_the_clock_is_a_safety_net_whose_stop_is_an_infrastructure_error(store) -> None:
    start = time.perf_counter()
    with pytest.raises(InfraFailure, match="safety limit"):
        store.run("SELECT count() FROM order_items a, order_items b, order_items c, order_items d")
    # The wall clock is the point (the net stops what no budget would); the bound leaves a
    # busy machine room and still proves the stop of a four-way cross join.
    assert time.perf_counter() - start < BUDGET + SAFETY_NET_GRACE
    with pytest.raises(StoreRefused, match="memory budget"):
        store.run("SELECT length(repeat('x', 1000000000))")
    assert store.run("SELECT count() AS n FROM orders").rows == [[300]]


@needs_chdb
def test_rows_cut_at_50_and_tables_read(store) -> None:
    result = store.run("SELECT order_id FROM orders ORDER BY order_id")
    assert len(result.rows) == MAX_ROWS and result.truncated
    assert [row[0] for row in result.rows] == sorted(row[0] for row in result.rows)
    assert store.run("SELECT 42").tables_read == ()
    assert store.run("WITH orders AS (SELECT 1 AS n) SELECT n FROM orders").tables_read == ()
    joined = store.run("SELECT count() FROM orders o JOIN customers c ON c.customer_id = o.customer_id")
    assert joined.tables_read == ("customers", "orders")


@needs_chdb
def test_same_rows_as_duckdb(store) -> None:
    duck = open_store("duckdb", SPEC)
    query = (
        "SELECT status, count(*) AS n, round(sum(i.price), 2) AS revenue FROM orders o "
        "LEFT JOIN order_items i ON i.order_id = o.order_id GROUP BY status ORDER BY status"
    )
    assert store.run(query).rows == duck.run(query).rows
    assert store.tables() == duck.tables()
    duck.close()


@needs_chdb
@pytest.mark.slow  # whole split
def test_careful_is_perfect_on_the_chdb_split_and_every_log_replays() -> None:
    cases = split_cases("chdb")
    assert {c.store for c in cases} == {"chdb"} and {c.level for c in cases} == {1, 2, 3, 5, 6, 7}
    careful_is_perfect(cases)


@needs_chdb
@pytest.mark.slow  # whole split, in two engines
def test_the_same_questions_score_the_same_in_duckdb() -> None:
    asked = {(c.question, c.data) for c in split_cases("chdb")}
    duck = [c for c in split_cases("eval") if c.stores == ("duckdb",)]
    duck = [c for c in duck if (c.question, c.data) in asked]
    assert len(duck) == len(asked)
    in_chdb = evaluate(CarefulAnalyst, cases=split_cases("chdb"), desk="analyst", progress=False)
    in_duck = evaluate(CarefulAnalyst, cases=duck, desk="analyst", progress=False)
    assert in_chdb.overall.mean("reward") == in_duck.overall.mean("reward") == 1.0


@needs_chdb
def test_a_dataset_dropped_under_an_open_store_is_an_infra_failure() -> None:
    from batchgate_gym.desks.analyst.engines.chdb_store import LOADED_DATASETS

    first = open_store("chdb", DataSpec(7, 50))
    for seed in range(LOADED_DATASETS):
        open_store("chdb", DataSpec(100 + seed, 50)).close()
    with pytest.raises(StoreFailure):
        first.run("SELECT count() AS n FROM orders")
    first.close()
    assert open_store("chdb", DataSpec(7, 50)).run("SELECT count() AS n FROM orders").rows == [[50]]


def test_without_the_extra_the_store_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    hide_module(monkeypatch, "chdb")
    with pytest.raises(StoreFailure, match=r"analyst-chdb"):
        open_store("chdb", SPEC)
