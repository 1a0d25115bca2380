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
names at this level are the gate's, the first desk: its case type and files, its
contract and tool schemas, and ``replay``, ``replay_team`` and ``LogIntegrityError``,
which recompute and check a score from a case and an exported log.
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
        from .evaluation import evaluate

        return evaluate
    if name == "replay":
        from .desks.gate.replay import replay

        return replay
    if name == "replay_team":
        from .desks.gate.team import replay_team

        return replay_team
    raise AttributeError(name)
