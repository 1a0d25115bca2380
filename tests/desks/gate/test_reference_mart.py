"""The grader's reference mart, built with the case's image, is what the live loader makes.

The reference is computed when a case is prepared by inserting the clean batches' rows,
orders with their amounts as the loader reads them, in the columns the mart reads;
these tests load the same batches through the world's own loader and compare those
columns row for row (types included) and the mart exactly, on generated cases and on
amounts chosen to be awkward for a float. The
builder keeps its own statements compiled from image to image: the last tests hold it
to compiling only what names an image's own tables, and to never running one image's
staging statements on another's.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from batchgate_gym.desks.gate import world
from batchgate_gym.desks.gate.cases import Case, load_cases
from batchgate_gym.desks.gate.contract import TABLE_COLUMNS
from batchgate_gym.desks.gate.generator import build_case
from batchgate_gym.desks.gate.world import GateWorld, _builder, _reference_mart, mart_columns, prepare

_AWKWARD = [
    "nan",
    "-nan",
    "inf",
    "-inf",
    "1e308",
    "1e400",
    "-0",
    "-0.0",
    " 12.5 ",
    "1_000",
    "",
    "abc",
    "0x10",
    "7",
]


def _mart_dump(conn: Any) -> dict[str, list[Any]]:
    """Every warehouse row's cells in the columns the mart reads, an amount's type too."""
    dump = {}
    for table, columns in mart_columns().items():
        typed = ", typeof(amount)" if "amount" in columns else ""
        sql = f"SELECT rowid, {', '.join(columns)}{typed} FROM wh_{table} ORDER BY rowid"
        dump[table] = conn.execute(sql).fetchall()
    return dump


def _live_reference(case: Case) -> tuple[float, dict[str, list[Any]]]:
    """The mart and warehouse after the world's loader takes every clean batch, customers first."""
    world = GateWorld()
    world.reset(case)
    for table in ("customers", "orders"):
        for batch in case.batches:
            if batch.table == table and not batch.truth.defective:
                world.insert(batch)
    return world.mart_usd(), _mart_dump(world.conn)


def _with_amounts(case_dict: dict[str, Any], amounts: list[str]) -> dict[str, Any]:
    out = copy.deepcopy(case_dict)
    cells = iter(amounts * 50)
    for batch in out["batches"]:
        if batch["table"] == "orders":
            for row in batch["rows"]:
                row["amount"] = next(cells)
    return out


@pytest.mark.parametrize("seed", range(40))
def test_the_reference_is_the_live_loaders_mart_on_generated_cases(seed: int) -> None:
    case = load_cases([build_case(seed)])[0]
    mart, _ = _live_reference(case)
    assert prepare(case).reference_mart == mart


@pytest.mark.parametrize("shift", range(4))
def test_awkward_amounts_give_the_same_warehouse_and_mart(shift: int) -> None:
    amounts = _AWKWARD[shift:] + _AWKWARD[:shift]
    case_dict = _with_amounts(build_case(11 + shift, rows_per_batch=(12, 12)), amounts)
    for batch in case_dict["batches"]:
        batch["truth"] = {"defective": False, "defects": []}  # every batch is in the reference
    case = load_cases([case_dict])[0]
    mart, live = _live_reference(case)
    assert repr(prepare(case).reference_mart) == repr(mart)  # a NaN mart reads as NaN in both
    # The same rows in the mart's columns, types included, as the reference build leaves them.
    conn = _builder()  # the connection images are built on
    conn.deserialize(prepare(case).image)
    _reference_mart(conn, case)
    assert _mart_dump(conn) == live


def test_the_reference_binds_the_columns_the_mart_reads_whatever_it_reads(monkeypatch: Any) -> None:
    # Asked of SQLite: the join's keys and the summed amount now; a mart that read another
    # column (or none of a table, counting its rows) would have the reference fill it.
    assert mart_columns() == {"customers": ("customer_id",), "orders": ("customer_id", "amount")}
    monkeypatch.setattr(world, "MART_SQL", "SELECT SUM(amount) FROM wh_orders WHERE status = 'paid'")
    mart_columns.cache_clear()
    try:
        assert mart_columns()["orders"] == ("amount", "status")
        assert mart_columns()["customers"] == TABLE_COLUMNS["customers"]
    finally:
        mart_columns.cache_clear()


@pytest.mark.parametrize("seed", range(6))
def test_an_image_holds_the_staged_case_only_and_its_stamped_schema(seed: int) -> None:
    """The reference is worked out inside the image's own transaction and rolled back:
    the image holds the warehouse and the staging tables as the case has them, and the
    schema key it carries is what a connection holding it reads, cookie included."""
    import sqlite3

    from batchgate_gym.kernel.sqlguard import schema_key

    case = load_cases([build_case(seed, batches=2 + seed)])[0]
    prepared = prepare(case)
    conn = sqlite3.connect(":memory:")
    conn.deserialize(prepared.image)
    assert schema_key(conn) == prepared.schema
    assert conn.execute("SELECT COUNT(*) FROM wh_customers").fetchone()[0] == len(case.customers)
    assert conn.execute("SELECT COUNT(*) FROM wh_orders").fetchone()[0] == len(case.orders)
    for batch in case.batches:
        staged = conn.execute(f'SELECT * FROM "{batch.staging_table}" ORDER BY rowid').fetchall()
        assert staged == list(batch.rows)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_the_builder_compiles_only_what_names_the_new_images_staging_tables() -> None:
    """A second build of a case of the same shape compiles its staging tables' statements,
    the schema's read-back, the stamp and the restore's own ATTACH, and nothing that
    touches the warehouse: the warehouse's inserts, the reference's, the mart and the
    transaction's statements stay compiled from the first."""
    conn = _builder()
    compiled: list[tuple[int, str | None]] = []

    def watch(action: int, first: str | None, *_rest: Any) -> int:
        compiled.append((action, first))
        return 0

    first, second = (load_cases([build_case(7)])[0] for _ in range(2))
    conn.set_authorizer(watch)  # which drops every compiled statement: the first build compiles them
    try:
        prepare(first)
        compiled.clear()
        prepare(second)
    finally:
        conn.set_authorizer(None)
    staging = {batch.staging_table for batch in second.batches}
    named = {name for _action, name in compiled if name is not None}
    assert named - staging == {"sqlite_master", "schema_version", "x"}, named


def test_an_earlier_images_staging_statements_never_run_on_a_later_one() -> None:
    """Two cases stage batches of the same names over warehouses of different sizes, so
    their staging tables start on different pages: each image holds its own rows."""
    small = build_case(5)
    big = copy.deepcopy(small)
    big["warehouse"]["customers"] = big["warehouse"]["customers"] * 6
    cases = [load_cases([data])[0] for data in (small, big, small)]
    import sqlite3

    roots = []
    for case in cases:
        conn = sqlite3.connect(":memory:")
        conn.deserialize(prepare(case).image)
        for batch in case.batches:
            staged = conn.execute(f'SELECT * FROM "{batch.staging_table}" ORDER BY rowid').fetchall()
            assert staged == list(batch.rows)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        roots.append(conn.execute("SELECT rootpage FROM sqlite_master WHERE name LIKE 'stg_%'").fetchall())
    assert roots[0] != roots[1] and roots[0] == roots[2]
