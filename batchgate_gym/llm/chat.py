"""An episode as an OpenAI-style chat: messages in, messages out, any desk.

A language model plays an episode the way a chat-completions API speaks: it is
given a system and a user message, answers with an assistant message whose
``tool_calls`` are the tools it wants run, and reads each call's result back as a
``tool`` message carrying that call's ``tool_call_id``. :class:`ChatEpisode` sits
between that conversation and a text environment of this package (any desk): it
turns every assistant message into exactly one environment step and every step
observation back into messages, so a model is scored by the same environment, log
and grader as any scripted policy.

* The reset observation is the whole task; its last paragraph (after the last
  blank line) is the case itself and becomes the user message, everything before
  it (the brief, the tools, the syntax) the system message. In ``mode="tools"``
  the brief is told in the terms of the tool-calling interface (:func:`brief_for`):
  the environment's paragraphs on the call syntax and the tool list (the request
  carries the tools) give way to one on tool calls, and no text call syntax is
  shown, there or in any later message. ``system_prompt`` replaces the whole
  system message.
* An assistant message's ``tool_calls``, all of them and in order, become one
  action: the OpenAI wrapper objects as a JSON list, which the action codec reads
  as it is (arguments may be a JSON string). A malformed call (an unknown tool,
  arguments that are not JSON) is the environment's to refuse: the step's error
  observation goes back in a ``tool`` message for every call of the message.
* An assistant message without tool calls is a turn too. By default it becomes
  an empty action, which the environment refuses and logs, and the reply is the
  configured nudge followed by the environment's own error text. A desk whose
  episodes end on a plain message (the refund desk's customer reply) gives
  ``no_tool_call``, which turns the message's content into the action that ends
  it; the brief says so, in both modes, in the words of that action's tool.
* In ``mode="text"`` the model writes its calls in the message content, in the
  call syntax or JSON the reset observation describes; the step observation comes
  back as a user message. With ``no_tool_call``, a message in which no line reads
  as a call (see :func:`reads_as_calls`) is the plain message above.

The adapter keeps the whole transcript in :attr:`ChatEpisode.messages`, and the
final step's ``info`` (score, ``log_head``) is the environment's own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

Message = dict[str, Any]

MODES = ("tools", "text")  # OpenAI tool calls, or calls written in the message
DEFAULT_MODE = MODES[0]

DEFAULT_NUDGE = (
    "No tool was called. Call one or more tools through the tool-calling interface"
    " (not in the message text); the episode only moves through them."
)
TOOLS_HOW_TO_ACT = (
    "How to act: call the tools you are given through the tool-calling interface, one or"
    " more calls per message; they run in order and each result comes back as a tool"
    " message, in JSON."
)
SYNTAX_LINE = "Accepted syntax:"  # how the environment's error text starts its syntax help
_PARAGRAPHS_REPLACED = ("Tools:", "How to act:")  # the text-mode brief's; the request carries the tools
_CALL_LIKE = re.compile(r"^\s*(?:[a-z_][a-z0-9_]*\(|[\[{]|```)", re.MULTILINE)


class TextEnv(Protocol):
    """What the adapter needs of an environment: Gymnasium's reset and step over text."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]: ...

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]: ...


@dataclass(frozen=True)
class ChatSettings:
    """How the conversation maps onto the environment.

    ``mode`` is ``"tools"`` (OpenAI tool calls) or ``"text"`` (calls written in the
    content); ``nudge`` answers an assistant message without tool calls;
    ``no_tool_call`` (content -> action), when given, replaces that nudge with the
    desk's own action for a plain message; ``system_prompt``, when given, is the
    system message instead of the brief.
    """

    mode: str = DEFAULT_MODE
    nudge: str = DEFAULT_NUDGE
    no_tool_call: Callable[[str], str] | None = None
    system_prompt: str | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode is 'tools' or 'text', not {self.mode!r}")


@dataclass
class ChatStep:
    """What one assistant message did: the messages it drew, and the step's outcome."""

    messages: list[Message]
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


class ChatEpisode:
    """One episode of ``env`` as a chat; ``tools`` are the desk's OpenAI function schemas
    (``None``: those the episode offers, read at each reset with :func:`env_tools`)."""

    def __init__(
        self,
        env: TextEnv,
        tools: Sequence[Mapping[str, Any]] | None = None,
        settings: ChatSettings | None = None,
    ) -> None:
        self.env = env
        self._given_tools = None if tools is None else [dict(tool) for tool in tools]
        self.tools = list(self._given_tools or [])
        self.settings = settings or ChatSettings()
        self.messages: list[Message] = []
        self.done = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> list[Message]:
        """Start an episode; the system and user messages a model is first shown."""
        observation, _info = self.env.reset(seed=seed, options=options)
        if self._given_tools is None:
            self.tools = env_tools(self.env)
        self.messages = opening_messages(observation, self.settings, self.tools)
        self.done = False
        return list(self.messages)

    def step(self, message: Mapping[str, Any]) -> ChatStep:
        """Play one assistant message; returns the messages it drew (tool or user)."""
        if self.done:
            raise RuntimeError("the episode is over; reset before sending another message")
        assistant = _assistant(message)
        self.messages.append(assistant)
        observation, reward, terminated, truncated, info = self.env.step(action_of(assistant, self.settings))
        self.done = terminated or truncated
        drawn = answer_messages(observation, assistant, self.settings)
        self.messages.extend(drawn)
        return ChatStep(drawn, float(reward), terminated, truncated, info)

    def end_unfinished(self, reason: str) -> dict[str, Any]:
        """End the episode here, unfinished (the model can go no further); the final ``info``.

        The environment seals its log with ``reason`` and scores the episode as the
        turn limit would: what the desk pays an unfinished episode.
        """
        if self.done:
            raise RuntimeError("the episode is over already")
        self.done = True
        info: dict[str, Any] = self.env.unwrapped.end_unfinished(reason)  # type: ignore[attr-defined]
        return info


def opening_messages(
    observation: str, settings: ChatSettings | None = None, tools: Sequence[Mapping[str, Any]] = ()
) -> list[Message]:
    """The reset observation as a system message (the brief) and a user message (the case)."""
    settings = settings or ChatSettings()
    brief, _, case = observation.rpartition("\n\n")
    if not brief:
        brief, case = case, ""
    system = brief_for(brief, settings, tools) if settings.system_prompt is None else settings.system_prompt
    return [{"role": "system", "content": system}, {"role": "user", "content": case}]


def brief_for(brief: str, settings: ChatSettings, tools: Sequence[Mapping[str, Any]]) -> str:
    """The environment's brief as the mode tells it (see the module docstring)."""
    note = plain_message_note(settings, tools)
    paragraphs = brief.split("\n\n")
    if settings.mode == "text":
        return "\n\n".join(f"{p} {note}" if note and p.startswith("How to act:") else p for p in paragraphs)
    names = [name for name in map(_tool_name, tools) if name]
    told = f"{TOOLS_HOW_TO_ACT} {note}".strip()
    out: list[str] = []
    for paragraph in paragraphs:
        if paragraph.startswith(_PARAGRAPHS_REPLACED):
            if told not in out:
                out.append(told)
            continue
        out.append(_calls_named(paragraph, names))
    if told not in out:
        out.append(told)
    return "\n\n".join(out)


def plain_message_note(settings: ChatSettings, tools: Sequence[Mapping[str, Any]]) -> str:
    """What a plain message does on a desk that maps it (``no_tool_call``): said in that tool's words."""
    if settings.no_tool_call is None:
        return ""
    try:
        name = json.loads(settings.no_tool_call(""))["name"]
    except (ValueError, KeyError, TypeError):
        return "A plain message, with no tool call, is an action too."
    described = {_tool_name(tool): _tool_description(tool) for tool in tools}
    what = described.get(name) or f"the {name} tool."
    return f"A plain message, with no tool call, is your {name}: {what[:1].lower()}{what[1:]}"


def reads_as_calls(content: str) -> bool:
    """A line of ``content`` starts like a call (``name(``), a JSON call or a code fence."""
    return bool(_CALL_LIKE.search(content))


def action_of(assistant: Mapping[str, Any], settings: ChatSettings) -> str:
    """The one action an assistant message stands for."""
    content = assistant.get("content") or ""
    calls = assistant.get("tool_calls") or []
    if settings.mode == "text":
        if settings.no_tool_call is not None and not reads_as_calls(content):
            return settings.no_tool_call(content)
        return content
    if calls:
        return json.dumps([_as_call(call) for call in calls])
    if settings.no_tool_call is not None:
        return settings.no_tool_call(content)
    return ""  # refused and logged by the environment, like any action without a call


def answer_messages(observation: str, assistant: Mapping[str, Any], settings: ChatSettings) -> list[Message]:
    """The step observation that answered ``assistant``, as the messages a model reads next."""
    calls = assistant.get("tool_calls") or []
    if settings.mode == "text":
        return [{"role": "user", "content": observation}]
    observation = without_syntax(observation)
    if calls:
        return _tool_messages(observation, list(calls))
    # What a plain message became ran as a text call; the model is shown its result, not that call.
    observation = "\n".join(line for line in observation.split("\n") if not line.startswith("> "))
    if settings.no_tool_call is None:
        return [{"role": "user", "content": f"{settings.nudge}\n{observation}"}]
    return [{"role": "user", "content": observation}]


def without_syntax(observation: str) -> str:
    """The observation less the environment's text-call syntax help (tools mode never shows it)."""
    return "\n".join(line for line in observation.split("\n") if not line.startswith(SYNTAX_LINE))


def _tool_name(tool: Mapping[str, Any]) -> str:
    function = tool.get("function")
    return str(function.get("name") or "") if isinstance(function, Mapping) else ""


def _tool_description(tool: Mapping[str, Any]) -> str:
    function = tool.get("function")
    return str(function.get("description") or "") if isinstance(function, Mapping) else ""


def _calls_named(text: str, names: Sequence[str]) -> str:
    """``name(args)`` of a tool, written as a text call in the brief, named as the tool instead."""
    if not names:
        return text
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\([^()\n]*\)")
    return pattern.sub(lambda match: match.group(1), text)


def _assistant(message: Mapping[str, Any]) -> Message:
    """The message as it goes into the transcript: role, content and tool calls only."""
    out: Message = {"role": "assistant", "content": message.get("content")}
    calls = message.get("tool_calls")
    if calls:
        out["tool_calls"] = [dict(call) for call in calls]
    return out


def _as_call(call: Any) -> Any:
    """An OpenAI tool call as the action codec reads it; anything else is passed on to be refused."""
    if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping):
        return {"type": "function", "function": dict(call["function"])}
    return call


def _tool_messages(observation: str, calls: list[Any]) -> list[Message]:
    """One ``tool`` message per call, each with that call's result line.

    The step observation shows every call it ran as a ``> name(...)`` line and
    its JSON result on the next. When the action was refused as a whole (nothing
    ran) every call gets the error text; text that belongs to no call (the turn
    header, the end of the episode) is added to the last message.
    """
    lines = observation.split("\n")
    results: list[str] = []
    rest: list[str] = []
    index = 0
    while index < len(lines):
        if lines[index].startswith("> ") and index + 1 < len(lines):
            results.append(lines[index + 1])
            index += 2
        else:
            rest.append(lines[index])
            index += 1
    if len(results) != len(calls):
        results = [observation] * len(calls)
        rest = []
    messages = [
        {"role": "tool", "tool_call_id": _call_id(call, position), "content": text}
        for position, (call, text) in enumerate(zip(calls, results, strict=True))
    ]
    extra = "\n".join(line for line in rest if line.strip())
    if extra and messages:
        messages[-1]["content"] += f"\n\n{extra}"
    return messages


def _call_id(call: Any, position: int) -> str:
    given = call.get("id") if isinstance(call, Mapping) else None
    return given if isinstance(given, str) else f"call_{position}"


def env_tools(env: Any) -> list[dict[str, Any]]:
    """The tools the environment's current episode offers, in OpenAI function format.

    Read from the episode itself after ``reset``, so every tool the case's settings
    enable (the refund desk's ``void_refund`` under recovery) is offered, and no other.
    """
    episode = getattr(env.unwrapped, "episode", None)
    if episode is None:
        raise RuntimeError("call reset() before asking for the episode's tools")
    return [spec.json_schema() for spec in episode.world.tools.values()]


__all__ = [
    "DEFAULT_NUDGE",
    "TOOLS_HOW_TO_ACT",
    "ChatEpisode",
    "ChatSettings",
    "ChatStep",
    "Message",
    "TextEnv",
    "action_of",
    "answer_messages",
    "brief_for",
    "env_tools",
    "opening_messages",
    "plain_message_note",
    "reads_as_calls",
    "without_syntax",
]
