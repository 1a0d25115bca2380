"""Playing a text policy against a served desk, through each protocol's own client.

The reference policies read observations and write text actions, usually a JSON
list of calls. Over OpenEnv the action is sent as it is (one step, as
``env.step`` would take it). MCP has no batch of calls: each call of the action
is its own ``tools/call`` (so its own turn of the episode), and the policy reads
their results joined, the way one step's observation lists its calls. Both
return the episode's result (case, reward, score, log head, exported log), read
back from the server.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from batchgate_gym.kernel.text_policy import as_policy


def single_calls(action: str) -> list[tuple[str, Any]]:
    """The ``(name, arguments)`` of each call of a JSON action; ``ValueError`` for any other action."""
    try:
        value = json.loads(action)
    except json.JSONDecodeError:
        raise ValueError("only a JSON action can be sent as MCP tool calls") from None
    items = value if isinstance(value, list) else [value]
    if not items or not all(
        isinstance(item, Mapping) and isinstance(item.get("name"), str) for item in items
    ):
        raise ValueError("a JSON action is a list of {name, arguments} calls")
    return [(item["name"], item.get("arguments", {})) for item in items]


async def play_openenv(client: Any, policy: Any, reset: Mapping[str, Any]) -> dict[str, Any]:
    """One episode of ``policy`` over a :class:`~.openenv_server.DeskEnvClient`; its ended state."""
    from .openenv_server import DeskAction

    player = as_policy(policy)
    result = await client.reset(**reset)
    player.reset(result.observation.text, {"turn": 0, "calls": 0})
    while not result.done:
        result = await client.step(DeskAction(action=player.act(result.observation.text)))
    state = await client.state()
    return dict(
        state.model_dump(include={"case_id", "reward", "score", "log_head", "log", "step_count", "result"})
    )


async def play_mcp(session: Any, policy: Any) -> dict[str, Any]:
    """One episode of ``policy`` over an initialized ``mcp.ClientSession``; the result resource."""
    from .mcp_server import META, RESULT_URI, TASK_URI

    player = as_policy(policy)
    opening = await session.read_resource(TASK_URI)
    observation = opening.contents[0].text
    player.reset(observation, {"turn": 0, "calls": 0})
    done = False
    while not done:
        parts = []
        for name, arguments in single_calls(player.act(observation)):
            answer = await session.call_tool(name, arguments)
            if answer.isError:
                raise RuntimeError(f"{name}: {answer.content[0].text}")
            parts.append(answer.content[0].text)
            done = bool((answer.meta or {})[META]["done"])
            if done:
                break
        observation = "\n".join(parts)
    read = await session.read_resource(RESULT_URI)
    return dict(json.loads(read.contents[0].text))


__all__ = ["play_mcp", "play_openenv", "single_calls"]
