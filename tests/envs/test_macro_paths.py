"""Both ways a macro move can reach the world give the same episode.

A macro env sends a move's calls to the desk's tools directly; with ``via_text=True``
it writes them as the text action a language agent would send and reads the text
observation back. Seeded random move sequences (mostly allowed moves, some masked
ones, which send refused or empty actions) are played both ways, side by side, on
every desk with a macro env, over fixed and procedural cases: every step must give
the same vector, reward, termination, truncation and ``info`` (the mask, the text
action and, at the end, the score and the log's head), and every episode the same
exported log, entry for entry, and the same transcript.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from batchgate_gym.envs.gate.macro import GateMacroEnv
from batchgate_gym.envs.refund.macro import RefundMacroEnv

MASKED_SHARE = 0.15  # of moves drawn among all moves, allowed or not
CLOSING_SHARE = 0.1  # of moves that may be the closing one (submit, reply): longer episodes
EPISODES = 60

CONFIGS: dict[str, tuple[type[Any], dict[str, Any]]] = {
    "gate-eval": (GateMacroEnv, {"split": "eval"}),
    "gate-procedural": (GateMacroEnv, {"slots": 6}),
    "refund-eval": (RefundMacroEnv, {"split": "eval"}),
    "refund-procedural": (RefundMacroEnv, {}),
    "refund-recovery": (RefundMacroEnv, {"recovery": True, "hints": True}),
    "refund-original-rules": (RefundMacroEnv, {"split": "eval", "rules": "original"}),
}


def _same_info(world: dict[str, Any], text: dict[str, Any]) -> None:
    assert world.keys() == text.keys()
    for key, value in text.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(world[key], value) and world[key].dtype == value.dtype, key
        else:
            assert world[key] == value, key


def _closing_move(env: Any) -> int:
    """The move that ends an episode: the gate's report, the refund desk's reply."""
    if isinstance(env, GateMacroEnv):
        return int(env.layout.submit)
    return int(env.layout.index(-1, "reply"))


def _play_both(env_class: type[Any], kwargs: dict[str, Any], seed: int, render: bool = False) -> int:
    """One seeded episode both ways, compared step by step; the number of steps played."""
    mode = {"render_mode": "ansi"} if render else {}
    world, text = env_class(**kwargs, **mode), env_class(**kwargs, via_text=True, **mode)
    try:
        rng = np.random.default_rng(seed)
        vector, info = world.reset(seed=seed)
        text_vector, text_info = text.reset(seed=seed)
        assert np.array_equal(vector, text_vector)
        _same_info(info, text_info)
        steps, done = 0, False
        while not done:
            mask = world.action_masks()
            pool = np.arange(len(mask)) if rng.random() < MASKED_SHARE else np.flatnonzero(mask)
            if rng.random() >= CLOSING_SHARE and len(pool) > 1:
                pool = pool[pool != _closing_move(world)]
            move = int(pool[rng.integers(len(pool))])
            out, text_out = world.step(move), text.step(move)
            assert np.array_equal(out[0], text_out[0]), f"vector differs at step {steps}"
            assert out[1:4] == text_out[1:4], f"reward or ending differs at step {steps}"
            _same_info(out[4], text_out[4])
            assert world.text_env.world.ledger.head == text.text_env.world.ledger.head
            steps, done = steps + 1, out[2] or out[3]
        assert world.text_env.export_log() == text.text_env.export_log()
        assert world.render() == text.render()
        return steps
    finally:
        world.close()
        text.close()


@pytest.mark.parametrize("config", list(CONFIGS))
def test_a_move_gives_the_same_episode_on_the_world_as_through_the_text(config: str) -> None:
    env_class, kwargs = CONFIGS[config]
    steps = [_play_both(env_class, kwargs, seed) for seed in range(EPISODES)]
    assert sum(steps) >= EPISODES * 5 and max(steps) >= 10  # long episodes among them


@pytest.mark.parametrize("env_class", [GateMacroEnv, RefundMacroEnv])
def test_the_transcript_is_the_same_on_the_world_as_through_the_text(env_class: type[Any]) -> None:
    kwargs = {"split": "eval"}
    for seed in range(3):
        _play_both(env_class, kwargs, seed, render=True)


@pytest.mark.parametrize("env_class", [GateMacroEnv, RefundMacroEnv])
def test_via_text_must_be_a_bool(env_class: type[Any]) -> None:
    with pytest.raises(ValueError, match="via_text must be True or False"):
        env_class(split="eval", via_text=1)
