"""Gymnasium and PettingZoo environments over the batch-gate core.

Importing this package registers ``batchgate_gym/BadBatchGate-v0`` (text actions,
:mod:`.gate`) and its macro-action form ``batchgate_gym/BadBatchGateMacro-v0``
(:mod:`.macro`). The multi-agent team game is :mod:`.team` (PettingZoo AEC and
parallel APIs).
"""

from __future__ import annotations

import gymnasium

from .gate import BatchGateEnv

ENV_ID = "batchgate_gym/BadBatchGate-v0"
MACRO_ENV_ID = "batchgate_gym/BadBatchGateMacro-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="batchgate_gym.envs.gate:BatchGateEnv")
if MACRO_ENV_ID not in gymnasium.registry:
    gymnasium.register(id=MACRO_ENV_ID, entry_point="batchgate_gym.envs.macro:MacroGateEnv")

__all__ = ["ENV_ID", "MACRO_ENV_ID", "BatchGateEnv"]
