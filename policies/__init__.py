"""Text-level policies: reference agents (and, later, attackers and model-backed ones).

Every policy talks to an environment only through its text interface.
"""

from .attackers import ATTACKERS
from .base import Policy, action, call, result_of, results
from .reference import REFERENCE_POLICIES, CarefulPolicy, NaivePolicy, RefuseAllPolicy

__all__ = [
    "ATTACKERS",
    "REFERENCE_POLICIES",
    "CarefulPolicy",
    "NaivePolicy",
    "Policy",
    "RefuseAllPolicy",
    "action",
    "call",
    "result_of",
    "results",
]
