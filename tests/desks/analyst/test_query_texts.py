"""Any query text, on any store, live or cited as evidence: an answer or an error observation, never an exception.

And what a query may read is the data alone: the clock and chance are refused on every
store, so evidence that tries them scores the same in a replay as it did live.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batchgate_gym.desks.analyst.datasets.market import DataSpec
from batchgate_gym.desks.analyst.engines.base import StoreRefused, StoreResult
from batchgate_gym.desks.analyst.engines.stores import STORES, open_store
from batchgate_gym.desks.analyst.replay import replay
from batchgate_gym.desks.analyst.sources import split_cases
from batchgate_gym.envs.analyst.text import AnalystDeskEnv

SPEC = DataSpec(5, 300)
SURROGATE = "\ud800"
# Text of every kind, lone surrogates included (hypothesis leaves them out of text() by default).
ANY_CHARACTER = st.characters(codec=None, categories=None)
QUERY_TEXTS = st.one_of(
    st.text(ANY_CHARACTER, max_size=60),
    st.builds(
        lambda head, odd, tail: head + odd + tail,
        st.sampled_from(
            ["SELECT '", "SELECT count(*) FROM orders WHERE status = '", "SELECT 1 -- ", "WITH "]
        ),
        st.text(ANY_CHARACTER, min_size=1, max_size=8),
        st.sampled_from(["'", "", "' AS x", ")"]),
    ),
)
CLOCK_AND_CHANCE = {
    "sqlite": [
        "SELECT random()",
        "SELECT date('now')",
        "SELECT current_timestamp",
        "SELECT count(*) FROM orders WHERE random() > 0",
    ],
    "duckdb": [
        "SELECT random()",
        "SELECT now()",
        "SELECT current_date",
        "SELECT count(*) FROM orders USING SAMPLE 50%",
        "SELECT uuid()",
    ],
}


@pytest.fixture(scope="module", params=STORES)
def store(request: pytest.FixtureRequest):
    opened = open_store(request.param, SPEC)
    yield opened
    opened.close()


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=QUERY_TEXTS)
def test_any_query_text_is_answered_or_refused_on_every_store(store, text: str) -> None:
    try:
        result = store.run(text)
    except StoreRefused as refused:
        assert str(refused)
    else:
        assert isinstance(result, StoreResult)


@pytest.mark.parametrize(
    "query", [f"SELECT '{SURROGATE}'", f'SELECT 1 AS "{SURROGATE}"', f"-- {SURROGATE}\nSELECT 1"]
)
def test_a_lone_surrogate_is_refused_as_not_text(store, query: str) -> None:
    with pytest.raises(StoreRefused, match="lone surrogate"):
        store.run(query)


def test_clock_and_chance_are_refused_on_every_store(store) -> None:
    for query in CLOCK_AND_CHANCE["sqlite" if store.name == "sqlite" else "duckdb"]:
        with pytest.raises(StoreRefused, match="not available"):
            store.run(query)
    assert store.run("SELECT count(*) AS n FROM orders").rows == [[300]]


def _episode(env: AnalystDeskEnv, index: int, actions: list[str]) -> tuple[float, dict]:
    env.reset(options={"case_index": index})
    info: dict = {}
    reward = 0.0
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    return reward, info


def _call(name: str, **arguments: str) -> str:
    return json.dumps({"name": name, "arguments": arguments})  # a JSON action may carry any string


@pytest.fixture(scope="module")
def one_case_per_store():
    cases = {}
    for case in split_cases("eval"):
        if len(case.stores) == 1 and case.answerable and case.stores[0] not in cases:
            cases[case.stores[0]] = case
    assert set(cases) == set(STORES)
    return [cases[name] for name in STORES]


def test_a_lone_surrogate_in_a_query_or_in_evidence_is_an_error_observation_live_and_in_replay(
    one_case_per_store,
) -> None:
    env = AnalystDeskEnv(one_case_per_store)
    try:
        for index, case in enumerate(one_case_per_store):
            name = case.stores[0]
            query = f"SELECT count(*) FROM orders WHERE status = '{SURROGATE}'"
            evidence = json.dumps([{"store": name, "query": query}])
            env.reset(options={"case_index": index})
            observation = env.step(_call("run_sql", store=name, query=query))[0]
            assert "lone surrogate" in observation, name
            _, _reward, terminated, _, info = env.step(_call("submit_answer", answer="1", evidence=evidence))
            assert terminated and info["score"]["evidence_reproduces"] == 0, name
            assert replay(case, env.export_log(), head=info["log_head"]).as_dict() == info["score"]
    finally:
        env.close()


@pytest.mark.parametrize("flavour", ["random", "clock"])
def test_evidence_that_reads_the_clock_or_chance_replays_to_the_live_score(
    one_case_per_store, flavour
) -> None:
    queries = {
        "random": {
            "sqlite": "SELECT abs(random()) % 2 AS n",
            "duckdb": "SELECT CAST(random() < 0.5 AS INT) AS n",
        },
        "clock": {"sqlite": "SELECT strftime('%S', 'now') AS n", "duckdb": "SELECT second(now()) AS n"},
    }[flavour]
    env = AnalystDeskEnv(one_case_per_store)
    try:
        for index, case in enumerate(one_case_per_store):
            name = case.stores[0]
            query = queries["sqlite" if name == "sqlite" else "duckdb"]
            evidence = json.dumps([{"store": name, "query": query}] * 3)
            _reward, info = _episode(env, index, [_call("submit_answer", answer="1", evidence=evidence)])
            assert info["score"]["evidence_reproduces"] == 0, name
            for _ in range(3):
                assert replay(case, env.export_log(), head=info["log_head"]).as_dict() == info["score"]
    finally:
        env.close()
