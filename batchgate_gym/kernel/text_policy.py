"""Helpers for policies that speak the text interface: write calls, read results.

Any text agent meets the same two formats, whatever the desk: an action is JSON
tool calls (``{"name", "arguments"}`` objects, several in a list), and a step
observation shows each call it ran as a ``> name(...)`` line followed by that
call's compact JSON result on the next line. These helpers write the first and
read the second, so a scripted policy needs no access to anything but the text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeAlias, runtime_checkable

from .codec import json_encoder, json_value


@runtime_checkable
class Policy(Protocol):
    """A stateful text policy: ``reset`` at the start of an episode, then ``act``."""

    def reset(self, observation: str, info: dict[str, Any]) -> None: ...

    def act(self, observation: str) -> str: ...


TextPolicyFunction: TypeAlias = Callable[[str], str]
"""A stateless policy: one observation in, one action out."""

PolicyLike: TypeAlias = Policy | type[Policy] | TextPolicyFunction
"""Anything that can play an episode: a policy object, a policy class (built with
no arguments), or a plain function from observation to action."""


class _CallablePolicy:
    """Adapts a plain ``observation -> action`` callable to the policy interface."""

    def __init__(self, function: Callable[[str], str]) -> None:
        self.function = function
        self.name: str = getattr(function, "__name__", type(function).__name__)  # what errors call it

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        return None

    def act(self, observation: str) -> str:
        return self.function(observation)


def as_policy(policy: PolicyLike) -> Policy:
    """A policy object from anything that can play: an object, a class, or a function."""
    built = policy() if isinstance(policy, type) else policy
    if isinstance(built, Policy):  # has reset and act
        return built
    if callable(built):
        return _CallablePolicy(built)
    raise TypeError("a policy needs reset(observation, info) and act(observation), or must be callable")


ToolCallDict = dict[str, Any]  # {"name": ..., "arguments": {...}}


def call(name: str, **arguments: Any) -> ToolCallDict:
    """One tool call as the JSON object an action holds."""
    return {"name": name, "arguments": arguments}


def action(*calls: ToolCallDict) -> str:
    """Several calls as one JSON action (a list, run in order): ``json.dumps`` of the
    list, written by an encoder built once."""
    return _dumps(list(calls))


_dumps = json_encoder(allow_nan=True, separators=(", ", ": "))  # json.dumps's own options


def results(observation: str) -> list[tuple[str, dict[str, Any]]]:
    """Every ``(tool name, result)`` pair in a step observation, in order.

    A result line that is not JSON (an observation cut short, say) reads as
    ``{"error": "unreadable result"}`` rather than raising.
    """
    out: list[tuple[str, dict[str, Any]]] = []
    lines = observation.split("\n")
    for index, line in enumerate(lines[:-1]):
        if line.startswith("> "):
            name = line[2:].split("(", 1)[0]
            try:
                out.append((name, json_value(lines[index + 1])))
            except json.JSONDecodeError:
                out.append((name, {"error": "unreadable result"}))
    return out


def result_of(observation: str, name: str) -> dict[str, Any]:
    """The last result of tool ``name`` in an observation; ``ValueError`` if there is none."""
    return results_of(observation, name)[0]


def results_of(observation: str, *names: str) -> list[dict[str, Any]]:
    """:func:`result_of` for each of ``names``, the observation read once (a contract and
    a listing in one observation are decoded once, not once per name)."""
    return last_results(results(observation), *names)


def last_results(answered: Sequence[tuple[str, Mapping[str, Any]]], *names: str) -> list[Any]:
    """The last result of each of ``names`` among ``(tool name, result)`` pairs, as
    :func:`results` reads them off an observation; ``ValueError`` for a name not there."""
    last = dict(answered)
    missing = next((name for name in names if name not in last), None)
    if missing is not None:
        raise ValueError(f"no {missing} result in the observation")
    return [last[name] for name in names]


__all__ = ["ToolCallDict", "action", "call", "last_results", "result_of", "results", "results_of"]
