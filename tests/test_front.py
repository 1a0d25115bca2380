"""The package's front names every desk alike: evaluate, replay(desk=...), the desk list; the
gate's names that stood there alone still resolve, with a DeprecationWarning naming their home."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

import batchgate_gym
from batchgate_gym.desks import registry
from batchgate_gym.envs.text_env import player_info
from batchgate_gym.kernel.text_policy import as_policy

GATE_ALIASES = {
    "Case": "batchgate_gym.desks.gate.cases",
    "CaseFormatError": "batchgate_gym.desks.gate.cases",
    "load_cases": "batchgate_gym.desks.gate.cases",
    "contract": "batchgate_gym.desks.gate.contract",
    "tool_schemas": "batchgate_gym.desks.gate.tools",
    "replay_team": "batchgate_gym.desks.gate.team",
}


def played_by_careful(desk: str) -> tuple[Any, list[dict[str, Any]], dict[str, Any]]:
    """The first eval case of ``desk`` played by its careful policy: the case, the exported log
    and the final info."""
    spec = registry.get(desk)
    case = spec.fixed_cases(split="eval")[0]
    env = spec.make_env([case])
    policy = as_policy(spec.policies.reference_policies["careful"])
    observation, info = env.reset(seed=0, options={"case_index": 0})
    policy.reset(observation, player_info(info))
    done = False
    while not done:
        observation, _reward, terminated, truncated, info = env.step(policy.act(observation))
        done = terminated or truncated
    log = env.unwrapped.export_log()
    env.close()
    return case, log, info


def test_the_desk_list_and_evaluate_are_every_desks():
    assert batchgate_gym.desk_names() == registry.names()
    assert {"gate", "refund", "analyst"} <= set(batchgate_gym.desk_names())
    assert batchgate_gym.evaluate is importlib.import_module("batchgate_gym.evaluation").evaluate
    assert set(batchgate_gym.__all__) == {"LogIntegrityError", "desk_names", "evaluate", "replay"}


@pytest.mark.parametrize("desk", ["gate", "refund"])
def test_replay_recomputes_the_score_of_the_desk_named(desk):
    case, log, info = played_by_careful(desk)
    score = batchgate_gym.replay(case, log, desk=desk, head=info["log_head"])
    assert score.as_dict() == info["score"]
    if desk == "gate":  # the default desk, as before there were others
        assert batchgate_gym.replay(case, log, head=info["log_head"]).as_dict() == info["score"]


def test_replay_refuses_a_desk_there_is_not_and_a_tampered_log():
    case, log, info = played_by_careful("refund")
    with pytest.raises(ValueError, match="no desk 'nowhere'; desks: gate"):
        batchgate_gym.replay(case, log, desk="nowhere", head=info["log_head"])
    with pytest.raises(batchgate_gym.LogIntegrityError):
        batchgate_gym.replay(case, log[:-1], desk="refund", head=info["log_head"])


@pytest.mark.parametrize("name", sorted(GATE_ALIASES))
def test_the_gates_old_names_warn_and_are_the_gates(name):
    home = GATE_ALIASES[name]
    with pytest.warns(
        DeprecationWarning, match=f"batchgate_gym.{name} is the gate desk's: import it from {home}"
    ):
        found = getattr(batchgate_gym, name)
    assert found is getattr(importlib.import_module(home), name)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError):
        batchgate_gym.nothing_of_that_name  # noqa: B018
