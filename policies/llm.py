"""A language model as a policy: the same ``reset``/``act`` protocol as every other.

:class:`ModelPolicy` keeps the conversation a chat-completions model would see
(the reset observation as system and user messages, then, after each of its
answers, the step observation as ``tool`` messages or a user message, exactly as
:mod:`batchgate_gym.llm.chat` maps them) and asks the model for each action over
the official ``openai`` client. Because it is a policy, ``evaluate(...)``,
``batchgate report --policy batchgate_gym.policies.llm:...`` and every comparison
script run it like the scripted ones; for many rollouts with retries, resumable
result files and infrastructure errors kept apart from scores, use
``batchgate run-model``.

A request that fails (HTTP errors after the client's own retries, timeouts, a
response without a message) raises: a policy has no way to say "not scored", and a
broken transcript must not be graded. The client is made on first use, so the
policy pickles to worker processes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from batchgate_gym.llm.chat import ChatSettings, Message, action_of, answer_messages, opening_messages


class ModelPolicy:
    """Ask ``model`` at ``base_url`` for every action; ``tools`` are the desk's function schemas."""

    name = "model"

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        tools: Sequence[Mapping[str, Any]],
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        settings: ChatSettings | None = None,
        timeout: float = 60.0,
        max_retries: int = 5,
        temperature: float | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.tools = [dict(tool) for tool in tools]
        self.api_key = api_key
        self.api_key_env = api_key_env
        self.settings = settings or ChatSettings()
        self.timeout = timeout
        self.max_retries = max_retries
        self.temperature = temperature
        self.name = model
        self.messages: list[Message] = []
        self._last: Message | None = None
        self._client: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_client": None}  # a client holds sockets; each process makes its own

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        self.messages = opening_messages(observation, self.settings, self.tools)
        self._last = None

    def act(self, observation: str) -> str:
        if self._last is not None:
            self.messages.extend(answer_messages(observation, self._last, self.settings))
        assistant = self._ask()
        self.messages.append(assistant)
        self._last = assistant
        return action_of(assistant, self.settings)

    def _ask(self) -> Message:
        request: dict[str, Any] = {"model": self.model, "messages": self.messages}
        if self.settings.mode == "tools":
            request["tools"] = self.tools
        if self.temperature is not None:
            request["temperature"] = self.temperature
        response = self.client().chat.completions.create(**request)
        choices = getattr(response, "choices", None)
        message = choices[0].message if choices else None
        if message is None:
            raise RuntimeError(f"the model's response holds no message: {response!r}"[:500])
        out: Message = {"role": "assistant", "content": message.content}
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function.name, "arguments": call.function.arguments},
                }
                for call in message.tool_calls
            ]
        return out

    def client(self) -> Any:
        if self._client is None:
            from openai import OpenAI

            key = self.api_key if self.api_key is not None else os.environ.get(self.api_key_env)
            if key is None:
                raise RuntimeError(f"no API key: pass api_key= or set {self.api_key_env}")
            self._client = OpenAI(
                base_url=self.base_url, api_key=key, timeout=self.timeout, max_retries=self.max_retries
            )
        return self._client


__all__ = ["ModelPolicy"]
