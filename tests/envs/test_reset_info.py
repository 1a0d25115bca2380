"""What a reset's info says on every desk: the case's id and family, and its split (or
case file), or the case seed of a procedural case; what a policy under evaluation is
handed of it; and reset options a fixed case source cannot use are refused."""

from __future__ import annotations

import gymnasium
import pytest

import batchgate_gym  # noqa: F401  (registers the ids)
from batchgate_gym.desks import registry
from batchgate_gym.evaluation import run_episode

DESKS = ["gate", "refund", "analyst"]


def _make(desk: str, **kwargs):
    if desk == "analyst":
        pytest.importorskip("duckdb", reason="the analyst desk needs its extra")
    return registry.get(desk).make_env(**kwargs)


@pytest.mark.parametrize("desk", DESKS)
def test_a_procedural_reset_names_the_case_its_family_and_seed_and_seeds_differ(desk):
    env = _make(desk)
    try:
        infos = [env.reset(seed=seed)[1] for seed in range(4)]
    finally:
        env.close()
    for info in infos:
        assert set(info) == {"turn", "calls", "case_id", "family", "seed"}
        assert info["turn"] == info["calls"] == 0 and isinstance(info["seed"], int)
    assert len({info["case_id"] for info in infos}) == 4
    assert len({info["seed"] for info in infos}) == 4


@pytest.mark.parametrize("desk", DESKS)
def test_a_split_reset_names_the_split(desk):
    env = _make(desk, cases="eval")
    try:
        _, info = env.reset(seed=0, options={"case_index": 1})
        case = env.unwrapped.case
    finally:
        env.close()
    assert info == {"turn": 0, "calls": 0, "case_id": case.case_id, "family": case.family, "split": "eval"}


@pytest.mark.parametrize("options", [{"foo": 1}, {"case_index": 0, "case_id": "eval-clean-control-0"}])
def test_fixed_cases_refuse_reset_options_they_cannot_use(options):
    env = gymnasium.make("batchgate_gym/BadBatchGate-v0", split="eval")
    try:
        with pytest.raises(ValueError, match=r"unknown reset options for fixed cases: 'foo'|not both"):
            env.reset(seed=0, options=options)
    finally:
        env.close()


class _Recorder:
    def __init__(self):
        self.infos = []

    def reset(self, observation, info):
        self.infos.append(info)

    def act(self, observation):
        return "submit_report([], [])"


def test_evaluate_hands_a_policy_only_the_turn_and_calls_of_the_reset_info():
    """The family names the trap a case sets; a policy under evaluation does not get it."""
    desk = registry.get("gate")
    env = desk.make_env(cases="eval")
    policy = _Recorder()
    try:
        result = run_episode(env, policy, 0, {"seed": 0, "options": {"case_index": 3}}, desk)
    finally:
        env.close()
    assert policy.infos == [{"turn": 0, "calls": 0}] and result.case_id == "eval-clean-control-3"
