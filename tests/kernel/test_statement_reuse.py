"""A guard that reuses prepared statements never reuses one over another schema.

SQLite keeps a cached statement across ``deserialize`` when the new database has the
same schema cookie, compiled against the old tables' pages: these tests build exactly
that trap (two images, one cookie, the same table names on swapped pages, a view where
a table was) and check that the guard compiles afresh under its authorizer, reads the
table the query names and refuses what the new schema makes forbidden. On the batch
gate's own connection, a statement stays correct after a load adds rows, after a
quarantine and after a new case is restored on the same connection.
"""

from __future__ import annotations

import sqlite3

import pytest
from worldcase import small_case, small_case_dict

from batchgate_gym.desks.gate.cases import load_cases
from batchgate_gym.desks.gate.world import GateWorld
from batchgate_gym.kernel.sqlguard import SqlGuard, SqlRefused
from batchgate_gym.kernel.sqlite_image import open_connection, restore, stamped_image


class CountingGuard(SqlGuard):
    """A guard that counts the authorizer's answers about agent SQL."""

    __slots__ = ("asked",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.asked = 0
        super().__init__(conn, reuse_statements=True)

    def _authorize(self, action, arg1, arg2, db, trigger):  # type: ignore[no-untyped-def]
        if self._active:
            self.asked += 1
        return super()._authorize(action, arg1, arg2, db, trigger)


def image(*statements: str, cookie: int = 7) -> bytes:
    """A database made by ``statements`` whose schema cookie is ``cookie`` (a trap: equal
    cookies for different schemas)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    for statement in statements:
        conn.execute(statement)
    conn.execute(f"PRAGMA schema_version={cookie}")
    return conn.serialize()


FIRST = image(
    "CREATE TABLE t1 (x)",
    "CREATE TABLE t2 (x)",
    "INSERT INTO t1 VALUES ('t1 of first')",
    "INSERT INTO t2 VALUES ('t2')",
)
SWAPPED = image(  # the same names on each other's pages, and the same cookie
    "CREATE TABLE t2 (x)",
    "CREATE TABLE t1 (x)",
    "INSERT INTO t2 VALUES ('t2')",
    "INSERT INTO t1 VALUES ('t1 of swapped')",
)


def guarded(first: bytes) -> CountingGuard:
    guard = CountingGuard(open_connection(cached_statements=64))
    restore(guard, first)
    return guard


def test_the_trap_is_real_sqlite_alone_reads_the_old_page():
    conn = open_connection(cached_statements=64)
    conn.deserialize(FIRST)
    assert conn.execute("SELECT x FROM t1").fetchall() == [("t1 of first",)]
    conn.deserialize(SWAPPED)
    assert conn.execute("SELECT x FROM t1").fetchall() == [("t2",)]  # the wrong table


def test_a_statement_is_reused_over_the_same_schema_without_asking_again():
    guard = guarded(FIRST)
    assert guard.run("SELECT x FROM t1").rows == [["t1 of first"]]
    asked = guard.asked
    assert asked > 0
    assert guard.run("SELECT x FROM t1").rows == [["t1 of first"]]
    restore(guard, FIRST)  # the same image again: the same schema
    result = guard.run("SELECT x FROM t1")
    assert guard.asked == asked and result.rows == [["t1 of first"]] and result.tables_read == ("t1",)


def test_a_new_schema_with_the_same_cookie_is_compiled_and_authorized_afresh():
    guard = guarded(FIRST)
    guard.run("SELECT x FROM t1")
    asked = guard.asked
    restore(guard, SWAPPED)
    result = guard.run("SELECT x FROM t1")
    assert result.rows == [["t1 of swapped"]] and result.tables_read == ("t1",)
    assert guard.asked > asked


def test_a_forbidden_function_behind_a_new_view_is_refused_after_reuse():
    table = image("CREATE TABLE v (x)", "INSERT INTO v VALUES (1)")
    view = image("CREATE VIEW v AS SELECT randomblob(8) AS x")  # same cookie, same name
    guard = guarded(table)
    assert guard.run("SELECT x FROM v").rows == [[1]]
    restore(guard, view)
    with pytest.raises(SqlRefused, match="function randomblob is not available"):
        guard.run("SELECT x FROM v")
    restore(guard, table)
    assert guard.run("SELECT x FROM v").rows == [[1]]


def test_a_table_gone_from_the_schema_is_never_read_through_an_old_statement():
    other = image("CREATE TABLE t3 (x)", "CREATE TABLE t9 (x)", "INSERT INTO t9 VALUES ('foreign')")
    guard = guarded(other)
    guard.run("SELECT x FROM t3")
    restore(guard, image("CREATE TABLE t1 (x)", "CREATE TABLE t9 (x)", "INSERT INTO t9 VALUES ('foreign')"))
    with pytest.raises(SqlRefused, match="no such table"):
        guard.run("SELECT x FROM t3")


@pytest.mark.parametrize("query", ["DELETE FROM t1", "INSERT INTO t1 VALUES (1)", "DROP TABLE t1", "VACUUM"])
def test_writes_stay_refused_however_often_they_are_sent(query):
    guard = guarded(FIRST)
    for first in (FIRST, SWAPPED, FIRST):
        restore(guard, first)
        for _ in range(2):
            with pytest.raises(SqlRefused):
                guard.run(query)
    assert guard.conn.execute("SELECT COUNT(*) FROM t1").fetchone() == (1,)


def test_forgetting_expires_every_statement():
    guard = guarded(FIRST)
    guard.run("SELECT x FROM t1")
    asked = guard.asked
    guard.forget_statements()
    assert guard.run("SELECT x FROM t1").rows == [["t1 of first"]] and guard.asked > asked


def test_an_agent_explain_runs_again_over_a_reused_statement():
    guard = guarded(FIRST)
    first = guard.run("EXPLAIN SELECT x FROM t1")
    again = guard.run("EXPLAIN SELECT x FROM t1")
    assert first.rows == again.rows and first.rows and first.tables_read == again.tables_read == ()


def test_stamped_images_get_cookies_of_their_own():
    cookies = set()
    for _ in range(3):
        conn = open_connection()
        conn.execute("CREATE TABLE t (x)")
        copy = open_connection()
        copy.deserialize(stamped_image(conn))
        cookies.add(copy.execute("PRAGMA schema_version").fetchone()[0])
    assert len(cookies) == 3


# -- on the batch gate's connection ----------------------------------------------------------


def test_after_a_load_the_reused_statement_sees_the_new_rows():
    world = GateWorld()
    world.reset(small_case())
    customers = next(b for b in world.case.batches if b.table == "customers")
    before = world.run_sql("SELECT COUNT(*) FROM wh_customers")["rows"][0][0]
    assert world.load_batch(customers.batch_id)["status"] == "loaded"
    after = world.run_sql("SELECT COUNT(*) FROM wh_customers")
    assert after["rows"][0][0] == before + len(customers.rows)
    assert world.ledger.entries[-1].args["tables_read"] == ["wh_customers"]
    assert "error" in world.run_sql("DELETE FROM wh_customers")


def reordered_case():
    """The small case with its batches in reverse order: the same staging table names,
    each on another page, and one batch's rows doubled."""
    case = small_case_dict()
    case["batches"] = case["batches"][::-1]
    case["batches"][-1]["rows"] = case["batches"][-1]["rows"] * 2
    return load_cases([case])[0]


def test_after_a_quarantine_and_on_a_new_case_the_statement_answers_for_the_world_now():
    world = GateWorld()
    world.reset(small_case())
    batch = world.case.batches[0]
    query = f'SELECT COUNT(*) FROM "{batch.staging_table}"'
    assert world.run_sql(query)["rows"] == [[len(batch.rows)]]
    world.quarantine_batch(batch.batch_id, batch.columns[0], "missing_value")
    assert world.run_sql(query)["rows"] == [[len(batch.rows)]]
    world.reset(reordered_case())  # a new case on the same connection: other pages
    rows = len(world.case.batch(batch.batch_id).rows)
    assert rows == 2 * len(batch.rows)
    assert world.run_sql(query)["rows"] == [[rows]]
    assert world.ledger.entries[-1].args["tables_read"] == [batch.staging_table]
    orders = world.case.batch("B-4")
    assert world.orphans_now(orders) == 1  # C3 is not in the warehouse yet: the world's own query too


def test_the_schema_a_world_hands_its_guard_is_the_schema_the_guard_would_read():
    from batchgate_gym.kernel.sqlguard import schema_key

    world = GateWorld()
    for case in (small_case(), reordered_case()):
        world.reset(case)
        assert world.prepared_case.schema == schema_key(world.conn)
