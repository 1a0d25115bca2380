"""Random and hostile play on the analyst desk: never an exception, rewards in [0, 1], and
every genuine log replays to the live score while every single change to it is refused."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batchgate_gym.desks.analyst.replay import replay
from batchgate_gym.desks.analyst.sources import split_cases
from batchgate_gym.envs.analyst.text import AnalystDeskEnv

from ..replay_checks import check_log_replays_and_any_change_is_refused

CASES = [c for c in split_cases("eval") if c.stores[0] in ("sqlite", "duckdb")]
QUERIES = [
    "SELECT count(*) AS n FROM orders",
    "SELECT status, count(*) FROM orders GROUP BY status ORDER BY status",
    "SELECT avg(score) AS avg_review_score FROM reviews",
    "SELECT 42",
    "DELETE FROM orders",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM nope",
    "SELECT repeat('x', 1000000000)",
]
STORE_NAMES = st.sampled_from(["sqlite", "duckdb", "lake", "files", "nowhere"])
ANSWERS = st.one_of(
    st.integers(-5, 5000),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.lists(st.sampled_from(["SP", "RJ", "MG", "x"]), max_size=4),
    st.dictionaries(
        st.sampled_from(["delivered_orders", "revenue", "avg_review_score", "x"]), st.integers(0, 99)
    ),
)
# Answer texts no analyst should send and the desk must take anyway: integers past any float,
# NaN and the infinities (JSON extensions Python reads), lone surrogates, nesting of every kind.
HOSTILE_ANSWERS = st.one_of(
    st.integers(10**300, 10**400).map(str),
    st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3),
    st.sampled_from(["NaN", "-Infinity", "1e999", '"\\ud800"', '["\\udfff", 1]', "[[[[[]]]]]", "[" * 2000]),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=8,
    ).map(json.dumps),
)


@st.composite
def actions(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["sql", "list", "describe", "submit", "decline", "junk"]))
    if kind == "sql":
        return json.dumps(
            {
                "name": "run_sql",
                "arguments": {"store": draw(STORE_NAMES), "query": draw(st.sampled_from(QUERIES))},
            }
        )
    if kind == "list":
        return json.dumps({"name": "list_tables", "arguments": {"store": draw(STORE_NAMES)}})
    if kind == "describe":
        table = draw(st.sampled_from(["orders", "reviews", "nope"]))
        return json.dumps(
            {"name": "describe_table", "arguments": {"store": draw(STORE_NAMES), "table": table}}
        )
    if kind == "submit":
        evidence = [
            {"store": draw(STORE_NAMES), "query": q}
            for q in draw(st.lists(st.sampled_from(QUERIES), max_size=3))
        ]
        answer = draw(st.one_of(ANSWERS.map(json.dumps), HOSTILE_ANSWERS, st.text(max_size=8)))
        return json.dumps(
            {"name": "submit_answer", "arguments": {"answer": answer, "evidence": json.dumps(evidence)}}
        )
    if kind == "decline":
        return 'decline(reason="no")'
    return draw(st.text(max_size=40))


@pytest.fixture(scope="module")
def env():
    made = AnalystDeskEnv(CASES, max_turns=6)
    yield made
    made.close()


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    index=st.integers(0, len(CASES) - 1), plays=st.lists(actions(), min_size=1, max_size=6), data=st.data()
)
def test_random_play_replays_and_every_change_is_refused(env, index: int, plays: list[str], data) -> None:
    env.reset(seed=index, options={"case_index": index})
    for action in plays:
        _, reward, terminated, truncated, info = env.step(action)
        assert 0.0 <= reward <= 1.0
        if terminated or truncated:
            break
    else:
        return
    check_log_replays_and_any_change_is_refused(replay, CASES[index], env, info, None, data)


ANSWER_CASES = [
    next(c for c in CASES if c.answer_type == kind and c.stores[0] == "sqlite")
    for kind in ("number", "report", "list", "table")
]


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(answer=st.one_of(HOSTILE_ANSWERS, ANSWERS.map(json.dumps)))
def test_any_answer_text_is_scored_or_refused_and_replays(env, answer: str) -> None:
    """No answer value escapes env.step or replay as an exception (a 400-digit integer once
    raised OverflowError), whatever the answer type the question asks for."""
    evidence = json.dumps([{"store": "sqlite", "query": "SELECT count(*) AS n FROM orders"}])
    action = json.dumps({"name": "submit_answer", "arguments": {"answer": answer, "evidence": evidence}})
    for case in ANSWER_CASES:
        env.reset(seed=0, options={"case_index": CASES.index(case)})
        observation, reward, terminated, _, info = env.step(action)
        assert 0.0 <= reward <= 1.0
        if terminated:
            assert reward < 0.2 and info["score"]["wrong_answers"] == 1
            assert replay(case, env.export_log(), head=info["log_head"]).as_dict() == info["score"]
        else:
            assert "error" in observation
