"""Train RLlib's PPO on BadBatchGate's macro-action interface.

For users who outgrow one machine: the same ``GateMacroEnv`` the Stable-Baselines3
script trains on, registered with Ray's own ``register_env`` so RLlib's env
runners build it on any node. The configuration below is RLlib's new API stack
(EnvRunners, Learners, RLModule); scale it by raising ``--env-runners`` (and, on
a cluster, ``RAY_ADDRESS``). It trains without the action mask (RLlib's new
stack needs a custom RLModule for masks); masked moves are legal in the wrapper,
they only waste turns, so the policy learns to avoid them from the reward.

    pip install 'batchgate_gym[rllib]'   # ray[rllib] pins its own gymnasium
    python benchmarks/rllib_ppo.py --iterations 20 --env-runners 1

Prints, per training iteration, the env steps so far and the mean episode return,
then the trained policy's greedy mean reward on the held-out eval split through
the macro wrapper.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from batchgate_gym.envs.gate.macro import GateMacroEnv

ENV_NAME = "batchgate_gym/BadBatchGateMacro-rllib"


def make_env(env_config: dict[str, Any]) -> GateMacroEnv:
    """The env creator RLlib calls on each env runner (``env_config`` is a dict)."""
    return GateMacroEnv(env_config.get("cases"), slots=int(env_config.get("slots", 4)))


def register() -> None:
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_env)


def ppo_config(*, cases: str | None = None, slots: int = 4, env_runners: int = 1, seed: int = 0) -> Any:
    """The documented configuration: PPO, a 128x128 MLP, procedural training cases."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    return (
        PPOConfig()
        .environment(ENV_NAME, env_config={"cases": cases, "slots": slots})
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=4, rollout_fragment_length=256)
        .training(
            lr=3e-4,
            gamma=0.99,
            lambda_=0.95,
            entropy_coeff=0.01,
            train_batch_size_per_learner=2048,
            minibatch_size=256,
            num_epochs=10,
        )
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[128, 128], fcnet_activation="tanh"))
        .debugging(seed=seed)
    )


def greedy_eval(algorithm: Any, slots: int, split: str = "eval") -> float:
    """Mean reward of the trained module's greedy moves over every case of ``split``.

    The greedy pick is the best-scored move among those the action mask allows (an
    unmasked argmax can repeat an answered check until the turn limit)."""
    import torch
    from ray.rllib.core.columns import Columns

    module = algorithm.get_module()
    env = GateMacroEnv(split, slots=slots)
    rewards = []
    for index in range(len(env.text_env.source.cases)):
        vector, info = env.reset(seed=index, options={"case_index": index})
        while True:
            with torch.no_grad():
                out = module.forward_inference({Columns.OBS: torch.as_tensor(vector[None])})
            scores = out[Columns.ACTION_DIST_INPUTS][0].numpy()
            move = int(np.where(info["action_mask"], scores, -np.inf).argmax())
            vector, reward, terminated, truncated, info = env.step(move)
            if terminated or truncated:
                rewards.append(reward)
                break
    env.close()
    return float(np.mean(rewards))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--env-runners", type=int, default=1)
    parser.add_argument("--cases", default=None, help="procedural (default), train, or a JSONL path")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import ray

    ray.init(include_dashboard=False, log_to_driver=False)
    register()
    algorithm = ppo_config(cases=args.cases, env_runners=args.env_runners, seed=args.seed).build_algo()
    for iteration in range(args.iterations):
        result = algorithm.train()
        runners = result.get("env_runners", {})
        print(
            f"iteration {iteration + 1}: {runners.get('num_env_steps_sampled_lifetime', 0)} env steps,"
            f" mean episode return {runners.get('episode_return_mean', float('nan')):.4f}"
        )
    print(f"held-out eval split, greedy mean reward: {greedy_eval(algorithm, 4):.4f}")
    algorithm.stop()
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
