"""The desks as verifiers environments: verifiers' own evaluate loop, over HTTP against a scripted
server, scores every case as the same policy does in process."""

from __future__ import annotations

from typing import Any

import pytest

from batchgate_gym import evaluate
from batchgate_gym.desks import registry

from .support import serving

vf = pytest.importorskip("verifiers", reason="verifiers is not installed (pip install -e '.[verifiers]')")
from openai import AsyncOpenAI  # noqa: E402

from batchgate_gym.llm.verifiers_env import load_environment  # noqa: E402


def verifiers_rewards(desk: str, policy: str, **options: Any) -> dict[str, float]:
    env = load_environment(desk=desk, split="eval", **options)
    with serving(policy, desk=desk) as server:
        client = vf.OpenAIChatCompletionsClient(AsyncOpenAI(base_url=server.base_url, api_key="local"))
        out = env.evaluate_sync(client=client, model="scripted", num_examples=-1, max_concurrent=8)
    assert all(o["error"] is None for o in out["outputs"])
    return {o["info"]["case_id"]: o["reward"] for o in out["outputs"]}


@pytest.mark.parametrize(("desk", "policy"), [("gate", "naive"), ("gate", "careful"), ("refund", "naive")])
@pytest.mark.slow  # server: verifiers over the whole eval split
def test_verifiers_evaluate_scores_each_case_as_in_process_play(desk: str, policy: str) -> None:
    spec = registry.get(desk)
    direct = evaluate(spec.policies.known()[policy], split="eval", desk=desk, progress=False)
    expected = {episode.case_id: episode.reward for episode in direct.episodes}
    got = verifiers_rewards(desk, policy)
    assert got == expected
    assert len(set(got.values())) > 1 or policy == "careful"  # a spread of rewards, matched case by case


def test_recovery_gives_verifiers_the_void_tool() -> None:
    names = [tool.name for tool in load_environment(desk="refund", split="eval", recovery=True).tool_defs]
    assert names[-2:] == ["void_refund", "reply"]
    assert "void_refund" not in [
        tool.name for tool in load_environment(desk="refund", split="eval").tool_defs
    ]
