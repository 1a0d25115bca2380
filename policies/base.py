"""What every policy shares: the interface, and reading results out of observations.

Policies see exactly what a model sees: observation strings in, action strings
out. They never touch the world object; a step observation is read back the way
any text agent would read it: a ``> call(...)`` line followed by its JSON result.
"""

from __future__ import annotations

import json
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Policy(Protocol):
    """A stateful text policy: ``reset`` at the start of an episode, then ``act``."""

    def reset(self, observation: str, info: dict[str, Any]) -> None: ...

    def act(self, observation: str) -> str: ...


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def action(*calls: dict[str, Any]) -> str:
    """Several calls as one JSON action."""
    return json.dumps(list(calls))


def results(observation: str) -> list[tuple[str, dict[str, Any]]]:
    """Every ``(tool name, result)`` pair in a step observation, in order."""
    out: list[tuple[str, dict[str, Any]]] = []
    lines = observation.split("\n")
    for index, line in enumerate(lines[:-1]):
        if line.startswith("> "):
            name = line[2:].split("(", 1)[0]
            try:
                out.append((name, json.loads(lines[index + 1])))
            except json.JSONDecodeError:
                out.append((name, {"error": "unreadable result"}))
    return out


def result_of(observation: str, name: str) -> dict[str, Any]:
    """The last result of tool ``name`` in an observation."""
    found = [result for tool, result in results(observation) if tool == name]
    if not found:
        raise ValueError(f"no {name} result in the observation")
    return found[-1]
