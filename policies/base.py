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

from batchgate_gym.kernel.text_policy import (
    Policy,
    PolicyLike,
    TextPolicyFunction,
    action,
    call,
    result_of,
    results,
)

__all__ = ["Policy", "PolicyLike", "TextPolicyFunction", "action", "call", "result_of", "results"]
