"""Any JSON action is an observation, never an exception, on every desk and team env.

The strategy writes JSON *text*, not Python values, so that it can say what
``json.dumps`` cannot: integers past Python's 4,300-digit limit on reading an int
from text, nesting deeper than the recursion limit, numbers past the float range,
lone surrogates. Tool and argument names are the desks' own, so many actions get
past the parser to the argument checks and the desk's tools.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import gymnasium
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batchgate_gym.envs.gate import team
from batchgate_gym.envs.refund import team as refund_team

NAMES = (
    "list_batches",
    "load_batch",
    "run_sql",
    "submit_report",
    "lookup_order",
    "refund_history",
    "issue_refund",
    "void_refund",
    "claim_order",
    "reply",
    "escalate",
    "answer",
)
KEYS = ("batch_id", "sql", "order_id", "amount_cents", "idempotency_key", "reason", "sku", "message")

_HUGE_INT = st.integers(4_250, 6_000).map(lambda digits: "-" * (digits % 2) + "9" * digits)
_DEEP = st.integers(1_000, 120_000).map(lambda depth: "[" * depth + "]" * depth)
_NUMBERS = st.sampled_from(
    ("1e999", "-1e999", "1e-999", "NaN", "Infinity", "-0", "0.1", "12345678901234567890")
)
_STRINGS = st.text(max_size=20).map(json.dumps) | st.sampled_from(('"\\ud800"', '"\\udfff x"', '"\\u0000"'))
_LEAVES = (
    _HUGE_INT
    | _DEEP
    | _NUMBERS
    | _STRINGS
    | st.integers().map(str)
    | st.sampled_from(("null", "true", "false", "{}", "[]"))
)


def _object(pairs: list[tuple[str, str]]) -> str:
    return "{" + ",".join(f"{json.dumps(key)}:{value}" for key, value in pairs) + "}"


JSON_VALUES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3).map(lambda items: "[" + ",".join(items) + "]")
        | st.lists(st.tuples(st.sampled_from(KEYS), inner), max_size=3).map(_object)
    ),
    max_leaves=6,
)


@st.composite
def json_actions(draw: st.DrawFn) -> str:
    """A JSON action: a call object (its arguments an object or a string of JSON), a
    list of them, or any JSON value at all."""
    arguments = draw(st.lists(st.tuples(st.sampled_from(KEYS), JSON_VALUES), max_size=4).map(_object))
    if draw(st.booleans()):
        arguments = json.dumps(arguments)  # the OpenAI form: arguments as a string of JSON
    call = _object([("name", json.dumps(draw(st.sampled_from(NAMES)))), ("arguments", arguments)])
    return draw(
        st.sampled_from((call, f"[{call}]", f'{{"function": {call}}}'))
        | JSON_VALUES.filter(lambda text: text[:1] in "[{")
    )


def _single(env_id: str) -> Callable[[str], str]:
    env = gymnasium.make(env_id)
    env.reset(seed=0)

    def step(action: str) -> str:
        observation, _, terminated, truncated, _ = env.step(action)
        assert env.observation_space.contains(observation)
        if terminated or truncated:
            env.reset(seed=1)
        return str(observation)

    return step


def _team(module: Any) -> Callable[[str], str]:
    env = module.parallel_env(n_agents=2)
    env.reset(seed=0)

    def step(action: str) -> str:
        observations, _, terminations, truncations, _ = env.step(dict.fromkeys(env.agents, action))
        for agent, observation in observations.items():
            assert env.observation_space(agent).contains(observation)
        if not env.agents or all(terminations.values()) or all(truncations.values()):
            env.reset(seed=1)
        return "\n".join(o["text"] for o in observations.values())

    return step


STEPPERS: dict[str, Callable[[], Callable[[str], str]]] = {
    "gate": lambda: _single("batchgate_gym/BadBatchGate-v0"),
    "analyst": lambda: _single("batchgate_gym/AnalystDesk-v0"),
    "refund": lambda: _single("batchgate_gym/RefundDesk-v0"),
    "gate-team": lambda: _team(team),
    "refund-team": lambda: _team(refund_team),
}


@pytest.mark.parametrize("desk", STEPPERS)
def test_a_huge_json_integer_is_an_error_observation(desk: str) -> None:
    step = STEPPERS[desk]()
    digits = "9" * 5_000
    observation = step('{"name": "lookup_order", "arguments": {"order_id": ' + digits + "}}")
    assert "error: could not parse the action" in observation and "4300" in observation


@pytest.mark.parametrize("desk", STEPPERS)
def test_any_json_action_is_an_observation(desk: str) -> None:
    step = STEPPERS[desk]()

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(action=json_actions())
    def check(action: str) -> None:
        assert step(action)

    check()
