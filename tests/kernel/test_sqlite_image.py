"""Database images: built once, restored as copies, filled in one transaction."""

from __future__ import annotations

import sqlite3

import pytest

from batchgate_gym.kernel.sqlguard import SqlGuard
from batchgate_gym.kernel.sqlite_image import (
    connection_from,
    open_connection,
    restore,
    schema_image,
    transaction,
)

_SCHEMA = ("CREATE TABLE t (x INTEGER)", "CREATE INDEX t_x ON t (x)")


def _count(conn: sqlite3.Connection, table: str = "t") -> int:
    return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_the_connection_is_in_autocommit_mode_and_usable_from_any_thread():
    conn = open_connection()
    conn.execute("CREATE TABLE t (x)")
    conn.execute("INSERT INTO t VALUES (1)")
    assert conn.isolation_level is None and not conn.in_transaction


def test_a_transaction_commits_once_and_rolls_back_on_an_error():
    conn = connection_from(schema_image(_SCHEMA))
    with transaction(conn):
        conn.executemany("INSERT INTO t VALUES (?)", [(1,), (2,)])
        assert conn.in_transaction
    assert _count(conn) == 2 and not conn.in_transaction
    with pytest.raises(RuntimeError), transaction(conn):
        conn.execute("INSERT INTO t VALUES (3)")
        raise RuntimeError("stop")
    assert _count(conn) == 2 and not conn.in_transaction


def test_a_schema_image_is_built_once_and_holds_the_schema():
    first = schema_image(_SCHEMA)
    assert schema_image(list(_SCHEMA)) is first
    conn = connection_from(first)
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert names == {"t", "t_x"} and _count(conn) == 0


def test_a_connection_from_an_image_is_a_copy():
    image = schema_image(_SCHEMA)
    conn = connection_from(image)
    conn.execute("INSERT INTO t VALUES (1)")
    assert _count(connection_from(image)) == 0 and conn.serialize() != image


def test_restore_replaces_the_database_and_the_guard_sees_the_new_schema():
    other = open_connection()
    other.execute("CREATE TABLE u (y)")
    conn = connection_from(schema_image(_SCHEMA))
    guard = SqlGuard(conn)
    assert guard.tables_read("SELECT * FROM t") == ("t",)
    restore(guard, other.serialize())
    assert guard.tables_read("SELECT * FROM u") == ("u",)
    assert guard.run("SELECT COUNT(*) FROM u").rows == [[0]]
    with pytest.raises(Exception, match="no such table"):
        guard.run("SELECT * FROM t")
