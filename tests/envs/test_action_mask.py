"""The macro env's action mask is ``np.int8``, the dtype Gymnasium's and PettingZoo's
masked sampling takes, and it still selects exactly the allowed moves."""

from __future__ import annotations

import numpy as np

from batchgate_gym.envs.gate.macro import GateMacroEnv
from batchgate_gym.policies.gate.learned import RandomChooser


def test_discrete_sample_takes_the_mask_from_info() -> None:
    env = GateMacroEnv(split="eval")
    _, info = env.reset(seed=0)
    env.action_space.seed(0)
    steps = 0
    while True:
        action = env.action_space.sample(mask=info["action_mask"])
        mask = info["action_mask"]
        assert mask[action] == 1
        assert mask.dtype == np.int8 and mask.shape == (env.action_space.n,)
        assert set(np.unique(mask)) <= {0, 1} and mask[env.layout.submit] == 1
        assert np.array_equal(mask, env.action_masks()) and env.action_masks().dtype == np.int8
        steps += 1
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert steps >= 2


def test_the_mask_still_indexes_as_booleans() -> None:
    env = GateMacroEnv(split="eval")
    _, info = env.reset(seed=1)
    mask = info["action_mask"]
    allowed = np.flatnonzero(mask)
    moves = np.arange(env.action_space.n)
    assert np.array_equal(moves[mask.astype(bool)], allowed)
    chooser = RandomChooser(0)
    for _ in range(20):
        assert mask[chooser(np.zeros(1, np.float32), mask)] == 1
