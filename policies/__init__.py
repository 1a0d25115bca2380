"""Text-level policies: one package per desk, and what every policy shares.

Every policy talks to an environment only through its text interface. Each desk's
package holds the same modules for the same jobs: ``reference`` (the reference
policies, ``REFERENCE_POLICIES``), ``attackers`` (the cheats held to a margin below
the honest policy, ``ATTACKERS``, and the baselines measured beside them) and, where
the desk has a team game, ``team`` (``TEAM_POLICIES``); a desk adds its own helpers
beside them. :mod:`.base` holds the policy protocol (:data:`PolicyLike` names what
the runners accept as a policy) and :mod:`.llm` a language model as a policy, on
any desk.
"""

from .base import Policy, PolicyLike, TextPolicyFunction, action, call, result_of, results

__all__ = [
    "Policy",
    "PolicyLike",
    "TextPolicyFunction",
    "action",
    "call",
    "result_of",
    "results",
]
