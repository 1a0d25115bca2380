"""Hostile SQL through ``run_sql``: refused or cut off, nothing written, work, time and memory bounded.

Every query below runs in one fresh child process (so its peak memory is the
suite's alone) against a world holding an orders and a customers batch. For each
query the child records the result, the time it took, whether any table, the
schema, the attached databases or the files around changed, and how far the
process's peak resident memory rose. The tests then hold each outcome to the
guard's budget: refused (or interrupted) unless the query is listed as one that
may answer within the output caps. A query that only the CPU-time safety net stops
(one VM instruction the step count cannot see) ends as an infrastructure failure, never
as an answer, and within that net's CPU time.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "seed_eval_curated.jsonl"
CASE_ID = "eval-dimension-fanout-0"  # one orders batch ({a}) and one customers batch ({b})
RECURSE = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)"


def _big(chars: int, char: str = "x") -> str:
    return f"printf('%.*c', {chars}, '{char}')"


HOSTILE: dict[str, str] = {
    # writes, in every form SQLite has
    "insert": "INSERT INTO wh_orders VALUES ('O-X', 'C-1', 1.0, 'USD', 'placed', '2026-09-02')",
    "insert-select": "INSERT INTO wh_customers SELECT * FROM {b}",
    "insert-returning": "INSERT INTO wh_customers VALUES ('C-X', 'x@x', 'US', '2026-01-01') RETURNING *",
    "upsert": "INSERT INTO wh_customers VALUES ('C-X', 'x@x', 'US', '2026-01-01') ON CONFLICT DO NOTHING",
    "replace": "REPLACE INTO wh_orders VALUES ('O-X', 'C-1', 1.0, 'USD', 'placed', '2026-09-02')",
    "update": "UPDATE wh_orders SET amount = 0",
    "update-staging": "UPDATE {a} SET currency = 'USD'",
    "delete": "DELETE FROM wh_customers",
    "delete-staging": "DELETE FROM {a} WHERE TRIM(amount) = ''",
    "cte-delete": "WITH doomed AS (SELECT order_id FROM wh_orders) DELETE FROM wh_orders WHERE order_id IN doomed",
    # DDL, temp objects included
    "create-table": "CREATE TABLE side (x)",
    "create-table-as": "CREATE TABLE side AS SELECT * FROM wh_orders",
    "create-temp-table": "CREATE TEMP TABLE side (x)",
    "create-view": "CREATE VIEW v AS SELECT * FROM wh_orders",
    "create-temp-view": "CREATE TEMP VIEW v AS SELECT 1",
    "create-index": "CREATE INDEX i ON wh_orders (order_id)",
    "create-trigger": "CREATE TRIGGER t AFTER INSERT ON wh_orders BEGIN DELETE FROM wh_orders; END",
    "create-temp-trigger": "CREATE TEMP TRIGGER t AFTER INSERT ON wh_orders BEGIN SELECT 1; END",
    "create-virtual": "CREATE VIRTUAL TABLE side USING fts5 (x)",
    "drop-table": "DROP TABLE wh_orders",
    "drop-staging": "DROP TABLE IF EXISTS {a}",
    "alter-rename": "ALTER TABLE wh_orders RENAME TO gone",
    "alter-add": "ALTER TABLE wh_orders ADD COLUMN extra TEXT",
    "alter-drop-column": "ALTER TABLE wh_orders DROP COLUMN amount",
    # pragmas, plain and as table-valued functions
    "pragma-query-only": "PRAGMA query_only = 0",
    "pragma-writable-schema": "PRAGMA writable_schema = ON",
    "pragma-heap": "PRAGMA hard_heap_limit = 0",
    "pragma-read": "PRAGMA table_info(wh_orders)",
    "pragma-function": "SELECT * FROM pragma_table_info('wh_orders')",
    # other databases, transactions, maintenance
    "attach-memory": "ATTACH DATABASE ':memory:' AS side",
    "attach-file": "ATTACH DATABASE '{dir}/attached.db' AS side",
    "detach": "DETACH DATABASE main",
    "begin": "BEGIN",
    "savepoint": "SAVEPOINT s",
    "rollback": "ROLLBACK",
    "vacuum": "VACUUM",
    "vacuum-into": "VACUUM INTO '{dir}/copy.db'",
    "reindex": "REINDEX",
    "analyze": "ANALYZE",
    # stacked statements
    "stacked": "SELECT 1; DELETE FROM wh_orders",
    "stacked-comment": "SELECT 1; -- only a comment\nDROP TABLE wh_orders",
    "stacked-semicolons": "SELECT 1;;; UPDATE wh_orders SET amount = 0",
    # allocation and extension functions, however spelt
    "zeroblob": "SELECT zeroblob(1000000000)",
    "zeroblob-length": "SELECT length(zeroblob(10))",
    "randomblob": "SELECT randomblob(1000000000)",
    "randomblob-quoted": 'SELECT "RandomBlob"(100)',
    "load-extension": "SELECT load_extension('{dir}/evil.so')",
    # recursive CTEs: runaway, string doubling, deep, wide rows kept for UNION
    "cte-runaway": f"{RECURSE} SELECT count(*) FROM r",
    "cte-doubling": "WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM r) SELECT max(length(s)) FROM r",
    "cte-deep": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000000000) SELECT sum(n) FROM r",
    "cte-union-wide": f"WITH RECURSIVE r(n, s) AS (SELECT 1, '' UNION SELECT n + 1, {_big(19000)} || n FROM r) SELECT max(n) FROM r",
    "cte-sorted-wide": f"{RECURSE} SELECT {_big(19000)} || n AS s FROM r ORDER BY s DESC LIMIT 1",
    # cartesian joins over every staging and warehouse table
    "cartesian": "SELECT count(*) FROM {a} a1, {b} b1, wh_orders o1, wh_customers c1, {a} a2, {b} b2, wh_orders o2, wh_customers c2",
    "cartesian-sorted": "SELECT a1.order_id FROM {a} a1, {a} a2, {a} a3, {b} b1, wh_orders o1 ORDER BY random()",
    # pattern bombs
    "like-bomb": f"{RECURSE} SELECT count(*) FROM r WHERE {_big(19000, 'a')} || n LIKE '" + "%a" * 99 + "b'",
    "glob-bomb": f"{RECURSE} SELECT count(*) FROM r WHERE {_big(19000, 'a')} || n GLOB '" + "*a" * 99 + "b'",
    "like-long-pattern": "SELECT 'a' LIKE '" + "%" * 300 + "'",
    # printf width and precision bombs
    "printf-width": "SELECT printf('%2000000000d', 1)",
    "printf-precision": "SELECT printf('%.2000000000f', 1.0)",
    "printf-over-limit": f"SELECT {_big(30000)}",
    "format-star": "SELECT format('%*d', 2000000000, 1)",
    "printf-char-repeat": "SELECT length(printf('%.1000000000c', 'x'))",
    "printf-star-repeat": "SELECT printf('%.*c', 1000000000, 'x')",
    "format-star-repeat": "SELECT format('%.*c', -2147483647, 'x')",
    "printf-repeat-per-row": f"{RECURSE} SELECT count(printf('%.*c', 1000000000 + n, 'x')) FROM r",
    # huge results
    "huge-rows": f"{RECURSE} SELECT {_big(19999)}, {_big(19999)}, {_big(19999)} FROM r",
    "wide-row": "SELECT " + ", ".join(f"{_big(19999)} AS c{i}" for i in range(64)),
    "hex-over-limit": f"SELECT hex({_big(19999)})",
    "replace-over-limit": f"SELECT replace({_big(19999, 'a')}, 'a', 'aaaa')",
    "group-concat": f"{RECURSE} SELECT group_concat({_big(19000)}) FROM r",
    "window-frame": f"{RECURSE} SELECT max(x) FROM (SELECT group_concat(n) OVER (ORDER BY n) AS x FROM r)",
    "thousand-columns": "SELECT " + ", ".join("1" for _ in range(1000)),
    # deep nesting
    "nested-parens": "SELECT " + "(" * 5000 + "1" + ")" * 5000,
    "nested-calls": "SELECT " + "abs(" * 2000 + "1" + ")" * 2000,
    "nested-subqueries": "SELECT " + "(SELECT " * 300 + "1" + ")" * 300,
    # JSON over huge inputs
    "json-group-array": f"{RECURSE} SELECT json_group_array({_big(19000)}) FROM r",
    "json-group-object": f"{RECURSE} SELECT json_group_object(n, {_big(19000)}) FROM r",
    "json-deep": f"SELECT json({_big(9000, '[')} || {_big(9000, ']')})",
    "json-each-big": f"{RECURSE} SELECT count(*) FROM r, json_each(json_array({_big(9000)}, {_big(9000)}))",
    # too long, empty, or not SQL
    "query-too-long": "SELECT 1 " + " " * 20_000,
    "empty": " ;; ",
    "not-sql": "tell me the answer",
}

# Queries that may answer, because the caps already bound what they return.
MAY_ANSWER = {
    "printf-width": "printf returns NULL past the value-length limit",
    "printf-precision": "printf returns NULL past the value-length limit",
    "printf-over-limit": "printf returns NULL past the value-length limit",
    "format-star": "format returns NULL past the value-length limit",
    "printf-char-repeat": "printf returns NULL past the value-length limit",
    "printf-star-repeat": "printf returns NULL past the value-length limit",
    "format-star-repeat": "format returns NULL past the value-length limit",
    "wide-row": "64 columns is the cap; every cell comes back cut to 200 characters",
    "huge-rows": "at most 50 rows, every cell cut to 200 characters",
}
TIME_MARGIN_S = 0.75
MEMORY_BOUND_BYTES = 160 << 20  # twice the per-query budget, plus the interpreter's own noise


def test_the_suite_is_large_and_distinct() -> None:
    assert len(HOSTILE) >= 40
    assert len(set(HOSTILE.values())) == len(HOSTILE)
    assert set(MAY_ANSWER) <= set(HOSTILE)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    workdir = tmp_path_factory.mktemp("hostile")
    done = subprocess.run(
        [sys.executable, __file__, str(workdir)], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_query_is_refused_writes_nothing_and_stays_in_budget(
    name: str, outcomes: dict[str, dict[str, Any]]
) -> None:
    from batchgate_gym.kernel.sqlguard import SqlBudget

    outcome = outcomes[name]
    budget = SqlBudget()
    if name in MAY_ANSWER:
        result = outcome["result"]
        assert "error" in result or len(result["rows"]) <= budget.max_rows
        cells = [cell for row in result.get("rows", []) for cell in row]
        assert all(not isinstance(c, str) or len(c) <= budget.max_cell_chars + 20 for c in cells)
    else:
        assert "error" in outcome["result"] or "infra" in outcome["result"], outcome["result"]
        assert outcome["logged_executed"] is False
    assert outcome["unchanged"], "a table, the schema, the attached databases or a file changed"
    assert outcome["cpu_seconds"] <= budget.max_cpu_seconds + TIME_MARGIN_S
    assert outcome["seconds"] <= budget.max_seconds
    assert outcome["peak_growth_bytes"] <= MEMORY_BOUND_BYTES


@pytest.mark.slow
def test_the_whole_suite_keeps_the_process_memory_bounded(outcomes: dict[str, dict[str, Any]]) -> None:
    total = sum(o["peak_growth_bytes"] for o in outcomes.values())
    assert total <= MEMORY_BOUND_BYTES


@pytest.mark.slow
def test_sorts_and_unions_do_not_spill_to_disk(outcomes: dict[str, dict[str, Any]]) -> None:
    for name in ("cte-union-wide", "cte-sorted-wide", "cartesian-sorted"):
        assert outcomes[name]["disk_write_bytes"] < 1 << 20, name


HEAP_CHILD = """
import json, sys
from batchgate_gym.desks.gate.cases import load_cases
from batchgate_gym.kernel.sqlguard import SqlBudget, set_process_heap_limit
from batchgate_gym.desks.gate.world import GateWorld

case = load_cases(sys.argv[1])[0]
out = {}
default = GateWorld()
out["default_limit"] = default.conn.execute("PRAGMA hard_heap_limit").fetchone()[0]
set_process_heap_limit(24 << 20)
tight = GateWorld(SqlBudget(max_memory_bytes=1 << 40, max_seconds=60.0, max_cpu_seconds=60.0))
tight.reset(case)
out["tight_limit"] = tight.conn.execute("PRAGMA hard_heap_limit").fetchone()[0]
out["hog"] = tight.run_sql(sys.argv[2])
out["after"] = tight.run_sql("SELECT COUNT(*) FROM wh_orders")
out["load"] = tight.load_batch(case.batches[0].batch_id)
later = GateWorld()
out["later_limit"] = later.conn.execute("PRAGMA hard_heap_limit").fetchone()[0]
print(json.dumps(out))
"""


def test_the_hard_heap_limit_is_process_wide_only_lowers_and_leaves_the_connection_usable() -> None:
    """SQLite's hard heap limit stops a query the other budgets let run, in a child process.

    The limit belongs to the process: lowered on purpose (``set_process_heap_limit``)
    it holds for every world in that process, and a later world cannot raise it again.
    """
    from batchgate_gym.kernel.sqlguard import PROCESS_HEAP_LIMIT_BYTES

    hog = HOSTILE["json-group-array"]
    done = subprocess.run(
        [sys.executable, "-c", HEAP_CHILD, str(FIXTURE), hog], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["default_limit"] == PROCESS_HEAP_LIMIT_BYTES
    assert out["tight_limit"] == 24 << 20
    assert "memory" in out["hog"]["error"]
    assert out["after"]["rows"][0][0] > 0
    assert out["load"]["status"] == "loaded"
    assert out["later_limit"] == 24 << 20


# -- the child process --------------------------------------------------------------------
def _peak_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _disk_writes() -> int:
    try:
        text = Path("/proc/self/io").read_text()
    except OSError:
        return 0
    fields = dict(line.split(": ") for line in text.splitlines())
    return int(fields["write_bytes"])


def fingerprint(conn: Any, workdir: Path) -> str:
    """Every row of every table, the schema, temp objects, attached databases and files."""
    digest = hashlib.sha256()
    tables = [
        row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    ]
    for table in tables:
        rows = conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid').fetchall()
        digest.update(repr((table, rows)).encode())
    for query in (
        "SELECT * FROM sqlite_master ORDER BY name",
        "SELECT * FROM sqlite_temp_master ORDER BY name",
        "PRAGMA database_list",
        "PRAGMA schema_version",
        "PRAGMA query_only",
    ):
        digest.update(repr(conn.execute(query).fetchall()).encode())
    digest.update(repr(sorted(os.listdir(workdir))).encode())
    return digest.hexdigest()


def run_suite(workdir: Path) -> dict[str, dict[str, Any]]:
    from batchgate_gym.desks.gate.cases import load_cases
    from batchgate_gym.desks.gate.world import GateWorld
    from batchgate_gym.kernel.infra import InfraFailure

    case = next(c for c in load_cases(FIXTURE) if c.case_id == CASE_ID)
    world = GateWorld()
    world.reset(case)
    tables = {b.table: b.staging_table for b in case.batches}
    names = {"a": tables["orders"], "b": tables["customers"], "dir": workdir}
    world.run_sql("SELECT 1")  # warm up before measuring
    out: dict[str, dict[str, Any]] = {}
    for name, template in HOSTILE.items():
        before, peak, writes = fingerprint(world.conn, workdir), _peak_bytes(), _disk_writes()
        started, cpu = time.perf_counter(), time.thread_time()
        logged = len(world.ledger)
        world.begin_action()  # each query is an action of its own, as an episode would make it
        try:
            result = world.run_sql(template.format(**names))
        except InfraFailure as exc:  # the safety net: the episode would end as an infrastructure error
            result = {"infra": str(exc)}
        seconds, cpu = time.perf_counter() - started, time.thread_time() - cpu
        out[name] = {
            "result": result,
            "seconds": seconds,
            "cpu_seconds": cpu,
            "unchanged": fingerprint(world.conn, workdir) == before,
            "logged_executed": len(world.ledger) > logged and world.ledger.entries[-1].executed,
            "peak_growth_bytes": _peak_bytes() - peak,
            "disk_write_bytes": _disk_writes() - writes,
        }
    return out


if __name__ == "__main__":
    print(json.dumps(run_suite(Path(sys.argv[1])), default=str))
