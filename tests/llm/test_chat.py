"""The chat adapter: a model's messages drive an episode exactly as text actions do."""

from __future__ import annotations

import json
from typing import Any

import pytest

from batchgate_gym import evaluate
from batchgate_gym.desks.gate.tools import tool_schemas
from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.llm import ChatEpisode, ChatSettings, ScriptedModel
from batchgate_gym.policies.gate.reference import CarefulPolicy, NaivePolicy


def play(policy: Any, case_index: int, env: BatchGateEnv) -> tuple[ChatEpisode, dict[str, Any]]:
    chat = ChatEpisode(env, tool_schemas())
    chat.reset(options={"case_index": case_index})
    model = ScriptedModel(policy)
    while True:
        step = chat.step(model.respond(chat.messages))
        if step.done:
            return chat, step.info


@pytest.mark.parametrize("policy", [CarefulPolicy, NaivePolicy], ids=["careful", "naive"])
def test_a_scripted_model_through_chat_scores_what_the_policy_scores(policy: Any) -> None:
    direct = evaluate(policy, split="eval", progress=False)
    env = BatchGateEnv(split="eval")
    for index, expected in enumerate(direct.episodes):
        _chat, info = play(policy(), index, env)
        assert info["case_id"] == expected.case_id
        assert info["score"]["reward"] == expected.reward, expected.case_id


def test_reset_gives_the_brief_as_system_and_the_case_as_user() -> None:
    chat = ChatEpisode(BatchGateEnv(split="eval"), tool_schemas())
    system, user = chat.reset(options={"case_index": 0})
    assert system["role"] == "system" and "You gate tonight's warehouse load." in system["content"]
    assert "tool-calling interface" in system["content"]  # tools mode: the request carries the tools
    assert user["role"] == "user" and user["content"].startswith("Task: ")
    text = ChatEpisode(BatchGateEnv(split="eval"), tool_schemas(), ChatSettings(mode="text"))
    assert "Tools:" in text.reset(options={"case_index": 0})[0]["content"]


def test_each_call_gets_its_own_tool_message_with_its_id() -> None:
    env = BatchGateEnv(split="eval")
    chat = ChatEpisode(env, tool_schemas())
    chat.reset(options={"case_index": 0})
    calls = [
        {"id": "a1", "type": "function", "function": {"name": "read_contract", "arguments": "{}"}},
        {"id": "b2", "type": "function", "function": {"name": "list_batches", "arguments": "{}"}},
    ]
    step = chat.step({"role": "assistant", "content": None, "tool_calls": calls})
    assert [m["tool_call_id"] for m in step.messages] == ["a1", "b2"]
    assert "defect_types" in json.loads(step.messages[0]["content"])
    assert "batches" in json.loads(step.messages[1]["content"].split("\n\n")[0])
    assert "turn 1 of 30" in step.messages[-1]["content"]


@pytest.mark.parametrize(
    "function",
    [
        {"name": "drop_warehouse", "arguments": "{}"},
        {"name": "profile_batch", "arguments": "{not json"},
    ],
    ids=["unknown-tool", "arguments-not-json"],
)
def test_a_malformed_call_is_the_environments_error_for_every_call(function: dict[str, Any]) -> None:
    env = BatchGateEnv(split="eval")
    chat = ChatEpisode(env, tool_schemas())
    chat.reset(options={"case_index": 0})
    calls = [
        {"id": "ok", "type": "function", "function": {"name": "list_batches", "arguments": "{}"}},
        {"id": "bad", "type": "function", "function": function},
    ]
    step = chat.step({"role": "assistant", "tool_calls": calls})
    assert [m["tool_call_id"] for m in step.messages] == ["ok", "bad"]
    assert all(m["content"].startswith("turn 1 of 30\nerror:") for m in step.messages)
    log = env.unwrapped.world.ledger.entries
    assert [e.action for e in log][1:] == ["invalid_action"]  # nothing ran, the refusal is logged


def test_a_message_without_tool_calls_is_a_turn_answered_with_the_nudge() -> None:
    env = BatchGateEnv(split="eval", max_turns=2)
    chat = ChatEpisode(env, tool_schemas(), ChatSettings(nudge="Use a tool."))
    chat.reset(options={"case_index": 0})
    step = chat.step({"role": "assistant", "content": "I think all is fine."})
    assert step.messages[0]["role"] == "user" and step.messages[0]["content"].startswith("Use a tool.\n")
    assert not step.done
    step = chat.step({"role": "assistant", "content": "Done."})
    assert step.truncated and step.reward == 0.0


def test_a_desk_can_map_a_plain_message_to_the_action_that_ends_it() -> None:
    env = BatchGateEnv(split="eval")
    settings = ChatSettings(no_tool_call=lambda content: "submit_report([], [])")
    chat = ChatEpisode(env, tool_schemas(), settings)
    chat.reset(options={"case_index": 0})
    step = chat.step({"role": "assistant", "content": "All done, nothing loaded."})
    assert step.terminated and "score" in step.info


def test_text_mode_takes_calls_from_the_content() -> None:
    env = BatchGateEnv(split="eval")
    chat = ChatEpisode(env, tool_schemas(), ChatSettings(mode="text"))
    chat.reset(options={"case_index": 0})
    step = chat.step({"role": "assistant", "content": "list_batches()"})
    assert step.messages[0]["role"] == "user" and '"batches"' in step.messages[0]["content"]
    with pytest.raises(ValueError, match="mode"):
        ChatSettings(mode="voice")


def test_stepping_after_the_end_is_an_error_not_a_silent_turn() -> None:
    env = BatchGateEnv(split="eval")
    settings = ChatSettings(no_tool_call=lambda content: "submit_report([], [])")
    chat = ChatEpisode(env, tool_schemas(), settings)
    chat.reset(options={"case_index": 0})
    chat.step({"role": "assistant", "content": "bye"})
    with pytest.raises(RuntimeError, match="over"):
        chat.step({"role": "assistant", "content": "again"})
