"""Which SQL limits belong to one environment and which to the whole process.

Every budget limit is set on the guard's own connection, so two environments with
different budgets each enforce theirs. SQLite's hard heap limit is the process's:
no budget carries it, the first guard sets it once, and only
``set_process_heap_limit`` lowers it. Each check runs in a fresh child process,
since the heap limit, once lowered, stays lowered for the life of the process.
"""

from __future__ import annotations

import json
import subprocess
import sys

from batchgate_gym.kernel.sqlguard import PROCESS_HEAP_LIMIT_BYTES

BUDGETS_CHILD = """
import dataclasses, json, sqlite3
from batchgate_gym.kernel.sqlguard import SqlBudget, SqlGuard, SqlRefused

def heap(guard):
    return guard.conn.execute("PRAGMA hard_heap_limit").fetchone()[0]

def answer(guard, query):
    try:
        return guard.run(query).rows
    except SqlRefused as refused:
        return str(refused)

def guard(budget=None):
    return SqlGuard(sqlite3.connect(":memory:", isolation_level=None, cached_statements=0), budget)

out = {"before_any": sqlite3.connect(":memory:").execute("PRAGMA hard_heap_limit").fetchone()[0]}
first = guard()
out["first"] = heap(first)
# A second budget that differs from the default in every field, each a smaller one.
default = SqlBudget()
smaller = {f.name: getattr(default, f.name) / 2 if isinstance(getattr(default, f.name), float)
           else max(1, getattr(default, f.name) // 2) for f in dataclasses.fields(SqlBudget)}
second = guard(SqlBudget(**{**smaller, "max_value_bytes": 1000, "max_like_pattern": 20, "max_columns": 5}))
out["first_after_second"] = heap(first)
out["second"] = heap(second)

queries = {
    "value": "SELECT length(printf('%.*c', 5000, 'x'))",
    "value_concat": "SELECT length(printf('%.*c', 600, 'x') || printf('%.*c', 600, 'x'))",
    "like": "SELECT 'a' LIKE printf('%.*c', 50, '%')",
    "columns": "SELECT 1, 2, 3, 4, 5, 6",
}
for name, who in (("first", first), ("second", second), ("first_again", first)):
    out[name + "_answers"] = {key: answer(who, query) for key, query in queries.items()}
print(json.dumps(out))
"""


def run_child(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_a_second_budget_leaves_the_first_guards_heap_limit_and_each_keeps_its_own_limits() -> None:
    out = run_child(BUDGETS_CHILD)
    assert out["before_any"] == 0  # nothing sets the process's limit before the first guard
    assert out["first"] == PROCESS_HEAP_LIMIT_BYTES
    assert out["first_after_second"] == PROCESS_HEAP_LIMIT_BYTES  # a smaller budget changed nothing
    assert out["second"] == PROCESS_HEAP_LIMIT_BYTES

    wide = {"value": [[5000]], "value_concat": [[1200]], "like": [[1]], "columns": [[1, 2, 3, 4, 5, 6]]}
    assert out["first_answers"] == wide
    assert out["first_again_answers"] == wide  # the second guard did not narrow the first
    narrow = out["second_answers"]
    assert narrow["value"] == [[None]]  # printf past the second's 1,000-byte value limit
    assert "too big" in narrow["value_concat"]
    assert "LIKE or GLOB pattern too complex" in narrow["like"]
    assert "too many columns" in narrow["columns"]


LOWER_CHILD = """
import json, sqlite3
from batchgate_gym.kernel.sqlguard import SqlBudget, SqlGuard, set_process_heap_limit

def heap():
    return sqlite3.connect(":memory:").execute("PRAGMA hard_heap_limit").fetchone()[0]

out = {}
first = SqlGuard(sqlite3.connect(":memory:", cached_statements=0))
out["default"] = heap()
out["lowered"] = set_process_heap_limit(256 << 20)
out["seen"] = heap()
out["raise_refused"] = set_process_heap_limit(2 << 30)
SqlGuard(sqlite3.connect(":memory:", cached_statements=0), SqlBudget(max_value_bytes=100))
out["after_another_guard"] = heap()
print(json.dumps(out))
"""

EARLY_CHILD = """
import json, sqlite3
from batchgate_gym.kernel.sqlguard import SqlGuard, set_process_heap_limit

out = {"set": set_process_heap_limit(3 << 30)}
SqlGuard(sqlite3.connect(":memory:", cached_statements=0))
out["after_guard"] = sqlite3.connect(":memory:").execute("PRAGMA hard_heap_limit").fetchone()[0]
print(json.dumps(out))
"""


def test_the_process_heap_limit_is_lowered_only_on_purpose() -> None:
    out = run_child(LOWER_CHILD)
    assert out["default"] == PROCESS_HEAP_LIMIT_BYTES
    assert out["lowered"] == out["seen"] == 256 << 20
    assert out["raise_refused"] == 256 << 20  # SQLite only ever lowers it
    assert out["after_another_guard"] == 256 << 20


def test_a_limit_chosen_before_the_first_guard_is_kept() -> None:
    out = run_child(EARLY_CHILD)
    assert out["set"] == out["after_guard"] == 3 << 30
