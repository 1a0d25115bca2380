"""The world's own statements (loads, orphan counts, the mart) are keyed by the schema.

They are cached on the world's connection and reused over the same case's image, so
that an episode whose statements are all cached never has SQLite parse the restored
schema. Keyed by the schema's digest, none of them runs compiled over another schema:
these tests watch the text of every statement the world runs, and build the trap a
cookie alone would fall into (the same cookie, the warehouse tables on swapped pages).
"""

from __future__ import annotations

import dataclasses
import sqlite3

from worldcase import customer, small_case, small_case_dict

from batchgate_gym.desks.gate.cases import Case, load_cases
from batchgate_gym.desks.gate.sources import split_cases
from batchgate_gym.desks.gate.world import _SCHEMA, MART_SQL, GateWorld, PreparedCase, prepare
from batchgate_gym.kernel.sqlguard import schema_key
from batchgate_gym.kernel.sqlite_image import open_connection, schema_image


def _statements_of(world: GateWorld) -> list[str]:
    seen: list[str] = []
    world.conn.set_trace_callback(seen.append)
    return seen


def _play(world: GateWorld, case: Case) -> tuple[float, int, int]:
    """Load B-3 (customers) then B-4 (orders, needs B-3's customer): the mart and row counts."""
    world.reset(case)
    world.load_batch("B-3")
    world.load_batch("B-4")
    customers = world.conn.execute("SELECT COUNT(*) FROM wh_customers").fetchone()[0]
    orders = world.conn.execute("SELECT COUNT(*) FROM wh_orders").fetchone()[0]
    return world.mart_usd(), customers, orders


def test_every_statement_the_world_runs_names_the_schema_of_the_case_restored():
    case = small_case()
    world = GateWorld()
    seen = _statements_of(world)
    world.reset(case)
    world.load_batch("B-3")
    world.load_batch("B-4")
    world.mart_usd()
    key = f"/* schema {prepare(case).schema[1]} */ "  # type: ignore[index]
    tables = [s for s in seen if "wh_" in s]  # every statement that reads or writes the warehouse
    assert sum("INSERT INTO wh_" in s for s in tables) == 2 and any("SUM(o.amount)" in s for s in tables)
    assert [s for s in tables if not s.startswith(key)] == []


def test_the_same_cookie_over_swapped_tables_never_reuses_a_load_or_the_mart():
    """A second image of the case with the first's cookie and its warehouse tables
    created in the other order (so on each other's pages): a load keyed by cookie alone
    would write customers into the orders table."""
    case = small_case()
    world = GateWorld()
    expected = _play(world, case)
    assert expected[1:] == (3, 2)  # C1, C2 and C3; O1 and B-4's order

    swapped = _swapped_image(case)
    twin = dataclasses.replace(case, _cache={})
    twin._cache["prepared"] = swapped
    assert swapped.schema[0] == prepare(case).schema[0]  # type: ignore[index]
    assert swapped.schema != prepare(case).schema
    assert _play(world, twin) == expected  # on the world that just cached the first image's
    assert _play(world, case) == expected  # and back again
    assert _play(GateWorld(), twin) == expected


def _swapped_image(case: Case) -> PreparedCase:
    original = prepare(case)
    conn = open_connection()
    conn.deserialize(schema_image(("PRAGMA page_size=1024", _SCHEMA[1], _SCHEMA[0], *_SCHEMA[2:])))
    source = sqlite3.connect(":memory:")
    source.deserialize(original.image)
    for table in ("wh_customers", "wh_orders"):
        rows = source.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
        marks = ", ".join("?" * len(rows[0])) if rows else ""
        if rows:
            conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    for name, sql in source.execute("SELECT name, sql FROM sqlite_master WHERE name LIKE 'stg_%'"):
        conn.execute(sql)
        rows = source.execute(f'SELECT * FROM "{name}" ORDER BY rowid').fetchall()
        conn.executemany(f'INSERT INTO "{name}" VALUES ({", ".join("?" * len(rows[0]))})', rows)
    conn.execute(f"PRAGMA schema_version={original.schema[0]}")  # type: ignore[index]
    pages = dict(conn.execute("SELECT name, rootpage FROM sqlite_master WHERE type = 'table'").fetchall())
    assert pages["wh_orders"] < pages["wh_customers"]  # the other order from the built image
    return PreparedCase(case, conn.serialize(), original.listing, original.reference_mart, schema_key(conn))


def _odd_customers_case() -> dict:
    """The small case with a customers batch of awkward cells: numeric-looking, blank,
    padded, non-ASCII, a quote."""
    case = small_case_dict()
    odd = ["00123", "1e5", "", " C9 ", "Zoë", "O'Brien", "-0", "nan"]
    for batch in case["batches"]:
        if batch["table"] == "customers":
            batch["rows"] += [
                {**customer(f"X{i}"), "email": cell, "country": cell} for i, cell in enumerate(odd)
            ]
    return case


_CUSTOMERS = "SELECT rowid, customer_id, typeof(customer_id), email, country, signup_date FROM wh_customers"


def test_a_customers_load_copied_in_sqlite_stores_what_binding_the_rows_stores():
    """The loader copies a customers batch from staging; binding its rows in Python (as
    orders batches still are) must give the same warehouse, row for row, types included."""
    cases = load_cases([_odd_customers_case()])
    for case in [*cases, *split_cases("eval")]:
        for batch in case.batches:
            if batch.table != "customers":
                continue
            world = GateWorld()
            world.reset(case)
            twin = sqlite3.connect(":memory:")
            twin.deserialize(prepare(case).image)
            world.insert(batch)
            world.insert(batch)  # twice: the copy appends, as binding does
            for _ in range(2):
                twin.executemany("INSERT INTO wh_customers VALUES (?, ?, ?, ?)", batch.rows)
            order = " ORDER BY rowid"
            assert (
                world.conn.execute(_CUSTOMERS + order).fetchall()
                == twin.execute(_CUSTOMERS + order).fetchall()
            )
            assert world.mart_usd() == round(twin.execute(MART_SQL).fetchone()[0], 2)
