"""Text-level policies: reference agents, attackers and model-backed ones.

Every policy talks to an environment only through its text interface.
:data:`PolicyLike` names what the runners accept as a policy.
"""

from .attackers import ATTACKERS
from .base import Policy, PolicyLike, TextPolicyFunction, action, call, result_of, results
from .reference import REFERENCE_POLICIES, CarefulPolicy, NaivePolicy, RefuseAllPolicy

__all__ = [
    "ATTACKERS",
    "REFERENCE_POLICIES",
    "CarefulPolicy",
    "NaivePolicy",
    "Policy",
    "PolicyLike",
    "RefuseAllPolicy",
    "TextPolicyFunction",
    "action",
    "call",
    "result_of",
    "results",
]
