"""Gymnasium (and, later, PettingZoo) environments over the batch-gate core.

Importing this package registers ``batchgate_gym/BadBatchGate-v0``.
"""

from __future__ import annotations

import gymnasium

from .gate import BatchGateEnv

ENV_ID = "batchgate_gym/BadBatchGate-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="batchgate_gym.envs.gate:BatchGateEnv")

__all__ = ["ENV_ID", "BatchGateEnv"]
