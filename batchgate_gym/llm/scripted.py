"""A text policy that answers chat messages the way a tool-calling model would.

The policies of this package read text observations and write actions. To play
one through the chat adapter (or, later, behind an HTTP server that speaks the
chat-completions protocol), :class:`ScriptedModel` turns the messages since its
last answer back into the observation the policy expects, asks the policy, and
turns its action into an assistant message with ``tool_calls``. Nothing of the
episode is shared with it but the messages: it sees what a model would see.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from .chat import Message


class TextPolicy(Protocol):
    def reset(self, observation: str, info: dict[str, Any]) -> None: ...

    def act(self, observation: str) -> str: ...


def observation_since(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text observation the messages after the last assistant message stand for.

    The first time (no assistant message yet) that is the system and user messages
    joined as the reset observation was; after that, each ``tool`` message becomes a
    ``> name(...)`` line and its result, the way a step observation shows calls, and
    a ``user`` message is taken as it is.
    """
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    if last < 0:
        return "\n\n".join(
            str(m.get("content") or "") for m in messages if m.get("role") in ("system", "user")
        )
    names = {
        call.get("id"): (call.get("function") or {}).get("name", "")
        for call in messages[last].get("tool_calls") or []
    }
    lines: list[str] = []
    for message in messages[last + 1 :]:
        content = str(message.get("content") or "")
        if message.get("role") == "tool":
            result, _, rest = content.partition("\n\n")
            lines += [f"> {names.get(message.get('tool_call_id'), '')}(...)", result]
            if rest:
                lines.append(rest)
        else:
            lines.append(content)
    return "\n".join(lines)


class ScriptedModel:
    """Plays ``policy`` as a model: ``respond(messages)`` gives the next assistant message.

    An action the policy writes as JSON calls becomes ``tool_calls`` (arguments as
    a JSON string, ids unique within the episode); any other action is sent as the
    message's content, as a model that answered in prose would.
    """

    def __init__(self, policy: TextPolicy) -> None:
        self.policy = policy
        self._turn = 0

    def respond(self, messages: Sequence[Mapping[str, Any]]) -> Message:
        observation = observation_since(messages)
        if not any(m.get("role") == "assistant" for m in messages):
            self.policy.reset(observation, {})
            self._turn = 0
        self._turn += 1
        action = self.policy.act(observation)
        calls = _json_calls(action)
        if calls is None:
            return {"role": "assistant", "content": action}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{self._turn}_{index}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
                for index, (name, arguments) in enumerate(calls)
            ],
        }


def _json_calls(action: str) -> list[tuple[str, Any]] | None:
    """``(name, arguments)`` of each call in a JSON action, or None for anything else."""
    try:
        value = json.loads(action)
    except (json.JSONDecodeError, TypeError):
        return None
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            return None
        calls.append((item["name"], item.get("arguments", {})))
    return calls


__all__ = ["ScriptedModel", "TextPolicy", "observation_since"]
