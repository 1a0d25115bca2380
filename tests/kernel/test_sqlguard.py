"""The read-only guard around agent SQL (the hostile-SQL suite goes much further)."""

from __future__ import annotations

import sqlite3
import sys
import threading
import time

import pytest
from worldcase import small_case

from batchgate_gym.desks.gate.world import GateWorld
from batchgate_gym.kernel.infra import InfraFailure
from batchgate_gym.kernel.sqlguard import (
    NOT_UTF8,
    READING_ONLY,
    SqlBudget,
    SqlGuard,
    SqlRefused,
    SqlSafetyStop,
)


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
    started = time.process_time()  # CPU time: what the step budget bounds, whatever the machine's load
    result = world.run_sql(
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT max(x) FROM r"
    )
    elapsed = time.process_time() - started
    assert "interrupted" in result["error"] and elapsed < 2.5
    assert world.run_sql("SELECT COUNT(*) FROM stg_b_1")["rows"] == [[2]]  # still responsive


RUNAWAY = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT max(x) FROM r"


def test_the_wall_clock_is_only_a_safety_net_whose_stop_is_an_infra_failure():
    """Past the wall clock the query stops, as an infrastructure failure: never the agent's refusal."""
    world = GateWorld(SqlBudget(max_steps=10**12, max_action_steps=10**12, max_seconds=0.2))
    world.reset(small_case())
    started = time.perf_counter()
    with pytest.raises(SqlSafetyStop, match="safety limit") as stop:
        world.run_sql(RUNAWAY)
    assert isinstance(stop.value, InfraFailure) and not isinstance(stop.value, SqlRefused)
    # The wall clock is the point here: the net stops a query no budget would (10**12 steps).
    # Five seconds for a 0.2 s net leaves room for a busy machine and still proves the stop.
    assert time.perf_counter() - started < 5.0
    assert world.run_sql("SELECT COUNT(*) FROM stg_b_1")["rows"] == [[2]]  # still responsive


def test_work_the_step_count_cannot_see_is_held_to_the_query_threads_cpu_time():
    """One LIKE over a long text is one VM step: the thread's CPU time bounds it, as the agent's refusal."""
    world = GateWorld(SqlBudget(max_cpu_seconds=0.3))
    world.reset(small_case())
    pattern = "'" + "%a" * 99 + "b'"
    bomb = (
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
        f"SELECT count(*) FROM r WHERE printf('%.*c', 19000, 'a') || x LIKE {pattern}"
    )
    started = time.thread_time()
    assert "CPU-time budget" in world.run_sql(bomb)["error"]
    assert time.thread_time() - started < 1.0
    assert world.ledger.entries[-1].executed is False


def test_printf_charges_its_work_as_steps(world):
    """A printf lowered to the value limit on every row is counted: the step budget stops it, not a clock."""
    per_row = (
        f"{RUNAWAY[: RUNAWAY.index(' SELECT max')]} SELECT count(printf('%.*c', 1000000000 + x, 'x')) FROM r"
    )
    assert world.run_sql(per_row)["error"] == "query interrupted: it exceeded its VM-step budget"
    assert world.run_sql("SELECT printf('%.5c', 'x')")["rows"] == [["xxxxx"]]


def test_an_episode_the_safety_net_stops_ends_unscored_and_has_no_score_to_replay():
    from batchgate_gym.desks.gate.replay import replay
    from batchgate_gym.envs.gate.text import BatchGateEnv

    case = small_case()
    env = BatchGateEnv(
        [case], sql_budget=SqlBudget(max_steps=10**12, max_action_steps=10**12, max_seconds=0.2)
    )
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step(f'run_sql("{RUNAWAY}")\nlist_batches()')
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert "safety limit" in info["infra_error"] and "score" not in info
    assert "infrastructure error" in observation and "list_batches" not in observation  # later calls not run
    log = env.export_log()
    assert log[-2]["executed"] is False and log[-2]["note"].startswith("infra: ")
    assert log[-1]["args"]["reason"].startswith("infra error: ")
    with pytest.raises(InfraFailure, match="no score"):
        replay(case, log, head=info["log_head"])


def test_the_step_budget_is_counted_not_timed(world):
    """The same query stops at the same VM step whatever the clock: its result never varies."""
    stopped = [world.run_sql(RUNAWAY)["error"] for _ in range(3)]
    assert stopped == ["query interrupted: it exceeded its VM-step budget"] * 3


def test_one_action_shares_one_step_budget():
    """Queries of one action share max_action_steps: 32 slow queries in one action are bounded."""
    world = GateWorld(SqlBudget(max_steps=2_000_000, max_action_steps=5_000_000))
    world.reset(small_case())
    world.begin_action()
    answers = [world.run_sql(RUNAWAY) for _ in range(4)]
    assert [a["error"] for a in answers[:2]] == ["query interrupted: it exceeded its VM-step budget"] * 2
    assert answers[2]["error"] == "query interrupted: it exceeded its action's VM-step budget"
    assert "used their 5,000,000 VM steps" in answers[3]["error"]
    world.begin_action()
    assert world.run_sql("SELECT COUNT(*) FROM stg_b_1")["rows"] == [[2]]
    for _ in range(3):
        world.run_sql(RUNAWAY)
    world.reset(small_case())  # a new episode: no action open, each query its own budget again
    assert [world.run_sql(RUNAWAY)["error"] for _ in range(3)] == [
        "query interrupted: it exceeded its VM-step budget"
    ] * 3


def test_the_episode_starts_a_new_step_budget_for_each_action():
    from batchgate_gym.envs.gate.text import BatchGateEnv

    env = BatchGateEnv([small_case()], sql_budget=SqlBudget(max_steps=2_000_000, max_action_steps=3_000_000))
    env.reset(seed=0)
    action = "\n".join([f'run_sql("{RUNAWAY}")'] * 32)
    started = time.process_time()
    observation = env.step(action)[0]
    assert observation.count("used their 3,000,000 VM steps") == 30
    assert time.process_time() - started < 2.0
    again = env.step('run_sql("SELECT COUNT(*) FROM stg_b_1")')[0]
    assert '"rows":[[2]]' in again.replace(" ", "")


def chained_ctes(depth: int, table: str = "stg_b_1") -> str:
    """A chain of CTEs each joining the one before to itself: 2**depth reads once expanded."""
    parts = [f"c0 AS (SELECT * FROM {table})"]
    parts += [f"c{i} AS (SELECT x.* FROM c{i - 1} x JOIN c{i - 1} y ON 1)" for i in range(1, depth + 1)]
    return "WITH " + ", ".join(parts) + f" SELECT count(*) FROM c{depth}"


def test_a_self_joined_cte_chain_is_refused_before_it_compiles(world):
    """Sixteen levels, under 900 characters: 65,536 copies once inlined, refused by counting the text."""
    query = chained_ctes(16)
    assert len(query) < 900
    started = time.process_time()
    result = world.run_sql(query)
    assert (
        "refused before compiling" in result["error"] and "tokens, over the 20,000 allowed" in result["error"]
    )
    assert time.process_time() - started < 0.5
    assert world.ledger.entries[-1].executed is False
    assert "error" not in world.run_sql(chained_ctes(3))


def test_the_compile_budget_counts_what_the_authorizer_is_asked():
    """A statement naming more than max_compile_calls tables and columns is refused while it compiles."""
    world = GateWorld(SqlBudget(max_compile_calls=200))
    world.reset(small_case())
    assert "error" not in world.run_sql(chained_ctes(3))
    assert "compiling it names too many" in world.run_sql(chained_ctes(6))["error"]


@pytest.mark.parametrize(
    "query",
    [
        "DROP TABLE x",
        "DROP TABLE stg_b_1",
        "DELETE FROM nowhere",
        "PRAGMA foo",
        "VACUUM",
        "WITH x AS (SELECT 1) DELETE FROM wh_orders",
        "REINDEX",
    ],
)
def test_a_refusal_says_only_reading_queries_are_allowed_and_which(world, query):
    error = world.run_sql(query)["error"]
    assert error == READING_ONLY
    assert "SELECT" in error and "INSERT" in error and "no such table" not in error


def test_a_lone_surrogate_is_refused_as_text_that_is_not_utf8(world):
    assert world.run_sql("SELECT '\ud800'")["error"] == NOT_UTF8


def test_deterministic_guard_refuses_the_clock_and_chance():
    import sqlite3

    guard = SqlGuard(sqlite3.connect(":memory:", cached_statements=0), deterministic=True)
    for query in (
        "SELECT random()",
        "SELECT current_timestamp",
        "SELECT date('now')",
        "SELECT date()",
        "SELECT strftime('%Y')",
        "SELECT datetime('2020-01-01', 'localtime')",
        "SELECT julianday(' NOW ')",
        "SELECT abs(random()) % 2",
    ):
        with pytest.raises(SqlRefused, match="not available"):
            guard.run(query)
    assert guard.run("SELECT date('2020-01-31', '+1 day'), strftime('%Y-%m', '2020-02-03')").rows == [
        ["2020-02-01", "2020-02"]
    ]
    plain = SqlGuard(sqlite3.connect(":memory:", cached_statements=0))
    assert plain.run("SELECT typeof(random())").rows == [["integer"]]  # only where asked


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


def test_a_guard_runs_queries_from_one_thread_after_another():
    """A server's worker pool runs a session's queries on whichever thread is free, and
    the first of them may have ended: every query is timed on its own thread's clock."""
    guard = SqlGuard(sqlite3.connect(":memory:", cached_statements=0, check_same_thread=False))
    answers = []

    def ask(value):
        answers.append(guard.run(f"SELECT {value}").rows)

    for value in range(3):
        worker = threading.Thread(target=ask, args=(value,))
        worker.start()
        worker.join()
    assert answers == [[[0]], [[1]], [[2]]]


def _distinct_wide_rows(rows: int) -> str:
    """A query that holds ``rows`` distinct rows of about 20 KB each: many bytes for few steps."""
    return (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000), "
        "w(s) AS (SELECT group_concat(printf('%019d', i), '') FROM n), "
        f"r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < {rows}) "
        "SELECT count(*) FROM (SELECT DISTINCT s || i FROM r, w)"
    )


def test_the_memory_budget_counts_sqlites_bytes_whatever_the_process_did_before():
    """The same query gets the same verdict after the process's heap filled with freed blocks.

    500 rows of 20 KB need about 11 MB: over an 8 MB budget, refused. Counted by the
    process's resident memory, the same query ran to its answer once earlier work had
    left 80 MB of freed 8 KB blocks in the heap, which SQLite's allocations reuse
    without the resident figure moving.
    """
    from batchgate_gym.kernel import sqlguard

    guard = SqlGuard(sqlite3.connect(":memory:", cached_statements=0), SqlBudget(max_memory_bytes=8 << 20))

    def verdicts() -> tuple[str, object]:
        with pytest.raises(SqlRefused) as refused:
            guard.run(_distinct_wide_rows(500))
        return str(refused.value), guard.run(_distinct_wide_rows(100)).rows

    first = verdicts()
    blocks = [bytes(8000) + bytes([i % 251]) for i in range(20_000)]
    del blocks[::2]  # freed blocks between live ones: the heap keeps them
    assert verdicts() == first == ("query interrupted: it exceeded its memory budget", [[100]])
    if sys.platform == "linux":  # CPython links its sqlite3 module to the shared library there
        assert sqlguard.MEMORY_COUNT == "sqlite"


def test_a_guard_refuses_a_connection_with_a_statement_cache_unless_it_reuses_statements():
    """Over a cache the guard knows nothing of, a query run twice was refused the second time."""
    cached = sqlite3.connect(":memory:")  # the sqlite3 module's default: 128 statements kept
    with pytest.raises(ValueError, match="cached_statements=0"):
        SqlGuard(cached)
    assert SqlGuard(cached, reuse_statements=True).run("SELECT 1").rows == [[1]]
    guard = SqlGuard(sqlite3.connect(":memory:", cached_statements=0))
    assert [guard.run("SELECT 2").rows for _ in range(2)] == [[[2]], [[2]]]
