"""What every policy shares: the interface, and the types that name a policy.

Policies see exactly what a model sees: observation strings in, action strings
out. They never touch the world object; a step observation is read back the way
any text agent would read it: a ``> call(...)`` line followed by its JSON result.
The helpers that write calls and read results (``call``, ``action``, ``results``,
``result_of``) live in :mod:`batchgate_gym.kernel.text_policy`, since every desk
shares them; they are re-exported here for convenience.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeAlias, runtime_checkable

from batchgate_gym.kernel.text_policy import action, call, result_of, results


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

__all__ = ["Policy", "PolicyLike", "TextPolicyFunction", "action", "call", "result_of", "results"]
