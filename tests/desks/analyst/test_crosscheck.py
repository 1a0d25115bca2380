"""Every template's polars reference equals an independent SQL solution, on 200 seeds per level.

The SQL is the analyst's (``policies/analyst/sql.py``), run in the kernel's guarded
SQLite over the same rows; the reference is the desk's polars code. Neither shares
code with the other. Datasets are small (60 orders keep 200 seeds per level inside a
few seconds; level 6's snapshots hold 400, so that its months, quarters and weeks
hold enough orders for the answers to vary); a smaller sample runs the DuckDB
dialect through the Parquet lake, and level 6 also through chDB where it is installed.
"""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from batchgate_gym.desks.analyst.datasets.canonical import canonical_tables, tables_of
from batchgate_gym.desks.analyst.datasets.market import DataSpec
from batchgate_gym.desks.analyst.engines.sqlite_store import SqliteStore
from batchgate_gym.desks.analyst.engines.stores import open_store
from batchgate_gym.desks.analyst.generator.build import data_spec, snapshot_params
from batchgate_gym.desks.analyst.grader import same
from batchgate_gym.desks.analyst.questions.market_answers import expected_answer
from batchgate_gym.desks.analyst.questions.market_questions import LEVELS, TEMPLATES, Template, of_level
from batchgate_gym.policies.analyst.sql import (
    CROSS,
    PAGE,
    answer_from,
    catalog_page,
    cross_query,
    dialect_of,
    solution,
)

SEEDS = 200
SCALE = 60
SNAPSHOT_SCALE = 400


def spec_of(template: Template, data_seed: int) -> DataSpec:
    return data_spec(template, data_seed, SNAPSHOT_SCALE if template.level == 6 else SCALE)


def params_of(template: Template, spec: DataSpec, seed: int) -> dict:
    if template.level == 6:
        assert spec.cutoff is not None
        return snapshot_params(template.id, spec.cutoff, np.random.default_rng(seed))
    return template.draw(np.random.default_rng(seed), tables_of(spec))


def sql_answer(template: Template, params: dict, store, dialect: str):
    if template.id in CROSS:
        ids: list[str] = []
        while True:
            rows = store.run(catalog_page(template.id, params, len(ids))).rows
            ids += [row[0] for row in rows]
            if len(rows) < PAGE:
                break
        result = store.run(cross_query(template.id, ids))
    else:
        result = store.run(solution(template.id, params, dialect))
        assert not result.truncated
    return answer_from(template.id, result.columns, result.rows)


def agrees(template: Template, got, want) -> bool:
    if template.answer == "report":
        return set(got) == set(want) and all(same(got[m], want[m], template.metrics[m]) for m in want)
    if template.answer == "table":
        return len(got) == len(want) and all(
            len(g) == len(w) and all(same(a, b, template.tolerance) for a, b in zip(g, w, strict=True))
            for g, w in zip(got, want, strict=True)
        )
    return same(got, want, template.tolerance)


def check_seed(templates: list[Template], seed: int) -> dict[str, str]:
    """Each template's reference, held equal to the SQL's answer over one dataset; the answers as JSON."""
    spec = spec_of(templates[0], 9_000 + seed)
    store = SqliteStore(spec)
    answers = {}
    try:
        for template in templates:
            params = params_of(template, spec, seed)
            want = expected_answer(template.id, tables_of(spec), params)
            got = sql_answer(template, params, store, "sqlite")
            assert agrees(template, got, want), (template.id, seed, params, got, want)
            answers[template.id] = json.dumps(want)
    finally:
        store.close()
    return answers


@pytest.mark.parametrize("snapshots", [False, True], ids=["levels-1-to-5", "level-6"])
@pytest.mark.slow  # sweep: 200 seeds per level
def test_reference_equals_sql_on_200_seeds_per_level(snapshots: bool) -> None:
    """Levels 1 to 5 share one dataset per seed; level 6 asks over a snapshot of its own."""
    templates = [t for t in TEMPLATES if t.answerable and t.level <= 6 and (t.level == 6) == snapshots]
    answers = [check_seed(templates, seed) for seed in range(SEEDS)]
    assert {t.level for t in templates} == ({6} if snapshots else {1, 2, 3, 4, 5})
    for template in templates:  # every template was checked on every seed, on answers that vary
        seen = [by_template[template.id] for by_template in answers]
        assert len(seen) == SEEDS and len(set(seen)) >= 5, template.id
    if snapshots:
        assert {t.id for t in templates} == {
            "delivery-change",
            "repeat-purchase-change",
            "category-week-change",
        }
        for template in templates:  # a list of what changed: mostly some, rarely none
            assert (
                sum(json.loads(by_template[template.id]) != [] for by_template in answers) >= SEEDS * 3 // 4
            )


@pytest.mark.parametrize("store_name", ["lake", "chdb", pytest.param("postgres", marks=pytest.mark.slow)])
def test_level6_dialects_agree_on_a_sample(store_name: str) -> None:
    """Level 6's SQL in DuckDB's dialect through the lake, in ClickHouse's through chDB, and in
    PostgreSQL's through a server the test starts."""
    if store_name == "chdb":
        pytest.importorskip("chdb", reason="the chdb store needs the optional 'analyst-chdb' extra")
    for seed in range(4):
        spec = spec_of(of_level(6)[0], 29_000 + seed)
        store = open_store(store_name, spec)
        try:
            for template in of_level(6):
                params = params_of(template, spec, seed)
                want = expected_answer(template.id, canonical_tables(spec), params)
                dialect = dialect_of(store_name)
                got = sql_answer(template, params, store, dialect)
                assert got == want, (store_name, template.id, seed, got, want)
        finally:
            store.close()


def test_unanswerable_templates_have_no_reference() -> None:
    unanswerable = [t for t in TEMPLATES if not t.answerable]
    assert {t.level for t in unanswerable} == {1, 2, 3, 5, 7}  # each the twin of an answerable one
    for template in unanswerable:
        tables = tables_of(data_spec(template, 1, SCALE))
        assert expected_answer(template.id, tables, template.draw(np.random.default_rng(0), tables)) is None


@pytest.mark.parametrize("seed", range(6))
def test_duckdb_dialect_agrees_through_the_lake(seed: int) -> None:
    for level in LEVELS:
        template = of_level(level)[seed % len(of_level(level))]
        if not template.answerable:
            continue
        spec = spec_of(template, 19_000 + seed)
        store = open_store("lake", spec)
        try:
            params = params_of(template, spec, seed)
            want = expected_answer(template.id, canonical_tables(spec), params)
            assert agrees(template, sql_answer(template, params, store, "duckdb"), want), (template.id, seed)
        finally:
            store.close()


def test_canonical_parquet_holds_the_generated_rows() -> None:
    spec = DataSpec(3, 200)
    generated, read_back = tables_of(spec), canonical_tables(spec)
    for name, frame in generated.items():
        assert read_back[name].equals(frame), name
        assert read_back[name].schema == frame.schema


def test_planted_dirt_is_there() -> None:
    tables = tables_of(DataSpec(4, 2000))
    reviews, orders = tables["reviews"], tables["orders"]
    assert reviews.height > reviews["review_id"].n_unique()  # repeated review rows
    assert orders.filter(pl.col("order_id").str.starts_with("TEST")).height == 3
    assert {"canceled", "unavailable"} <= set(orders["status"].to_list())
    delivered = orders.filter(pl.col("status") == "delivered")
    assert delivered["delivered_at"].null_count() > 0  # delivered, no date
    due = (
        tables["order_items"].group_by("order_id").agg((pl.col("price") + pl.col("freight")).sum().alias("d"))
    )
    paid = tables["payments"].group_by("order_id").agg(pl.col("value").sum().alias("v"))
    off = due.join(paid, on="order_id").filter((pl.col("v") - pl.col("d")).abs() > 0.01)
    assert off.height > 0  # payments that do not sum to the items
    assert not any("cost" in c for frame in tables.values() for c in frame.columns)  # revenue is not profit
