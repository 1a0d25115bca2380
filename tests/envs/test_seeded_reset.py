"""A reset with a seed makes its generator only when something draws from it.

A reset whose options name a case draws nothing, so the environment keeps the seed and
makes Gymnasium's generator (``seeding.np_random(seed)``) on first use. Nothing may tell
the two apart: the same cases, nonces (so the same logs), draws, generator states and
``np_random_seed`` as an environment whose generator is made at every reset, through any
sequence of resets with and without seeds, named cases or drawn ones, and pickles.
"""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils import seeding

from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.kernel.ledger import EpisodeNonces

SEEDS = [0, 1, 7, 2**40, 2**70]
# (seed, options) of each reset in turn: named cases, drawn ones, new seeds and none.
RESETS: list[tuple[int | None, dict[str, Any]]] = [
    (5, {"case_index": 3}),
    (None, {"case_index": 1}),
    (None, {}),
    (2**70, {"case_id": "eval-clean-control-0"}),
    (None, {}),
    (9, {}),
    (None, {"case_index": 0}),
    (0, {"case_index": 2}),
]


def test_a_seeded_stream_of_nonces_is_the_generators():
    for seed in SEEDS:
        waiting, made = EpisodeNonces(), EpisodeNonces()
        waiting.seeded(seed)
        rng, _ = seeding.np_random(seed)
        assert [waiting.next(None) for _ in range(2)] == [made.next(rng) for _ in range(2)]
        waiting.adopt(rng)
        assert waiting.next(rng) == made.next(rng)


class EagerEnv(BatchGateEnv):
    """The environment with Gymnasium's own seeding at every seeded reset (the reference)."""

    def _seed_later(self, seed: int) -> None:
        gymnasium.Env.reset(self, seed=seed)
        self._seed_pending = None


def _played(env: BatchGateEnv) -> list[Any]:
    """What each reset of :data:`RESETS` gives, then the generator's state and draws."""
    seen = []
    for seed, options in RESETS:
        _observation, _info = env.reset(seed=seed, options=options)
        seen.append((env.case.case_id, env.world.ledger.nonce, env.np_random_seed))
    seen.append(env.np_random.bit_generator.state)
    seen.append(env.np_random.integers(1 << 62, size=4).tolist())
    env.close()
    return seen


def test_resets_give_what_a_generator_made_at_every_reset_gives():
    assert _played(BatchGateEnv(split="eval")) == _played(EagerEnv(split="eval"))


@pytest.mark.parametrize("seed", SEEDS)
def test_a_named_case_seeded_and_pickled_draws_what_the_original_draws(seed):
    env = BatchGateEnv(split="eval")
    env.reset(seed=seed, options={"case_index": 4})
    copy = pickle.loads(pickle.dumps(env))
    for one in (env, copy):
        one.reset()
    assert copy.case.case_id == env.case.case_id
    assert copy.world.ledger.nonce == env.world.ledger.nonce
    np.testing.assert_equal(copy.np_random.bit_generator.state, env.np_random.bit_generator.state)
    env.close(), copy.close()


def test_a_seed_gymnasium_refuses_is_still_refused():
    env = BatchGateEnv(split="eval")
    with pytest.raises(Exception, match="Seed must be"):
        env.reset(seed=-1, options={"case_index": 0})
    env.close()
