"""batchgate_gym: an RL environment in which a tool-using agent gates a warehouse load.

The core (this package) holds the world, tools, SQL guard, log, grader and case
families and imports neither the environments nor the policies. Importing it
registers the Gymnasium ids (``batchgate_gym/BadBatchGate-v0`` and its macro form)
by string entry point, the one place the core touches Gymnasium
(:mod:`.registration`). The environments live in ``batchgate_gym.envs``, the
policies in ``batchgate_gym.policies``, and the wiring that runs policies against
environments (``evaluate``, the ``batchgate`` command) in ``batchgate_gym.app``.
``replay``, ``replay_team`` and ``LogIntegrityError`` recompute and check a score
from a case and an exported log.
"""

from __future__ import annotations

from typing import Any

from .desks.gate.cases import Case, CaseFormatError, load_cases
from .desks.gate.contract import contract
from .desks.gate.tools import tool_schemas
from .kernel.ledger import LogIntegrityError
from .registration import register_envs

register_envs()  # the Gymnasium ids; the environment code loads only on gymnasium.make

__version__ = "0.1.0"
__all__ = [
    "Case",
    "CaseFormatError",
    "LogIntegrityError",
    "contract",
    "evaluate",
    "load_cases",
    "replay",
    "replay_team",
    "tool_schemas",
]


def __getattr__(name: str) -> Any:
    # Imported when first asked for: ``evaluate`` needs the environments, and the
    # replays the world and grader, which a plain ``import batchgate_gym`` need not load.
    if name == "evaluate":
        from .app.evaluate import evaluate

        return evaluate
    if name == "replay":
        from .desks.gate.replay import replay

        return replay
    if name == "replay_team":
        from .desks.gate.team import replay_team

        return replay_team
    raise AttributeError(name)
