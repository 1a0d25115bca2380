"""What every policy shares: the interface, and the types that name a policy.

Policies see exactly what a model sees: observation strings in, action strings
out. They never touch the world object; a step observation is read back the way
any text agent would read it: a ``> call(...)`` line followed by its JSON result.
The interface (``Policy``, ``PolicyLike``) and the helpers that write calls and read
results (``call``, ``action``, ``results``, ``result_of``) live in
:mod:`batchgate_gym.kernel.text_policy`, since every desk and the model harness share
them; they are re-exported here for convenience.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from batchgate_gym.kernel.text_policy import (
    Policy,
    PolicyLike,
    TextPolicyFunction,
    action,
    call,
    result_of,
    results,
)

P = TypeVar("P", bound=Any)


def without_checks(policy: P, checks: Sequence[str], known: Sequence[str]) -> P:
    """``policy`` (a careful policy) leaving ``checks`` of its ``known`` checks out: its
    ``skipped``, and the name ``careful-without-<check>+<check>...`` (an ablation)."""
    unknown = [c for c in checks if c not in known]
    if unknown or not checks:
        raise ValueError(f"careful has no check {unknown[0] if unknown else ''!r}: {', '.join(known)}")
    policy.skipped = frozenset(checks)
    policy.name = "careful-without-" + "+".join(checks)
    return policy


__all__ = [
    "Policy",
    "PolicyLike",
    "TextPolicyFunction",
    "action",
    "call",
    "result_of",
    "results",
    "without_checks",
]
