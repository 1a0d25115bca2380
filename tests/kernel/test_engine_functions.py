"""SQLite's functions are on an allow-list: every one the engine lists is sorted, the rest refused."""

from __future__ import annotations

import sqlite3

import pytest

from batchgate_gym.kernel.engine_functions import SQLITE, FunctionLists, names
from batchgate_gym.kernel.sqlguard import SqlGuard, SqlRefused


def guarded(deterministic: bool = True) -> SqlGuard:
    conn = sqlite3.connect(":memory:", isolation_level=None, cached_statements=0)
    return SqlGuard(conn, deterministic=deterministic)


def test_every_function_sqlite_lists_is_allowed_or_refused() -> None:
    guard = guarded()
    catalogue = [row[0] for row in guard.conn.execute("PRAGMA function_list").fetchall()]
    assert len(catalogue) > 100
    assert SQLITE.unsorted(catalogue) == []


def test_fts3_tokenizer_is_refused_and_says_why() -> None:
    with pytest.raises(SqlRefused, match="native pointer"):
        guarded().run("SELECT fts3_tokenizer('simple')")


@pytest.mark.parametrize(
    "query",
    ["SELECT sqlite_version()", "SELECT changes()", "SELECT sqlite_log(1, 'x')", "SELECT zeroblob(9)"],
)
def test_functions_an_agent_does_not_need_are_refused(query: str) -> None:
    with pytest.raises(SqlRefused, match="not available here"):
        guarded().run(query)


def test_a_function_on_no_list_is_refused_by_default() -> None:
    """What an engine upgrade would bring: a function the lists never heard of."""
    guard = guarded()
    guard.conn.create_function("brand_new", 0, lambda: 1, deterministic=True)
    assert SQLITE.unsorted(["brand_new"]) == ["brand_new"]
    with pytest.raises(SqlRefused, match="not on the SQLite store's list"):
        guard.run("SELECT brand_new()")


def test_allowed_functions_answer_and_clock_ones_only_when_not_deterministic() -> None:
    assert guarded().run("SELECT abs(-2), upper('a'), json_array(1), round(2.5)").rows == [
        [2, "A", "[1]", 3.0]
    ]
    with pytest.raises(SqlRefused, match="clock"):
        guarded().run("SELECT random()")
    assert isinstance(guarded(deterministic=False).run("SELECT random()").rows[0][0], int)


def test_a_function_on_both_lists_is_a_mistake() -> None:
    with pytest.raises(ValueError, match="both allowed and refused"):
        FunctionLists("x", allowed=names("a b"), refused={"why": names("b")})
