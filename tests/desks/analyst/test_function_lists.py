"""DuckDB's and chDB's functions are on allow-lists: every one the engine lists is sorted.

Each test reads the engine's own catalogue, so an engine upgrade that brings a function
fails here until the function is put on the allow-list or the refuse-list
(``batchgate_gym/desks/analyst/engines/function_lists.py``); and a function on neither list is
refused by the store, not let through.
"""

from __future__ import annotations

import json

import pytest

from batchgate_gym.desks.analyst.datasets.market import DataSpec
from batchgate_gym.desks.analyst.engines import chdb_store
from batchgate_gym.desks.analyst.engines.base import StoreRefused
from batchgate_gym.desks.analyst.engines.function_lists import CHDB, DUCKDB, chdb_aggregate
from batchgate_gym.desks.analyst.engines.stores import open_store
from batchgate_gym.kernel.engine_functions import FunctionLists

from .test_chdb import needs_chdb

SPEC = DataSpec(5, 300)


def test_every_function_duckdb_lists_is_allowed_or_refused() -> None:
    import duckdb

    catalogue = [
        row[0] for row in duckdb.connect().execute("SELECT function_name FROM duckdb_functions()").fetchall()
    ]
    assert len(catalogue) > 900
    assert DUCKDB.unsorted(catalogue) == []


@needs_chdb
def test_every_function_chdb_lists_is_allowed_or_refused() -> None:
    import chdb

    con = chdb.connect(":memory:")
    try:
        rows = json.loads(
            con.query("SELECT name, alias_to, is_aggregate FROM system.functions", "JSONCompact").bytes()
        )["data"]
        combinators = chdb_store.combinators(con)
    finally:
        con.close()
    assert len(rows) > 1500
    # An alias is called under the name it stands for, which must be sorted itself: that name may
    # differ in case (connection_id is connectionID, canonically connectionId) or carry a combinator.
    known = {name.lower(): name for name in CHDB.allowed | CHDB.refused_names()}
    called = [known.get((alias or name).lower(), alias or name) for name, alias, _ in rows]
    aggregates = {alias or name for name, alias, aggregate in rows if aggregate}
    listed = [chdb_aggregate(name, combinators) if name in aggregates else name for name in called]
    assert CHDB.unsorted(listed) == []


@pytest.mark.parametrize("kind", ["duckdb", "lake"])
def test_a_duckdb_function_on_no_list_is_refused_by_default(kind: str) -> None:
    store = open_store(kind, SPEC, seconds=0.5)
    try:
        with pytest.raises(
            StoreRefused, match="function brand_new is not available: it is not on the DuckDB"
        ):
            store.run("SELECT brand_new(1)")
        with pytest.raises(StoreRefused, match="function version is not available: it reads the engine"):
            store.run("SELECT version()")
        assert store.run("SELECT upper('a') || 'b' AS x, abs(-2) AS y").rows == [["Ab", 2]]
    finally:
        store.close()


@needs_chdb
def test_chdb_calls_only_what_its_list_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    store = open_store("chdb", SPEC, seconds=0.5)
    try:
        assert store.run("SELECT abs(-2) AS a, sumIf(1, 1) AS s FROM orders").rows == [[2, 300]]
        narrower = FunctionLists("chDB", CHDB.allowed - {"abs", "sum"}, CHDB.refused, fold_case=False)
        monkeypatch.setattr(chdb_store, "CHDB", narrower)
        for query in ("SELECT abs(-2) AS a", "SELECT sumIf(1, 1) AS s FROM orders"):
            with pytest.raises(StoreRefused, match="is not on the chDB store's list"):
                store.run(query)
        with pytest.raises(StoreRefused, match="function hostName is not available: it tells about the host"):
            store.run("SELECT hostName() AS h")
    finally:
        store.close()


def test_an_aggregate_is_listed_without_its_combinators() -> None:
    combinators = frozenset({"If", "State", "Merge", "Array"})
    assert chdb_aggregate("sumIfState", combinators) == "sum"
    assert chdb_aggregate("groupArray", combinators) == "groupArray"  # listed whole
    assert chdb_aggregate("noSuchIf", combinators) == "noSuch"
