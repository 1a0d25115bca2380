"""Every observation lies in its space for any allowed ``max_observation_chars``.

The reset observation (the task, about 2,400 characters) is cut by the same rule as
step observations, and ``cut`` never returns more than its limit, with an exact
count of what it dropped.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.envs.gate.team import env as team_env
from batchgate_gym.envs.gate.team import parallel_env
from batchgate_gym.kernel.codec import cut
from batchgate_gym.kernel.episode import MAX_OBSERVATION_CHARS, MIN_OBSERVATION_CHARS

_MARKER = re.compile(r"\n\.\.\.\[observation cut: (\d+) more characters\]\Z")
LIMITS = st.integers(MIN_OBSERVATION_CHARS, 4_000) | st.sampled_from(
    (MIN_OBSERVATION_CHARS, MAX_OBSERVATION_CHARS)
)
ACTIONS = st.sampled_from(
    (
        "read_contract()",
        "list_batches()",
        "read_contract()\nlist_batches()\nread_contract()",
        'run_sql("SELECT 1")',
        "not a call",
        "x" * 70_000,
        "héllo ☃ \x00",
        "submit_report([], [])",
    )
)


def _assert_cut(text: str, limit: int, out: str) -> None:
    assert len(out) <= limit
    if len(text) <= limit:
        assert out == text
        return
    found = _MARKER.search(out)
    assert found, out[-80:]
    kept = found.start()
    assert out[:kept] == text[:kept]
    assert int(found.group(1)) == len(text) - kept  # exactly what was dropped


@given(
    text=st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=3_000),
    limit=st.integers(45, 3_000),
)
def test_cut_never_exceeds_the_limit_and_counts_what_it_drops(text: str, limit: int) -> None:
    _assert_cut(text, limit, cut(text, limit))


@pytest.mark.parametrize("limit", [256, 300, 1_000, 4_096, 65_536])
def test_cut_counts_exactly_when_the_count_gains_a_digit(limit: int) -> None:
    # Lengths around each power of ten of the dropped count, where the marker grows by one.
    for dropped in (9, 10, 11, 99, 100, 101, 999, 1_000, 1_001, 9_999, 10_000, 10_001):
        for extra in range(-50, 50):
            text = "y" * (limit + dropped + extra)
            _assert_cut(text, limit, cut(text, limit))


def test_cut_below_the_marker_still_keeps_to_the_limit() -> None:
    for limit in range(0, 60):
        assert len(cut("z" * 500, limit)) <= limit


@given(limit=LIMITS, actions=st.lists(ACTIONS, max_size=3), seed=st.integers(0, 1_000))
def test_every_single_agent_observation_lies_in_its_space(limit: int, actions: list[str], seed: int) -> None:
    env = BatchGateEnv(split="eval", max_observation_chars=limit)
    observation, _ = env.reset(seed=seed)
    assert env.observation_space.contains(observation)
    assert observation.startswith("You gate tonight's warehouse load.")
    for action in actions:
        observation, _, terminated, truncated, _ = env.step(action)
        assert env.observation_space.contains(observation)
        if terminated or truncated:
            break


def test_reset_observation_is_cut_like_a_step_observation() -> None:
    whole, _ = BatchGateEnv(split="eval").reset(seed=3)
    assert len(whole) > MIN_OBSERVATION_CHARS
    env = BatchGateEnv(split="eval", max_observation_chars=MIN_OBSERVATION_CHARS)
    observation, _ = env.reset(seed=3)
    _assert_cut(whole, MIN_OBSERVATION_CHARS, observation)
    assert env.observation_space.contains(observation)
    assert BatchGateEnv(split="eval", max_observation_chars=len(whole)).reset(seed=3)[0] == whole


@given(limit=LIMITS, actions=st.lists(ACTIONS, max_size=2))
def test_every_team_observation_lies_in_its_space(limit: int, actions: list[str]) -> None:
    team = parallel_env(n_agents=2, max_observation_chars=limit)
    observations, _ = team.reset(seed=0)
    for agent, observation in observations.items():
        assert team.observation_space(agent).contains(observation)
    for action in actions:
        if not team.agents:
            break
        observations, *_ = team.step(dict.fromkeys(team.agents, action))
        for agent, observation in observations.items():
            assert team.observation_space(agent).contains(observation)


def test_team_reset_observations_are_cut_in_the_aec_form_too() -> None:
    team = team_env(n_agents=3, max_observation_chars=MIN_OBSERVATION_CHARS)
    team.reset(seed=1)
    for agent in team.agents:
        observation = team.observe(agent)
        assert team.observation_space(agent).contains(observation)
        assert "observation cut" in observation["text"]
