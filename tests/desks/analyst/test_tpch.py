"""Level 7: TPC-H from the ``tpchgen-cli`` package, its questions, stores, references and policies.

The data is generated once per machine into the analyst cache at scale factor 0.01
(a few seconds) and read by every test here. The polars references are held against
the analyst's independent SQL in guarded SQLite on many parameter draws and, in
DuckDB's dialect, in the other three stores; each store serves the same rows;
careful answers every level-7 case (and each log replays to its score), the
attackers stay below it, the question the data cannot answer is declined, and a
procedural environment asked for level 7 serves it.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np
import polars as pl
import pytest

from batchgate_gym.desks.analyst.cases import CaseFormatError, case_from_dict
from batchgate_gym.desks.analyst.datasets.canonical import canonical_tables, dataset_dir, tables_of
from batchgate_gym.desks.analyst.datasets.tpch import TPCH_TABLES, generate
from batchgate_gym.desks.analyst.engines.base import StoreRefused, budget_scale
from batchgate_gym.desks.analyst.engines.stores import STORES, open_store
from batchgate_gym.desks.analyst.generator import build_case
from batchgate_gym.desks.analyst.generator.build import data_spec
from batchgate_gym.desks.analyst.grader import same
from batchgate_gym.desks.analyst.questions.market_answers import expected_answer
from batchgate_gym.desks.analyst.questions.market_questions import of_level
from batchgate_gym.desks.analyst.questions.template import Template
from batchgate_gym.desks.analyst.replay import replay
from batchgate_gym.desks.analyst.sources import split_cases
from batchgate_gym.envs.analyst.text import AnalystDeskEnv
from batchgate_gym.evaluation import evaluate, report_json
from batchgate_gym.policies.analyst.attackers import ATTACKERS
from batchgate_gym.policies.analyst.reference import REFERENCE_POLICIES, CarefulAnalyst
from batchgate_gym.policies.analyst.sql import answer_from, read_question, solution

# TPC-H generated and every level-7 template, store and case swept.
pytestmark = pytest.mark.slow

LEVEL7 = of_level(7)
ANSWERABLE = [t for t in LEVEL7 if t.answerable]
SPEC = data_spec(LEVEL7[0], 0, 1000)
DRAWS = 12


def agrees(template: Template, got: Any, want: Any) -> bool:
    if template.answer == "table":
        return len(got) == len(want) and all(
            len(g) == len(w) and all(same(a, b, template.tolerance) for a, b in zip(g, w, strict=True))
            for g, w in zip(got, want, strict=True)
        )
    if template.answer == "ranking":
        return list(got) == list(want)
    return same(got, want, template.tolerance)


def sql_answer(template: Template, params: dict[str, Any], store: Any, dialect: str) -> Any:
    reading = read_question(template.question(params))
    assert reading is not None and reading.kind == template.id and dict(reading.params) == params
    result = store.run(solution(template.id, params, dialect))
    assert not result.truncated
    return answer_from(template.id, result.columns, result.rows)


def test_the_dataset_is_tpch_at_sf_001_and_regenerates_identically(tmp_path) -> None:
    assert SPEC.tpch == 0.01 and SPEC.key() == "tpch-sf0.01"
    tables = canonical_tables(SPEC)
    assert tuple(tables) == TPCH_TABLES
    assert (
        tables["lineitem"].height > 50_000 and tables["region"].height == 5 and tables["nation"].height == 25
    )
    generate(0.01, "csv", tmp_path)
    cached = dataset_dir(SPEC, "files")
    for name in TPCH_TABLES:
        assert (tmp_path / f"{name}.csv").read_bytes() == (cached / f"{name}.csv").read_bytes(), name


@pytest.mark.parametrize("template", ANSWERABLE, ids=lambda t: t.id)
def test_reference_equals_sql_in_guarded_sqlite(template: Template) -> None:
    store = open_store("sqlite", SPEC)
    try:
        for seed in range(DRAWS):
            params = template.draw(np.random.default_rng(seed), tables_of(SPEC))
            want = expected_answer(template.id, canonical_tables(SPEC), params)
            got = sql_answer(template, params, store, "sqlite")
            assert agrees(template, got, want), (template.id, params, got, want)
    finally:
        store.close()


@pytest.mark.parametrize("template", ANSWERABLE, ids=lambda t: t.id)
def test_reference_answers_do_not_depend_on_the_order_of_the_rows(template: Template) -> None:
    """The shipped splits hold these answers to the last digit, so they must not move when
    a join, a group or a new polars release reads the rows in another order: every money
    sum is exact. Float sums fail this (the promotion effect moved under polars 2.2)."""
    tables = canonical_tables(SPEC)
    shuffled = {name: frame.sample(fraction=1.0, shuffle=True, seed=7) for name, frame in tables.items()}
    for seed in range(DRAWS):
        params = template.draw(np.random.default_rng(seed), tables_of(SPEC))
        want = expected_answer(template.id, tables, params)
        assert json.dumps(expected_answer(template.id, shuffled, params)) == json.dumps(want), (
            template.id,
            params,
        )


@pytest.mark.parametrize("kind", ("duckdb", "lake", "files"))
def test_duckdb_dialect_agrees_in_each_duckdb_store(kind: str) -> None:
    store = open_store(kind, SPEC)
    try:
        for index, template in enumerate(ANSWERABLE):
            params = template.draw(np.random.default_rng(100 + index), tables_of(SPEC))
            want = expected_answer(template.id, canonical_tables(SPEC), params)
            assert agrees(template, sql_answer(template, params, store, "duckdb"), want), (kind, template.id)
    finally:
        store.close()


def test_every_store_serves_the_same_rows() -> None:
    canonical = canonical_tables(SPEC)
    for kind in STORES:
        store = open_store(kind, SPEC)
        try:
            assert sorted(store.tables()) == sorted(TPCH_TABLES), kind
            for name in ("lineitem", "orders", "nation"):
                assert store.describe(name)["rows"] == canonical[name].height, (kind, name)
            total = store.run("SELECT sum(l_extendedprice) AS s, max(l_shipdate) AS d FROM lineitem").rows[0]
            assert same(
                total[0], float(canonical["lineitem"]["l_extendedprice"].cast(pl.Float64).sum()), 0.01
            )
            assert total[1] == canonical["lineitem"]["l_shipdate"].max().isoformat(), kind
        finally:
            store.close()


def test_chdb_answers_every_level7_question_within_the_budgets_sf_1_scales_to() -> None:
    """At SF 0.1 a store's budgets are its defaults (:func:`budget_scale` 1), a tenth of SF 1's as
    the data is a tenth of SF 1's: careful's ClickHouse SQL for each level-7 question answers
    within them, as the reference does; the local-supplier-volume join as the other stores run it
    is stopped at the memory budget (why ClickHouse's dialect plans it another way)."""
    pytest.importorskip("chdb")
    spec = dataclasses.replace(SPEC, tpch=0.1)
    assert budget_scale(spec) == 1.0
    store = open_store("chdb", spec)
    try:
        for index, template in enumerate(ANSWERABLE):
            params = template.draw(np.random.default_rng(200 + index), tables_of(spec))
            want = expected_answer(template.id, canonical_tables(spec), params)
            assert agrees(template, sql_answer(template, params, store, "clickhouse"), want), template.id
        joined = solution(
            "tpch-local-supplier-volume", params_of("tpch-local-supplier-volume", spec), "duckdb"
        )
        with pytest.raises(StoreRefused, match="memory budget"):
            store.run(joined)
    finally:
        store.close()


def params_of(template_id: str, spec: Any) -> dict[str, Any]:
    template = next(t for t in LEVEL7 if t.id == template_id)
    return template.draw(np.random.default_rng(0), tables_of(spec))


@pytest.mark.parametrize("kind", ("sqlite", "files"))
def test_tpch_stores_stay_bounded(kind: str) -> None:
    store = open_store(kind, SPEC, seconds=1.0)
    try:
        for hostile in (
            "SELECT count(*) FROM lineitem a, lineitem b, lineitem c",
            "DELETE FROM lineitem",
            "SELECT * FROM read_csv('/etc/passwd')",
        ):
            with pytest.raises(StoreRefused):
                store.run(hostile)
        assert store.describe("lineitem")["rows"] == canonical_tables(SPEC)["lineitem"].height
    finally:
        store.close()


def test_the_question_to_decline_has_no_reference_and_careful_declines_it() -> None:
    declines = [t for t in LEVEL7 if not t.answerable]
    assert [t.id for t in declines] == ["tpch-shipping-expense"]
    columns = [c for frame in tables_of(SPEC).values() for c in frame.columns]
    assert not any("freight" in c or "carrier" in c or "shipcost" in c for c in columns)
    assert "ps_supplycost" in tables_of(SPEC)["partsupp"].columns  # a supply cost, not a shipping one
    case = build_case(5, template="tpch-shipping-expense", store="duckdb")
    assert case["expected"] is None and case["answerable"] is False and case["level"] == 7


def test_case_files_name_a_broken_tpch_field() -> None:
    good = build_case(3, template="tpch-forecast-revenue", store="sqlite")
    assert good["data"] == {"tpch": 0.01}
    assert case_from_dict(json.loads(json.dumps(good)), "x").data == SPEC
    for data, field in (({"tpch": 0.01, "seed": 1}, "'data'"), ({"tpch": 500}, "'data.tpch'")):
        with pytest.raises(CaseFormatError, match=field):
            case_from_dict({**good, "data": data}, "f.jsonl:3")


@pytest.fixture(scope="module")
def tpch_cases() -> list[Any]:
    return split_cases("tpch")


def test_careful_answers_every_level7_case_and_each_log_replays(tpch_cases: list[Any]) -> None:
    assert {c.level for c in tpch_cases} == {7} and {c.store for c in tpch_cases} == set(STORES)
    assert len(tpch_cases) == len(LEVEL7) * len(STORES)
    env = AnalystDeskEnv(tpch_cases)
    policy = CarefulAnalyst()
    for index, case in enumerate(tpch_cases):
        observation, info = env.reset(seed=index, options={"case_index": index})
        policy.reset(observation, info)
        while True:
            observation, reward, terminated, truncated, info = env.step(policy.act(observation))
            if terminated or truncated:
                break
        assert reward == 1.0 and info["level"] == 7, (case.case_id, info["score"])
        assert replay(case, env.export_log(), head=info["log_head"]).as_dict() == info["score"]
    env.close()


def test_attackers_stay_below_careful_on_level7(tpch_cases: list[Any]) -> None:
    cases = [c for c in tpch_cases if c.store == "sqlite"]
    careful = evaluate(CarefulAnalyst, cases=cases, desk="analyst", progress=False)
    assert careful.overall.mean("reward") == 1.0
    for name, cls in {**ATTACKERS, **REFERENCE_POLICIES}.items():
        if name == "careful":
            continue
        result = evaluate(cls, cases=cases, desk="analyst", progress=False)
        assert 1.0 - result.overall.mean("reward") >= 0.05, name
        if name in ("constant-evidence", "answer-without-evidence", "foreign-evidence"):
            for episode, case in zip(result.episodes, cases, strict=True):
                assert not case.answerable or episode.terms["evidence_reproduces"] == 0.0, (
                    name,
                    case.case_id,
                )
    shaped = json.loads(json.dumps(report_json({"careful": careful}, "analyst")))
    rows = shaped["policies"]["careful"]["per_case"]
    assert {row["level"] for row in rows.values()} == {7}


def test_a_procedural_env_serves_level7_when_asked() -> None:
    env = AnalystDeskEnv(level=7)
    policy = CarefulAnalyst()
    families = set()
    for seed in range(4):
        observation, info = env.reset(seed=seed)
        assert "TPC-H" in observation
        policy.reset(observation, info)
        while True:
            observation, reward, terminated, truncated, info = env.step(policy.act(observation))
            if terminated or truncated:
                break
        assert info["level"] == 7 and reward == 1.0
        families.add(info["family"])
    assert len(families) >= 2
    env.close()
    assert "TPC-H" not in AnalystDeskEnv(scale=60).reset(seed=3)[0]  # an open level draws from 1 to 6
