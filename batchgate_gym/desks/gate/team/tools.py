"""The team's nine tools: the seven of the single gate plus ``claim_batch`` and ``wait``.

The seven keep their parameters; only the two whose meaning changes with several
workers (``list_batches`` shows the shared board, ``submit_report`` ends one
worker's part, not the episode) get a new description.
"""

from __future__ import annotations

import dataclasses

from batchgate_gym.kernel.codec import ToolSpec

from ..tools import GATE_TOOLS

_TEAM_DESCRIPTIONS = {
    "list_batches": (
        "The batches on your list, in your order (id, table, rows, staging table, source), and the"
        " shared staging board: every batch, whose lists it is on, who claimed it, how often it was"
        " loaded and whether it is quarantined."
    ),
    "submit_report": (
        "Report which batches you loaded and which you quarantined (your own actions only)."
        " Allowed once; after it you are done and wait for the others."
    ),
}

_CLAIM = ToolSpec(
    "claim_batch",
    "Claim a batch so that only you may load or quarantine it. The first claim wins; a later"
    " claim is told who owns the batch.",
    (GATE_TOOLS["load_batch"].params[0],),
)
_WAIT = ToolSpec("wait", "Do nothing this turn.")

TEAM_TOOLS: dict[str, ToolSpec] = {
    **{
        name: dataclasses.replace(spec, description=_TEAM_DESCRIPTIONS.get(name, spec.description))
        for name, spec in GATE_TOOLS.items()
    },
    _CLAIM.name: _CLAIM,
    _WAIT.name: _WAIT,
}

__all__ = ["TEAM_TOOLS"]
