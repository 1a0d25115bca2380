"""batchgate_gym: an RL environment in which a tool-using agent gates a warehouse load.

The core (this package) holds the world, tools, SQL guard, log, grader and case
families and imports neither Gymnasium nor the policies. The environments live in
``batchgate_gym.envs`` (importing it registers ``batchgate_gym/BadBatchGate-v0``),
the policies in ``batchgate_gym.policies``, and the wiring that runs policies
against environments (``evaluate``, the ``batchgate`` command) in
``batchgate_gym.app``.
"""

from __future__ import annotations

from typing import Any

from .cases import Case, CaseFormatError, load_cases
from .contract import contract
from .registration import register_envs
from .tools import tool_schemas

register_envs()  # the Gymnasium ids; the environment code loads only on gymnasium.make

__version__ = "0.1.0"
__all__ = ["Case", "CaseFormatError", "contract", "evaluate", "load_cases", "tool_schemas"]


def __getattr__(name: str) -> Any:
    # ``evaluate`` needs the environments; import them only when it is asked for.
    if name == "evaluate":
        from .app.evaluate import evaluate

        return evaluate
    raise AttributeError(name)
