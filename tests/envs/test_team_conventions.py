"""The team environment follows PettingZoo's conventions: a raw AEC class, an
order-enforced ``env()``, a parallel form and a versioned module, ``team_v0``."""

from __future__ import annotations

import importlib

import pytest
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from batchgate_gym.envs.gate import team, team_v0
from batchgate_gym.policies.gate.team import CarefulWithClaims


def test_team_v0_is_the_versioned_name_of_the_team_module():
    assert (team_v0.env, team_v0.raw_env, team_v0.parallel_env) == (team.env, team.raw_env, team.parallel_env)
    assert importlib.import_module("batchgate_gym.envs.gate.team_v0") is team_v0


def test_raw_env_is_the_unwrapped_aec_class():
    assert isinstance(team_v0.raw_env, type) and issubclass(team_v0.raw_env, AECEnv)
    raw = team_v0.raw_env(n_agents=2)
    assert not isinstance(raw, OrderEnforcingWrapper) and raw.unwrapped is raw
    assert isinstance(team_v0.parallel_env(n_agents=2), ParallelEnv)


def test_env_is_order_enforced_before_reset():
    wrapped = team_v0.env(n_agents=2)
    assert isinstance(wrapped, OrderEnforcingWrapper)
    assert isinstance(wrapped.unwrapped, team_v0.raw_env)
    with pytest.raises(AssertionError, match="reset"):
        wrapped.step("wait()")
    with pytest.raises(AttributeError, match="before reset"):
        _ = wrapped.agent_selection
    wrapped.reset(seed=7)
    wrapped.step("wait()")  # fine once reset
    assert wrapped.game.episodes["gate_0"].turn == 1  # public attributes pass through


def _play_readme_example(team) -> dict:
    """The team example of docs/gate.md, returning each agent's last info."""
    team.reset(seed=7)
    policies = {agent: CarefulWithClaims() for agent in team.agents}
    for agent, policy in policies.items():
        policy.reset(team.observe(agent)["text"], {})
    finals = {}
    for agent in team.agent_iter():
        observation, _reward, terminated, truncated, info = team.last()
        if terminated or truncated:
            finals[agent] = info
            team.step(None)
        else:
            team.step(policies[agent].act(observation["text"]))
    return finals


def test_the_readme_example_plays_the_same_wrapped_or_raw():
    wrapped = _play_readme_example(team_v0.env(n_agents=2))
    raw = _play_readme_example(team_v0.raw_env(n_agents=2))
    assert set(wrapped) == {"gate_0", "gate_1"} and wrapped == raw
    assert {info["score"]["reward"] for info in wrapped.values()} == {1.0}
