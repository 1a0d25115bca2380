"""The scripted chat-completions server, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from openai import OpenAI

from batchgate_gym.desks.gate.tools import tool_schemas
from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.llm import ChatEpisode
from batchgate_gym.llm.runner import assistant_message
from batchgate_gym.llm.server import FAULT_KINDS, ServerSettings, estimate_tokens, serve_in_thread

from .support import serving


def post(base_url: str, body: dict[str, Any], timeout: float = 5.0) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def fresh_chat(case_index: int = 0) -> ChatEpisode:
    chat = ChatEpisode(BatchGateEnv(split="eval"), tool_schemas())
    chat.reset(options={"case_index": case_index})
    return chat


def test_a_response_has_the_chat_completions_shape_and_a_documented_usage() -> None:
    chat = fresh_chat()
    with serving("careful") as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        client = OpenAI(base_url=server.base_url, api_key="any", max_retries=0)
        response = client.chat.completions.create(
            model="whatever", messages=chat.messages, tools=tool_schemas()
        )
    assert response.object == "chat.completion" and response.model == "whatever"
    assert response.created == 0  # the turn, not the clock
    choice = response.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.tool_calls
    message = assistant_message(response)
    assert response.usage.prompt_tokens == estimate_tokens(chat.messages)
    assert response.usage.completion_tokens == estimate_tokens([message])
    assert response.usage.total_tokens == response.usage.prompt_tokens + response.usage.completion_tokens


def test_the_rule_for_tokens_is_a_quarter_of_the_characters_plus_four() -> None:
    assert estimate_tokens([{"role": "user", "content": "x" * 9}]) == 3 + 4
    call = {"function": {"name": "abcd", "arguments": "{}"}}
    assert estimate_tokens([{"role": "assistant", "content": None, "tool_calls": [call]}]) == 2 + 4


def test_stateless_a_repeated_request_gets_the_same_answer_and_the_episode_goes_on() -> None:
    """Every request is answered from its messages alone: repeats, and other episodes in between, change nothing."""
    played = fresh_chat(0)
    other = fresh_chat(1)
    with serving("careful") as server:
        body = {"model": "m", "tools": tool_schemas(), "seed": 7}
        while not played.done:
            first = post(server.base_url, {**body, "messages": played.messages})
            again = post(server.base_url, {**body, "messages": played.messages})  # a retry
            post(server.base_url, {**body, "messages": other.messages})  # another episode meanwhile
            assert first[0] == 200 and first[2] == again[2]
            step = played.step(json.loads(first[2])["choices"][0]["message"])
    assert step.info["score"]["reward"] == 1.0


def test_every_transport_fault_is_drawn_and_each_retry_draws_again() -> None:
    chat = fresh_chat()
    seen: dict[str, Any] = {}
    with serving("careful", faults=1.0, stall=0.6, retry_after=2.5) as server:
        body = {"model": "m", "messages": chat.messages, "tools": tool_schemas()}
        for _attempt in range(16):
            try:
                status, headers, data = post(server.base_url, body, timeout=0.3)
            except (TimeoutError, urllib.error.URLError):
                seen["stall"] = True
                continue
            if status == 429:
                seen["rate_limit"] = headers
            elif status == 500:
                seen["server_error"] = True
            elif status == 200:
                with pytest.raises(json.JSONDecodeError):
                    json.loads(data)
                seen["bad_json"] = True
        counted = dict(server.stats.faults)
    assert set(seen) == set(FAULT_KINDS) == set(counted)
    assert seen["rate_limit"]["Retry-After"] == "3" and seen["rate_limit"]["retry-after-ms"] == "2500"
    assert sum(counted.values()) == 16


def test_the_same_seed_draws_the_same_faults() -> None:
    chat = fresh_chat()

    def statuses(seed: int) -> list[int]:
        with serving("careful", faults=0.5, seed=seed, stall=0.0) as server:
            body = {"model": "m", "messages": chat.messages, "tools": tool_schemas()}
            return [post(server.base_url, body)[0] for _ in range(12)]

    assert statuses(5) == statuses(5)
    assert statuses(5) != statuses(6)


def test_a_mistake_is_recognised_when_it_comes_back_and_the_policy_goes_on() -> None:
    chat = fresh_chat()
    with serving("careful", model_errors=0.5, seed=2) as server:
        client = OpenAI(base_url=server.base_url, api_key="any", max_retries=0)
        while not chat.done:
            reply = client.chat.completions.create(model="m", messages=chat.messages, tools=tool_schemas())
            step = chat.step(assistant_message(reply))
        made = dict(server.stats.model_errors)
    assert sum(made.values()) >= 1
    assert step.info["score"]["reward"] == 1.0  # the refused mistakes cost turns, not the outcome
    names = [c["function"]["name"] for m in chat.messages for c in m.get("tool_calls") or []]
    arguments = [c["function"]["arguments"] for m in chat.messages for c in m.get("tool_calls") or []]
    assert "drop_warehouse" in names or any(a.endswith(": ") for a in arguments)


def test_a_bad_request_is_a_400_and_settings_are_checked() -> None:
    with serving("careful") as server:
        assert post(server.base_url, {"model": "m", "messages": []})[0] == 400
    with pytest.raises(ValueError, match="faults"):
        ServerSettings(faults=1.5)
    with (
        pytest.raises(ValueError, match="unknown policy"),
        serve_in_thread(ServerSettings(policy="oracle-x")),
    ):
        pass
