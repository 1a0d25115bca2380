"""A desk as a verifiers environment: ``vf-eval`` and verifiers' trainers play it over any model.

:func:`load_environment` (the entry point verifiers looks for) builds a
:class:`DeskVerifiersEnv`, a ``verifiers.MultiTurnEnv`` (the 0.3 line's classic
API) over a desk's fixed split:

* **dataset**: one row per case, its ``prompt`` the chat's opening messages in
  tools mode (:func:`~.chat.opening_messages`: the brief told in tool-calling
  terms, then the case), ``info`` the case's index and id;
* **tools**: the episode's own tools (:func:`~.chat.env_tools`; ``void_refund``
  under ``recovery=True``), given to verifiers as its ``tool_defs``;
* **each model turn** is one step of the desk's text environment through
  :class:`~.chat.ChatEpisode`, exactly as ``batchgate run-model`` plays it: the
  message's tool calls become one action, the results come back as ``tool``
  messages (a plain message is the nudge, or the refund desk's reply); the
  episode's end ends the rollout;
* **the reward** is the environment's final reward (the desk's score), and an
  episode the harness stopped before its end (verifiers' own turn cap) is scored
  as the desk scores any unfinished episode. A rollout verifiers marks as an
  error is left at 0 with verifiers' error, not graded.

Needs the ``verifiers`` extra (``pip install -e '.[verifiers]'``), kept apart from
``llm`` because verifiers pins its own stack.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import verifiers as vf
from datasets import Dataset

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import DEFAULT_DESK

from .chat import ChatEpisode, ChatSettings

UNFINISHED = "stopped by the harness before the episode ended"


def as_chat_message(message: Any) -> dict[str, Any]:
    """A verifiers assistant message (its pydantic model or a dict) as the chat adapter reads it."""
    data = message.model_dump() if hasattr(message, "model_dump") else dict(message)
    out: dict[str, Any] = {"role": "assistant", "content": data.get("content")}
    calls = []
    for call in data.get("tool_calls") or []:
        function = call.get("function") if isinstance(call.get("function"), Mapping) else call
        calls.append(
            {
                "id": call.get("id"),
                "type": "function",
                "function": {"name": function.get("name"), "arguments": function.get("arguments")},
            }
        )
    if calls:
        out["tool_calls"] = calls
    return out


def as_verifiers_message(message: Mapping[str, Any]) -> Any:
    """A ``tool`` or ``user`` message of the chat adapter as verifiers' own message type."""
    if message["role"] == "tool":
        return vf.ToolMessage(tool_call_id=message["tool_call_id"], content=message["content"])
    return vf.UserMessage(content=message["content"])


def as_tool_def(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI function schema as verifiers' provider-neutral tool definition."""
    function = schema["function"]
    return {
        "name": function["name"],
        "description": function["description"],
        "parameters": function["parameters"],
    }


class DeskVerifiersEnv(vf.MultiTurnEnv):
    """One desk's fixed split as a verifiers multi-turn environment (see the module docstring)."""

    def __init__(
        self, desk: str = DEFAULT_DESK, split: str | None = None, max_turns: int = -1, **env_kwargs: Any
    ) -> None:
        self.desk = registry.get(desk)
        self.cases = self.desk.fixed_cases(split=split)
        self.env_kwargs = dict(env_kwargs)
        self.settings = ChatSettings(mode="tools", no_tool_call=self.desk.chat_no_tool_call)
        rows, tools = [], []
        for index, case in enumerate(self.cases):
            chat = self._chat(index)
            rows.append(
                {
                    "prompt": chat.messages,
                    "answer": "",
                    "info": {"case_index": index, "case_id": case.case_id},
                }
            )
            tools = chat.tools
            _close(chat)
        dataset = Dataset.from_list(rows)
        super().__init__(
            dataset=dataset,
            eval_dataset=dataset,
            tool_defs=[as_tool_def(tool) for tool in tools],
            rubric=vf.Rubric(funcs=[desk_reward]),
            max_turns=max_turns,
        )

    def _chat(self, index: int) -> ChatEpisode:
        """A fresh episode of case ``index`` (seeded by its index, as run-model plays it)."""
        env = self.desk.make_env(cases=self.cases, **self.env_kwargs)
        chat = ChatEpisode(env, None, self.settings)
        chat.reset(seed=index, options={"case_index": index})
        return chat

    async def setup_state(self, state: vf.State) -> vf.State:
        info = state["info"]
        state["desk_chat"] = self._chat(int(info["case_index"]))
        state["desk_reward"] = 0.0
        return state

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs: Any) -> vf.Messages:
        chat: ChatEpisode = state["desk_chat"]
        step = chat.step(as_chat_message(messages[-1]))
        answer = [as_verifiers_message(message) for message in step.messages]
        if step.done:
            state["desk_reward"] = step.reward
            state["desk_info"] = step.info
            state["final_env_response"] = answer
        return answer

    @vf.cleanup
    async def close_episode(self, state: vf.State) -> None:
        chat: ChatEpisode | None = state.pop("desk_chat", None)
        if chat is None:
            return
        if not chat.done and state.get("error") is None:
            info = chat.end_unfinished(UNFINISHED)
            state["desk_reward"] = float(info["score"]["reward"])
            state["desk_info"] = info
        _close(chat)


def _close(chat: ChatEpisode) -> None:
    cast(Any, chat.env).close()  # a Gymnasium env; the adapter types only reset and step


def desk_reward(state: vf.State) -> float:
    """The desk's reward for the rollout: the environment's, recomputed from its world and log."""
    return float(state.get("desk_reward", 0.0))


def load_environment(desk: str = DEFAULT_DESK, split: str | None = None, **kwargs: Any) -> DeskVerifiersEnv:
    """The verifiers entry point: ``desk``'s ``split`` (its default split if None); other keywords
    are the desk's environment options (``recovery=True``) or ``max_turns``."""
    return DeskVerifiersEnv(desk=desk, split=split, **kwargs)


__all__ = [
    "DeskVerifiersEnv",
    "as_chat_message",
    "as_tool_def",
    "as_verifiers_message",
    "desk_reward",
    "load_environment",
]
