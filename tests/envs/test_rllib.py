"""The RLlib configuration: the wrapper registered with Ray's register_env builds
and plays, and the PPO configuration names it. (Training itself is a benchmark,
benchmarks/rllib_ppo.py, too slow for the suite.)"""

from __future__ import annotations

import numpy as np
import pytest
from benchmark_scripts import load_script

pytest.importorskip("ray.rllib", reason="RLlib is not installed: pip install 'batchgate_gym[rllib]'")
pytest.importorskip("torch", reason="torch is not installed: pip install torch==2.13.0")


def test_registered_env_builds_the_macro_wrapper_and_the_config_names_it() -> None:
    from ray.tune.registry import ENV_CREATOR, _global_registry

    rllib_ppo = load_script("rllib_ppo")
    rllib_ppo.register()
    creator = _global_registry.get(ENV_CREATOR, rllib_ppo.ENV_NAME)
    env = creator({"cases": "eval", "slots": 4})
    vector, info = env.reset(seed=0, options={"case_index": 0})
    assert env.observation_space.contains(vector)
    _vector, reward, terminated, _truncated, _info = env.step(env.layout.submit)
    assert terminated and 0.0 <= reward <= 1.0
    assert np.array_equal(info["action_mask"], info["action_mask"].astype(bool))
    config = rllib_ppo.ppo_config(cases="train", env_runners=2)
    assert config.env == rllib_ppo.ENV_NAME
    assert config.env_config == {"cases": "train", "slots": 4}
    assert config.num_env_runners == 2
