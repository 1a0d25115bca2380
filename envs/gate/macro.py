"""BadBatchGate for standard RL libraries: discrete macro actions, numeric observations.

Text actions and text observations suit language agents; PPO, DQN and friends want
a ``Discrete`` action and a ``Box`` observation. This wrapper gives them both
without changing the game: every macro action is the tool call a text agent would
send, played by the real :class:`BatchGateEnv` (its episode, world, log and grader),
and the reward is that environment's (the grader's terminal score). The call goes
to the world's tool directly, and its result comes back as the tool returned it;
``via_text=True`` sends it as the JSON text action and reads the text observation
instead, the same episode (a test plays both). The wrapper adds no reward and
never sees the truth labels; it knows only what the tools answered.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from batchgate_gym.kernel.plain import check_bool, check_int

from ..macro_env import TextMacroEnv, check_whole_observations
from .macro_codec import SLOT_FEATURES, SLOT_MOVES, GateMacroLayout, GateMacroTracker
from .text import BatchGateEnv

MAX_SLOTS = 64


class GateMacroEnv(TextMacroEnv):
    """BadBatchGate with ``Discrete`` macro actions over ``slots`` batch slots.

    **Slots** the batches in the order ``list_batches`` gives them; a case with more
    batches than ``slots`` is an error, unused slots read as zeros. ``slots`` is an
    int from 1 to 64 (default 4).

    **Action space** ``Discrete(slots * 30 + 1)``. Per slot, in this order:
    ``profile``; ``check:<rule>`` for each of the 14 contract rules of both tables
    (one ``run_sql`` counting the rows of that batch breaking that rule); ``load``;
    ``quarantine:<rule>`` citing that rule's (column, defect type). The last action
    submits a report listing the batches whose load or quarantine succeeded.
    :class:`~batchgate_gym.envs.gate.macro_codec.GateMacroLayout` decodes an index.

    **Observation space** ``Box(0, 1, (slots * SLOT_FEATURES + 1,), float32)``. Per
    slot: present, table kind (orders, customers), rows / 50, loaded, quarantined,
    profiled; per rule: checked since the warehouse last changed, checked at all,
    failing rows found; flags read off the profile (any blank, any repeated value per
    column; amounts above the cap or not positive; values outside the allowed
    currency, status and country lists; dates outside the window). Last: turns used
    / turn limit.

    **Reward, termination, truncation** exactly the text environment's: 0 until the
    report, then the weighted score; truncated at its turn limit with reward 0.
    ``reset`` sends the opening action (read the contract, list the batches), which
    takes the first of the text environment's turns.

    **Action mask** ``info["action_mask"]`` and :meth:`action_masks`, an ``np.int8``
    array with 1 for an allowed move (the dtype ``Discrete.sample(mask=...)``,
    PettingZoo and sb3-contrib's ``MaskablePPO`` take): moves on listed, undecided
    batches, rules of the batch's own table, a profile not yet taken, a check not
    answered since the last load; submit is always allowed. A masked move is still
    legal: it is sent as is (a check of a foreign rule gets an SQL error; a move on
    an empty slot sends an empty action, which the text environment refuses), and
    costs a turn.

    **Info** the text environment's info plus ``action_mask``, ``text_action`` (the text
    action the move stands for, sent as such with ``via_text``) and, on reset, ``turn``.

    **Arguments** ``cases``, ``slots``, ``via_text`` (``False``: calls go to the
    world's tools; ``True``: as text actions, parsed, their observations read back:
    the same episodes, slower), ``render_mode`` and every other keyword of
    :class:`~batchgate_gym.envs.gate.text.BatchGateEnv` (scale knobs, limits), with its
    bounds. The wrapper reads every text observation whole, so
    ``max_observation_chars`` may not go below the text environment's default of
    65,536 characters, and ``max_turns`` must be at least 2 (the opening takes one).
    """

    tracker: GateMacroTracker

    def __init__(
        self,
        cases: Any = None,
        *,
        slots: int = 4,
        via_text: bool = False,
        render_mode: str | None = None,
        **text_kwargs: Any,
    ):
        slots = check_int("slots", slots, 1, MAX_SLOTS)
        self.via_text = check_bool("via_text", via_text)
        check_whole_observations(text_kwargs)
        self.text_env = BatchGateEnv(cases, render_mode=render_mode, **text_kwargs)
        self.check_opening_turn()
        self.render_mode = render_mode
        self.layout = GateMacroLayout(slots)
        self.action_space = gym.spaces.Discrete(self.layout.n_actions)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (self.layout.n_features,), np.float32)
        self.tracker = GateMacroTracker(self.layout)

    def new_tracker(self, task: str) -> GateMacroTracker:
        return GateMacroTracker(self.layout, self.text_env.limits.max_turns)

    def describe(self, action: int) -> str:
        """A macro action in words, e.g. ``slot 1: check:amount__out_of_range``."""
        slot, move = self.layout.decode(int(action))
        return move if slot < 0 else f"slot {slot}: {move}"


__all__ = ["SLOT_FEATURES", "SLOT_MOVES", "GateMacroEnv", "GateMacroLayout", "GateMacroTracker"]
