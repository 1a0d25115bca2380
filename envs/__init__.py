"""Gymnasium and PettingZoo environments over the desks, one package per desk.

Every desk's package holds the same modules for the same forms: ``text`` (the
Gymnasium environment with text actions and observations), ``macro`` and
``macro_codec`` (discrete moves and numeric observations for standard RL
libraries, where the desk has them), ``team`` and its versioned name ``team_v0``
(PettingZoo AEC and parallel forms of a team game, where the desk has one). The
forms themselves are shared: :class:`~.text_env.TextDeskEnv` given a desk's
:class:`~.text_env.DeskAdapter`, :class:`~.macro_env.TextMacroEnv` over a text
environment, and :class:`~.team_env.TeamAECEnv` / :class:`~.team_env.TeamParallelEnv`
given a desk's :class:`~.team_env.TeamAdapter`. ``import batchgate_gym`` registers
every desk's Gymnasium ids (:mod:`batchgate_gym.registration`), by string entry point.
"""

from __future__ import annotations

import importlib
from typing import Any

from batchgate_gym import registration

from .text_env import DeskAdapter, TextDeskEnv

registration.register_envs()  # already done by ``import batchgate_gym``; harmless to repeat


def __getattr__(name: str) -> Any:
    # The default desk's ids and text environment (the gate's: the first desk's names at this
    # level), read when asked for, so that importing the package loads no desk's environment.
    if name in ("ENV_ID", "MACRO_ENV_ID"):
        return getattr(registration, name)
    if name == "BatchGateEnv":
        return importlib.import_module(f"{__name__}.gate.text").BatchGateEnv
    raise AttributeError(name)


__all__ = ["DeskAdapter", "TextDeskEnv"]
