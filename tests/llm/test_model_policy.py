"""A model as a policy: evaluate() runs it through a real server like any scripted policy."""

from __future__ import annotations

import pickle

import pytest

from batchgate_gym import evaluate
from batchgate_gym.desks.gate.tools import tool_schemas
from batchgate_gym.policies.gate.reference import CarefulPolicy, NaivePolicy
from batchgate_gym.policies.llm import ModelPolicy

from .support import serving


@pytest.mark.parametrize(("served", "reference"), [("careful", CarefulPolicy), ("naive", NaivePolicy)])
@pytest.mark.slow  # server: the whole eval split
def test_a_model_behind_http_scores_what_its_script_scores(served, reference) -> None:
    expected = evaluate(reference, split="eval", progress=False)
    with serving(served) as server:
        policy = ModelPolicy("scripted", base_url=server.base_url, tools=tool_schemas(), api_key="local")
        got = evaluate(policy, split="eval", progress=False)
    assert [e.case_id for e in got.episodes] == [e.case_id for e in expected.episodes]
    assert [e.reward for e in got.episodes] == [e.reward for e in expected.episodes]
    assert policy.messages[0]["role"] == "system" and policy.messages[-1]["role"] == "assistant"


def test_the_policy_pickles_without_its_client_and_needs_a_key() -> None:
    policy = ModelPolicy(
        "m", base_url="http://127.0.0.1:9/v1", tools=tool_schemas(), api_key_env="NO_SUCH_KEY_VAR"
    )
    with pytest.raises(RuntimeError, match="NO_SUCH_KEY_VAR"):
        policy.client()
    keyed = ModelPolicy("m", base_url="http://127.0.0.1:9/v1", tools=tool_schemas(), api_key="k")
    keyed.client()
    copy = pickle.loads(pickle.dumps(keyed))
    assert copy._client is None and copy.model == "m"


def test_a_server_that_fails_makes_the_policy_raise_not_score() -> None:
    with serving("careful", faults=1.0) as server:
        policy = ModelPolicy(
            "scripted",
            base_url=server.base_url,
            tools=tool_schemas(),
            api_key="local",
            timeout=1.0,
            max_retries=0,
        )
        with pytest.raises(Exception) as failure:
            evaluate(policy, split="eval", progress=False)
    assert "score" not in str(failure.value)
