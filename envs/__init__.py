"""Gymnasium and PettingZoo environments over the batch-gate core.

``batchgate_gym/BadBatchGate-v0`` (text actions, :mod:`.gate`) and its
macro-action form ``batchgate_gym/BadBatchGateMacro-v0`` (:mod:`.macro`) are
registered by ``import batchgate_gym`` (:mod:`batchgate_gym.registration`). The
text environment is :class:`~.text_env.TextDeskEnv`, shared by every desk and
given its domain by a :class:`~.text_env.DeskAdapter`; ``BatchGateEnv`` is it with
the gate's adapter. The multi-agent team game is :mod:`.team` (PettingZoo AEC and
parallel APIs), also under its versioned name :mod:`.team_v0`.
"""

from __future__ import annotations

from batchgate_gym.registration import ENV_ID, MACRO_ENV_ID, register_envs

from .gate import BatchGateEnv
from .text_env import DeskAdapter, TextDeskEnv

register_envs()  # already done by ``import batchgate_gym``; harmless to repeat

__all__ = ["ENV_ID", "MACRO_ENV_ID", "BatchGateEnv", "DeskAdapter", "TextDeskEnv"]
