"""The grader's reference mart, built from the staging tables, is what the live loader makes.

The reference is computed when a case is prepared by inserting the clean batches from
their staging tables through the loader's amount function; these tests load the same
batches through the world's own loader and compare the warehouse row for row and the
mart exactly, on generated cases and on amounts chosen to be awkward for a float.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from batchgate_gym.desks.gate.cases import Case, load_cases
from batchgate_gym.desks.gate.generator import build_case
from batchgate_gym.desks.gate.world import GateWorld, _builder, _reference_mart, prepare

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
_DUMP = {
    "customers": "SELECT rowid, customer_id, email, country, signup_date FROM wh_customers ORDER BY rowid",
    "orders": "SELECT rowid, order_id, customer_id, amount, typeof(amount), currency, status, order_date"
    " FROM wh_orders ORDER BY rowid",
}


def _live_reference(case: Case) -> tuple[float, dict[str, list[Any]]]:
    """The mart and warehouse after the world's loader takes every clean batch, customers first."""
    world = GateWorld()
    world.reset(case)
    for table in ("customers", "orders"):
        for batch in case.batches:
            if batch.table == table and not batch.truth.defective:
                world.insert(batch)
    dump = {table: world.conn.execute(sql).fetchall() for table, sql in _DUMP.items()}
    return world.mart_usd(), dump


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
    # The same rows, types included, as the reference build leaves them.
    conn = _builder()  # the connection images are built on
    conn.deserialize(prepare(case).image)
    _reference_mart(conn, case)
    assert {table: conn.execute(sql).fetchall() for table, sql in _DUMP.items()} == live


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
