"""Each env's text spaces share their read-only character tables but sample on their own."""

from __future__ import annotations

from batchgate_gym.envs import BatchGateEnv


def test_spaces_share_tables_but_not_their_generators() -> None:
    first, second = BatchGateEnv(split="eval"), BatchGateEnv(split="eval")
    assert first.action_space == second.action_space
    assert first.action_space is not second.action_space
    assert first.observation_space.character_set is second.observation_space.character_set
    first.action_space.seed(3)
    drawn = first.action_space.sample()
    second.action_space.seed(3)
    assert second.action_space.sample() == drawn  # the same seed, the same sample
    first.action_space.seed(3)
    second.action_space.seed(4)
    assert first.action_space.sample() == drawn  # another space's seed changes nothing here
    third = BatchGateEnv(split="eval")
    third.action_space.seed(3)
    assert third.action_space.sample() == drawn
    assert all(first.action_space.contains(first.action_space.sample()) for _ in range(5))
