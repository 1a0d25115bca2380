"""batchgate_gym: a Gymnasium environment suite for tool-using agents.

An agent acts through tool calls written as text and reads text back; what it did is
graded at the end from the world and a hash-chained log, never from what it says it
did, and a seeded ``reset()`` draws cases from procedural families. Three desks share
one kernel (:mod:`.kernel`: log, SQL guard, action codec, episode loop, replay): the
batch gate (gate a nightly warehouse load), the refund desk (refund a ticket when the
payment tool lies) and the analyst desk (answer business questions over real data
engines, with evidence), each in :mod:`.desks` with its world, tools, cases and grader.

The core (the kernel and the desks) imports neither the environments nor the policies.
Importing the package registers every desk's Gymnasium ids by string entry point, the
one place the core touches Gymnasium (:mod:`.registration`). The environments live in
``batchgate_gym.envs``, the policies in ``batchgate_gym.policies``; the desk registry
(:mod:`.desks.registry`) names what each desk is played with; above it the play loop
(:mod:`.evaluation`, with ``evaluate``), and above that the ``batchgate`` command
(:mod:`.app`), the model harness (:mod:`.llm`), the network servers (:mod:`.serving`)
and the speed benchmark (:mod:`.bench`). The
names at this level are every desk's: :func:`evaluate` plays a policy on a desk,
:func:`replay` recomputes a desk's score from a case and an exported log (raising
``LogIntegrityError`` for a log that is not an untouched one), :func:`desk_names`
lists the desks. The gate's own names that stood here when it was the only desk
(``Case``, ``CaseFormatError``, ``load_cases``, ``contract``, ``tool_schemas``,
``replay_team``) still resolve, with a ``DeprecationWarning`` naming their home,
for this release.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from .desks import registry as _registry
from .desks.registry import DEFAULT_DESK as _DEFAULT_DESK
from .kernel.ledger import LogIntegrityError
from .registration import register_envs

register_envs()  # the Gymnasium ids; the environment code loads only on gymnasium.make

__version__ = "0.1.0"
__all__ = ["LogIntegrityError", "desk_names", "evaluate", "replay"]

# The gate's names that stood at this level before there were other desks: (module, name).
_GATE_ALIASES = {
    "Case": ("desks.gate.cases", "Case"),
    "CaseFormatError": ("desks.gate.cases", "CaseFormatError"),
    "load_cases": ("desks.gate.cases", "load_cases"),
    "contract": ("desks.gate.contract", "contract"),
    "tool_schemas": ("desks.gate.tools", "tool_schemas"),
    "replay_team": ("desks.gate.team", "replay_team"),
}


def desk_names() -> list[str]:
    """Every desk's name (``gate``, ``refund``, ``analyst``, and any added), as ``--desk`` takes them."""
    return _registry.names()


def replay(case: Any, log: Sequence[Mapping[str, Any]], *, desk: str = _DEFAULT_DESK, **options: Any) -> Any:
    """Recompute ``desk``'s score from ``case`` and an exported log alone (the default desk's,
    the gate's, when none is named).

    ``options`` are the desk's replay's: ``head`` (the ``log_head`` the episode reported)
    or ``key`` (the log key the environment was given), and ``nonce``. Raises
    ``LogIntegrityError`` for any log that is not the untouched log of an episode played
    on ``case``, and ``ValueError`` for a desk there is not.
    """
    known = desk_names()
    if desk not in known:
        raise ValueError(f"no desk {desk!r}; desks: {', '.join(known)}")
    return importlib.import_module(f"{__name__}.desks.{desk}.replay").replay(case, log, **options)


def __getattr__(name: str) -> Any:
    # Imported when first asked for: ``evaluate`` needs the environments, which a plain
    # ``import batchgate_gym`` need not load.
    if name == "evaluate":
        from .evaluation import evaluate

        return evaluate
    if name in _GATE_ALIASES:
        module, attribute = _GATE_ALIASES[name]
        warnings.warn(
            f"batchgate_gym.{name} is the gate desk's: import it from {__name__}.{module}"
            " (this alias goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    raise AttributeError(name)
