"""Train RLlib's PPO on a desk's macro-action interface (the gate's, or ``--desk refund``'s).

For users who outgrow one machine: the same ``GateMacroEnv`` (or ``RefundMacroEnv``)
the Stable-Baselines3 scripts train on, registered with Ray's own ``register_env`` so
RLlib's env runners build it on any node; ``--ray-address HOST:PORT`` trains on a
cluster (the env runners spread over its nodes). The configuration below is RLlib's new API stack
(EnvRunners, Learners, RLModule); scale it by raising ``--env-runners`` (and, on
a cluster, ``RAY_ADDRESS``). It trains without the action mask (RLlib's new
stack needs a custom RLModule for masks); masked moves are legal in the wrapper,
they only waste turns, so the policy learns to avoid them from the reward.

    pip install 'batchgate_gym[rllib]'   # ray[rllib] 2.60 pins gymnasium 1.2.2
    python benchmarks/rllib_ppo.py --iterations 20 --env-runners 1
    python benchmarks/rllib_ppo.py --desk refund --iterations 5 --env-runners 2 --ray-address 127.0.0.2:6379

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
ENV_NAMES = {"gate": ENV_NAME, "refund": "batchgate_gym/RefundDeskMacro-rllib"}


def make_env(env_config: dict[str, Any]) -> Any:
    """The env creator RLlib calls on each env runner (``env_config`` is a dict)."""
    if env_config.get("desk", "gate") == "refund":
        from batchgate_gym.envs.refund.macro import RefundMacroEnv

        return RefundMacroEnv(env_config.get("cases"), lines=int(env_config.get("slots", 4)))
    return GateMacroEnv(env_config.get("cases"), slots=int(env_config.get("slots", 4)))


def register() -> None:
    from ray.tune.registry import register_env

    for name in ENV_NAMES.values():
        register_env(name, make_env)


def ppo_config(
    *, cases: str | None = None, slots: int = 4, env_runners: int = 1, seed: int = 0, desk: str = "gate"
) -> Any:
    """The documented configuration: PPO, a 128x128 MLP, procedural training cases."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    env_config: dict[str, Any] = {"cases": cases, "slots": slots}
    if desk != "gate":
        env_config["desk"] = desk
    return (
        PPOConfig()
        .environment(ENV_NAMES[desk], env_config=env_config)
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


def greedy_eval(algorithm: Any, slots: int, split: str = "eval", desk: str = "gate") -> float:
    """Mean reward of the trained module's greedy moves over every case of ``split``.

    The greedy pick is the best-scored move among those the action mask allows (an
    unmasked argmax can repeat an answered check until the turn limit)."""
    import torch
    from ray.rllib.core.columns import Columns

    module = algorithm.get_module()
    env = make_env({"cases": split, "slots": slots, "desk": desk})
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
    parser.add_argument("--desk", choices=sorted(ENV_NAMES), default="gate")
    parser.add_argument(
        "--ray-address", default=None, help="a cluster's head, HOST:PORT (default: a local Ray)"
    )
    parser.add_argument("--out", default=None, help="also write the run as a Markdown table to this file")
    args = parser.parse_args(argv)
    import ray

    ray.init(
        address=args.ray_address, include_dashboard=None if args.ray_address else False, log_to_driver=False
    )
    nodes = [node for node in ray.nodes() if node["Alive"]]
    where = f"ray {ray.__version__}, {len(nodes)} node(s), {int(ray.cluster_resources().get('CPU', 0))} CPUs"
    print(where)
    register()
    config = ppo_config(cases=args.cases, env_runners=args.env_runners, seed=args.seed, desk=args.desk)
    algorithm = config.build_algo()
    spread = f"env runners on {len(_runner_nodes(algorithm))} node(s)"
    print(spread)
    rows = []
    for iteration in range(args.iterations):
        result = algorithm.train()
        runners = result.get("env_runners", {})
        steps = int(runners.get("num_env_steps_sampled_lifetime", 0))
        mean = float(runners.get("episode_return_mean", float("nan")))
        rows.append((iteration + 1, steps, mean))
        print(f"iteration {iteration + 1}: {steps} env steps, mean episode return {mean:.4f}")
    held_out = greedy_eval(algorithm, 4, desk=args.desk)
    print(f"held-out eval split, greedy mean reward: {held_out:.4f}")
    algorithm.stop()
    ray.shutdown()
    if args.out:
        _write_markdown(args, f"{where}; {spread}", rows, held_out, argv)
    return 0


def _write_markdown(
    args: argparse.Namespace, where: str, rows: list[tuple[int, int, float]], held_out: float, argv: Any
) -> None:
    from pathlib import Path

    command = "python benchmarks/rllib_ppo.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        f"<!-- made by: {command.strip()} -->",
        "",
        f"The {args.desk} desk's macro env, seed {args.seed}: {where}.",
        "",
        "| iteration | env steps | mean episode return |",
        "|---:|---:|---:|",
        *(f"| {i} | {steps:,} | {mean:.4f} |" for i, steps, mean in rows),
        "",
        f"Held-out eval split, greedy mean reward: {held_out:.4f}.",
    ]
    Path(args.out).write_text("\n".join(lines) + "\n")


def _runner_nodes(algorithm: Any) -> set[str]:
    """The Ray nodes the algorithm's remote env runners live on."""
    import ray

    group = algorithm.env_runner_group
    found = group.foreach_env_runner(
        lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False
    )
    return set(found)


if __name__ == "__main__":
    sys.exit(main())
