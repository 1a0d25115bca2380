"""Each env's text spaces share their read-only character tables but sample on their own,
and judge membership as Gymnasium's Text does."""

from __future__ import annotations

import numpy as np
from gymnasium.spaces import Text
from hypothesis import given
from hypothesis import strategies as st

from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.envs.spaces import AsciiText
from batchgate_gym.kernel.codec import OBSERVATION_CHARSET


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


@given(st.one_of(st.text(max_size=40), st.text(st.characters(codec="ascii"), max_size=40), st.binary()))
def test_membership_is_gymnasiums_own_judgement(value) -> None:
    """``AsciiText.contains`` checks bytes instead of each character; it must say what
    ``gymnasium.spaces.Text.contains`` says, for any string and for non-strings."""
    for space in (AsciiText(20, min_length=2, charset=OBSERVATION_CHARSET), AsciiText(40, charset="ab\n")):
        assert space.contains(value) is Text.contains(space, value)
    assert BatchGateEnv(split="eval").observation_space.contains("turn 1 of 30\n\tok")


def test_a_sample_is_the_string_gymnasium_draws_for_the_same_seed() -> None:
    """``AsciiText.sample`` builds its string from byte codes; for any seed it must be the
    string ``gymnasium.spaces.Text.sample`` draws, and a mask still goes to Gymnasium."""
    for charset, lengths in ((OBSERVATION_CHARSET, (0, 3000)), ("ab\n", (2, 9))):
        ours, theirs = (
            AsciiText(lengths[1], min_length=lengths[0], charset=charset),
            Text(lengths[1], min_length=lengths[0], charset=charset),
        )
        for seed in range(20):
            ours.seed(seed)
            theirs.seed(seed)
            assert [ours.sample() for _ in range(3)] == [theirs.sample() for _ in range(3)]
    masked = AsciiText(5, charset="ab")
    masked.seed(0)
    assert masked.sample(mask=(4, np.array([0, 1], dtype=np.int8))) == "bbbb"
