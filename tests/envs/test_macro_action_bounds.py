"""A move outside a macro env's ``Discrete`` space is refused with the space named, as
Gymnasium's own environments refuse one; it is never rounded, parsed or played."""

from __future__ import annotations

import re
from typing import Any

import gymnasium
import numpy as np
import pytest

import batchgate_gym  # noqa: F401  (registers the ids)
from batchgate_gym.desks.gate import MACRO_ENV_ID as GATE_MACRO
from batchgate_gym.desks.refund import MACRO_ENV_ID as REFUND_MACRO

OUTSIDE = (1.7, 2.0, None, "x", "1", -1, True + 10**9, np.float32(1.0), np.array([1]), [1])


@pytest.mark.parametrize("env_id", [GATE_MACRO, REFUND_MACRO])
def test_a_move_outside_the_space_is_a_value_error_naming_it(env_id: str) -> None:
    env = gymnasium.make(env_id).unwrapped
    env.reset(seed=0)
    before = env.text_env.world.ledger.head
    space = str(env.action_space)
    for move in (*OUTSIDE, env.action_space.n):
        with pytest.raises(ValueError, match=re.escape(f"not in the action space {space}")):
            env.step(move)
    assert env.text_env.world.ledger.head == before  # nothing was played
    env.close()


@pytest.mark.parametrize("move", [1, np.int64(1), np.int32(1), np.array(1)])
def test_ints_and_numpy_integers_in_the_space_are_played(move: Any) -> None:
    env = gymnasium.make(REFUND_MACRO).unwrapped
    env.reset(seed=0)
    _, _, _, _, info = env.step(move)
    assert info["text_action"] == env.tracker.action_text(1)
    env.close()


@pytest.mark.parametrize("env_id", [GATE_MACRO, REFUND_MACRO])
def test_a_turn_limit_that_leaves_no_move_is_refused_alike(env_id: str) -> None:
    """The opening action takes the first turn: both macro envs refuse a limit of 1 with
    one message, and take 2."""
    with pytest.raises(ValueError, match=r"^max_turns must be at least 2 for macro moves .*, not 1$"):
        gymnasium.make(env_id, max_turns=1)
    env = gymnasium.make(env_id, max_turns=2).unwrapped
    _vector, info = env.reset(seed=0)
    assert info["turn"] == 1
    *_, terminated, truncated, _info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert truncated or terminated
    env.close()
