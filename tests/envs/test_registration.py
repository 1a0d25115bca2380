"""``import batchgate_gym`` registers the Gymnasium ids, without loading any environment code."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import gymnasium
import pytest

import batchgate_gym
from batchgate_gym.registration import ENTRY_POINTS, ENV_ID, MACRO_ENV_ID, register_envs

_MAKE_BOTH = """
import json, sys
import batchgate_gym, gymnasium
before = sorted(name for name in sys.modules if name.startswith("batchgate_gym.envs"))
env = gymnasium.make("batchgate_gym/BadBatchGate-v0", split="eval")
observation, info = env.reset(seed=0)
observation, reward, terminated, truncated, info = env.step("list_batches()")
macro = gymnasium.make("batchgate_gym/BadBatchGateMacro-v0")
vector, macro_info = macro.reset(seed=0)
print(json.dumps({
    "envs_before_make": before,
    "text_ok": env.observation_space.contains(observation) and '"batch_id"' in observation,
    "macro_ok": macro.observation_space.contains(vector),
    "spec": env.spec.entry_point,
}))
"""


def test_importing_the_package_alone_lets_gymnasium_make_both_ids() -> None:
    out = subprocess.run([sys.executable, "-c", _MAKE_BOTH], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    assert result["envs_before_make"] == [], "registration must not import the environments"
    assert result["text_ok"] and result["macro_ok"]
    assert result["spec"] == "batchgate_gym.envs.gate.text:BatchGateEnv"


def test_registration_is_idempotent_and_shared_with_the_envs_package() -> None:
    import batchgate_gym.envs as envs

    assert (envs.ENV_ID, envs.MACRO_ENV_ID) == (ENV_ID, MACRO_ENV_ID)
    specs = {env_id: gymnasium.registry[env_id] for env_id in ENTRY_POINTS}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # re-registering an id would warn
        first = register_envs()
        assert register_envs() == first
    # Every desk's ids, the gate's first; each desk names its own in its package.
    assert first[:2] == (ENV_ID, MACRO_ENV_ID) and "batchgate_gym/RefundDesk-v0" in first
    for env_id, entry_point in ENTRY_POINTS.items():
        assert gymnasium.registry[env_id] is specs[env_id]
        assert gymnasium.registry[env_id].entry_point == entry_point
    assert batchgate_gym.registration.ENV_ID == ENV_ID


DEFAULT_STEPS = {
    "batchgate_gym/BadBatchGate-v0": 30,
    "batchgate_gym/BadBatchGateMacro-v0": 29,  # the opening calls take the first turn
    "batchgate_gym/RefundDesk-v0": 12,
    "batchgate_gym/RefundDeskMacro-v0": 11,
    "batchgate_gym/AnalystDesk-v0": 16,
}


def test_every_id_names_its_step_budget_and_time_limit_ends_where_the_env_does() -> None:
    assert {env_id: gymnasium.spec(env_id).max_episode_steps for env_id in ENTRY_POINTS} == DEFAULT_STEPS
    env = gymnasium.make("batchgate_gym/RefundDesk-v0")
    try:
        assert env.spec.max_episode_steps == env.unwrapped.limits.max_turns == 12
        env.reset(seed=0)
        for _ in range(12):
            _, _, terminated, truncated, info = env.step("nonsense(")
        # The env's own truncation and TimeLimit's fall on the same step: the score is there.
        assert truncated and not terminated and "score" in info
    finally:
        env.close()


def test_a_longer_budget_than_the_ids_says_that_time_limit_would_cut_it() -> None:
    with pytest.warns(
        UserWarning, match=r"may take 36 steps, more than max_episode_steps=12; TimeLimit ends"
    ):
        queue = gymnasium.make("batchgate_gym/RefundDesk-v0", tickets=3)
    queue.close()
    with pytest.warns(UserWarning, match=r"may take 39 steps, more than max_episode_steps=20"):
        gymnasium.make("batchgate_gym/BadBatchGateMacro-v0", max_turns=40, max_episode_steps=20).close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the default budget, or one given to make: nothing to say
        gymnasium.make("batchgate_gym/RefundDeskMacro-v0").close()
        gymnasium.make("batchgate_gym/RefundDesk-v0", tickets=3, max_episode_steps=-1).close()
        given = gymnasium.make("batchgate_gym/BadBatchGate-v0", max_turns=40, max_episode_steps=40)
    try:
        assert given.spec.max_episode_steps == given.unwrapped.episode_steps == 40
    finally:
        given.close()
