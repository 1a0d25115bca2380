"""The optional iceberg store: real Iceberg tables (pyiceberg, SQL catalog), read by DuckDB as the
files pyiceberg's scan plans; careful perfect on its split, every attacker 0.05 below it.

The hostile suite runs against it with the other DuckDB stores (``test_stores.py``). Without
the ``analyst-iceberg`` extra these tests skip, except the one checking that the store then
names the extra.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from batchgate_gym.desks.analyst.datasets.canonical import canonical_tables, dataset_dir
from batchgate_gym.desks.analyst.datasets.iceberg import NAMESPACE, catalog_home, planned_files
from batchgate_gym.desks.analyst.datasets.market import DataSpec
from batchgate_gym.desks.analyst.engines.base import StoreFailure
from batchgate_gym.desks.analyst.engines.stores import open_store
from batchgate_gym.desks.analyst.sources import split_cases
from batchgate_gym.evaluation import evaluate
from batchgate_gym.policies.analyst.attackers import ATTACKERS
from batchgate_gym.policies.analyst.reference import REFERENCE_POLICIES, CarefulAnalyst

from .hostile import careful_is_perfect, hide_module

needs_iceberg = pytest.mark.skipif(
    importlib.util.find_spec("pyiceberg") is None, reason="needs the 'analyst-iceberg' extra"
)
SPEC = DataSpec(5, 300)
MARGIN = 0.05


@needs_iceberg
def test_the_copy_is_iceberg_tables_in_a_sql_catalog_and_the_store_reads_their_planned_files() -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    folder = dataset_dir(SPEC, "iceberg")
    home = catalog_home(folder)
    assert home.parent == folder.parent and (home / "catalog.db").is_file()
    catalog = SqlCatalog(NAMESPACE, uri=f"sqlite:///{home / 'catalog.db'}")
    canonical = canonical_tables(SPEC)
    planned = planned_files(folder, tuple(canonical))
    store = open_store("iceberg", SPEC)
    try:
        for name, frame in canonical.items():
            table = catalog.load_table(f"{NAMESPACE}.{name}")
            metadata = json.loads(Path(table.metadata_location.removeprefix("file://")).read_text())
            assert len(table.snapshots()) == 1 and metadata["format-version"] in (1, 2)
            assert table.scan().to_arrow().num_rows == frame.height
            assert planned[name] and all(path.is_relative_to(home / "warehouse") for path in planned[name])
            assert store.describe(name)["rows"] == frame.height
        duck = open_store("duckdb", SPEC)
        query = "SELECT status, count(*) AS n, sum(length(order_id)) AS s FROM orders GROUP BY status ORDER BY status"
        assert store.run(query) == duck.run(query)
        duck.close()
    finally:
        store.close()


@needs_iceberg
@pytest.mark.slow  # whole split
def test_careful_is_perfect_on_the_iceberg_split_and_every_log_replays() -> None:
    cases = split_cases("iceberg")
    assert {c.store for c in cases} == {"iceberg"} and {c.level for c in cases} == {1, 2, 3, 5, 6, 7}
    careful_is_perfect(cases)


@needs_iceberg
@pytest.mark.slow  # whole split, each attacker
def test_every_attacker_stays_005_below_careful_on_the_iceberg_split() -> None:
    cases = split_cases("iceberg")
    careful = evaluate(CarefulAnalyst, cases=cases, desk="analyst", progress=False).overall.mean("reward")
    assert careful == 1.0
    for name, cls in {**ATTACKERS, **REFERENCE_POLICIES}.items():
        if name != "careful":
            reward = evaluate(cls, cases=cases, desk="analyst", progress=False).overall.mean("reward")
            assert careful - reward >= MARGIN, (name, reward)


def test_without_the_extra_the_store_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = DataSpec(6, 60)
    hide_module(monkeypatch, "pyiceberg")
    with pytest.raises(StoreFailure, match=r"analyst-iceberg"):
        open_store("iceberg", spec)
    assert not list(dataset_dir(spec, "lake").parent.glob("*iceberg*"))  # nothing half-written is left
