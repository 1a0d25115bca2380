"""Train PPO on BadBatchGate's macro-action interface and compare it with the baselines.

Shows that the environment can be learned from its reward alone: MaskablePPO
(sb3-contrib; plain PPO with ``--algo ppo``) trains from scratch on CPU on
procedural cases (a fresh generated case per reset) or the fixed train split,
through ``BadBatchGateMacro-v0``. The trained network then plays the held-out
eval split as a text-level policy (``batchgate_gym.policies.gate.learned``) through
``evaluate``, beside naive, careful, refuse-all, a random macro policy and the
same network untrained. A learning curve (eval mean reward and defective batches
loaded against environment steps, plus the training episodes' mean reward) is
written as a PNG.

    python benchmarks/gate_train_ppo.py --subproc --out out/ppo      # 800k steps, ~15 min on 2 cores

``benchmarks/results/ppo_macro/`` holds the curve and summary of that run.

Needs the ``train`` extra (torch CPU build, stable-baselines3, sb3-contrib, each pinned
to the version the recorded run used: a network trained from the same seed differs
across their versions) and ``plot`` for the PNG. ``summary.json`` records the versions.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from batchgate_gym.app.report import baseline_table, family_table
from batchgate_gym.bench.harness import library_versions
from batchgate_gym.envs.gate.macro import GateMacroEnv
from batchgate_gym.evaluation import EvaluationResult, evaluate
from batchgate_gym.policies.gate.learned import learned_policy, random_macro_policy
from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES

# What a trained network depends on besides this code and the seed (recorded in summary.json).
TRAINING_LIBRARIES = ("torch", "stable-baselines3", "sb3-contrib", "gymnasium", "numpy")


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 800_000
    seed: int = 0
    cases: str = "procedural"  # "procedural", "train" or a JSONL path
    algo: str = "maskable"  # "maskable" (sb3-contrib MaskablePPO) or "ppo"
    slots: int = 4
    n_envs: int = 8
    subproc: bool = False  # step the envs in worker processes (SubprocVecEnv): uses every core
    n_steps: int = 256  # per env per rollout
    batch_size: int = 256
    epochs: int = 10
    learning_rate: float = 3e-4
    gamma: float = 0.999  # checking costs turns, not reward: barely discount a longer look
    ent_coef: float = 0.01
    net: tuple[int, ...] = (128, 128)
    curve_every: int = 50_000  # env steps between learning-curve points (0: none)
    eval_split: str = "eval"
    threads: int = 1
    verbose: bool = False  # print each learning-curve point as it is measured
    via_text: bool = False  # moves sent as text actions: the same training, slower (an A/B of the two ways)


@dataclass(frozen=True)
class CurvePoint:
    steps: int
    eval_mean_reward: float
    eval_bad_batches_loaded: int
    train_mean_reward: float | None  # mean over the last finished training episodes (stochastic policy)


@dataclass
class TrainRun:
    config: TrainConfig
    model: Any
    untrained: Any
    curve: list[CurvePoint] = field(default_factory=list)
    train_seconds: float = 0.0  # wall time spent in training, learning-curve evaluations excluded
    curve_seconds: float = 0.0


def make_model(config: Any, env_class: type = GateMacroEnv, size: dict[str, int] | None = None) -> Any:
    """A fresh, seeded model on a vectorised macro env: the gate's by default, sized by
    ``config.slots``; another desk's wrapper takes its own ``size`` keywords. ``config``
    is this script's :class:`TrainConfig` or any config with the same training fields."""
    import torch
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    torch.set_num_threads(config.threads)
    cases = None if config.cases == "procedural" else config.cases
    env = make_vec_env(
        env_class,
        n_envs=config.n_envs,
        seed=config.seed,
        env_kwargs={
            "cases": cases,
            **(size if size is not None else {"slots": config.slots}),
            **({"via_text": True} if getattr(config, "via_text", False) else {}),
        },
        vec_env_cls=SubprocVecEnv if config.subproc else DummyVecEnv,
    )
    algorithm = _algorithm(config.algo)
    return algorithm(
        "MlpPolicy",
        env,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.epochs,
        learning_rate=config.learning_rate,
        gamma=config.gamma,
        ent_coef=config.ent_coef,
        policy_kwargs={"net_arch": list(config.net)},
        seed=config.seed,
        device="cpu",
        verbose=0,
    )


def _algorithm(name: str) -> Any:
    if name == "maskable":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    if name == "ppo":
        from stable_baselines3 import PPO

        return PPO
    raise ValueError(f"unknown algo {name!r}: maskable or ppo")


def play(model: Any, config: TrainConfig, name: str, n_jobs: int = 1) -> EvaluationResult:
    """The model as a text-level policy on the held-out split."""
    policy = learned_policy(model, slots=config.slots, name=name)
    return evaluate(policy, split=config.eval_split, n_jobs=n_jobs, progress=False)


def train(
    config: Any,
    make: Callable[[Any], Any] | None = None,
    measure: Callable[[Any, Any, int], Any] | None = None,
) -> TrainRun:
    """Train from scratch; record a learning-curve point every ``curve_every`` steps.

    ``make(config)`` builds a model (:func:`make_model` by default) and ``measure(model,
    config, steps)`` takes a curve point (this script's held-out measure by default):
    another desk's script passes its own."""
    from stable_baselines3.common.callbacks import BaseCallback

    make, measure = make or make_model, measure or _curve_point
    model = make(config)
    untrained = make(config)  # same seed, same initial weights, never trained
    run = TrainRun(config, model, untrained)

    class Curve(BaseCallback):
        def _on_step(self) -> bool:
            due = config.curve_every and self.num_timesteps // config.curve_every > len(run.curve) - 1
            if due:
                started = time.perf_counter()
                run.curve.append(measure(model, config, self.num_timesteps))
                run.curve_seconds += time.perf_counter() - started
            return True

    started = time.perf_counter()
    if config.curve_every:
        run.curve.append(measure(model, config, 0))
    model.learn(total_timesteps=config.steps, callback=Curve())
    if config.curve_every and run.curve[-1].steps != model.num_timesteps:
        run.curve.append(measure(model, config, model.num_timesteps))
    run.train_seconds = time.perf_counter() - started - run.curve_seconds
    return run


def train_mean_reward(model: Any) -> float | None:
    """The mean reward of the model's last finished training episodes, if any."""
    episodes = [info["r"] for info in model.ep_info_buffer] if model.ep_info_buffer else []
    return round(float(np.mean(episodes)), 4) if episodes else None


def _curve_point(model: Any, config: TrainConfig, steps: int) -> CurvePoint:
    held_out = play(model, config, "ppo")
    point = CurvePoint(
        steps=steps,
        eval_mean_reward=held_out.overall.mean("reward"),
        eval_bad_batches_loaded=held_out.overall.bad_batches_loaded,
        train_mean_reward=train_mean_reward(model),
    )
    if config.verbose:
        print(
            f"{steps:>9} steps: held-out mean reward {point.eval_mean_reward:.4f},"
            f" defective batches loaded {point.eval_bad_batches_loaded}",
            flush=True,
        )
    return point


def compare(run: TrainRun, n_jobs: int = 1) -> dict[str, EvaluationResult]:
    """Every policy of the comparison on the held-out split, the trained one first."""
    config = run.config
    results = {
        "ppo": play(run.model, config, "ppo", n_jobs),
        "untrained": play(run.untrained, config, "untrained", n_jobs),
        "random": evaluate(
            random_macro_policy(config.seed, slots=config.slots), split=config.eval_split, progress=False
        ),
    }
    for name, policy in REFERENCE_POLICIES.items():
        results[name] = evaluate(policy, split=config.eval_split, n_jobs=n_jobs, progress=False)
    return results


def plot_curve(
    curve: list[Any],
    path: Path,
    n_defective: int | None,
    title: str = "MaskablePPO on BadBatchGateMacro-v0",
    *,
    lower_series: tuple[tuple[str, str], ...] = (),
    lower_label: str = "",
) -> None:
    """Held-out and training mean reward on top; below, defective batches loaded of
    ``n_defective``, or another desk's ``lower_series`` (curve field, legend) under
    the axis label ``lower_label``."""
    series = lower_series or (("eval_bad_batches_loaded", ""),)
    label = lower_label or f"defective batches loaded (of {n_defective})"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [p.steps for p in curve]
    figure, (top, lower) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    top.plot(steps, [p.eval_mean_reward for p in curve], marker="o", label="held-out eval (greedy)")
    trained = [(p.steps, p.train_mean_reward) for p in curve if p.train_mean_reward is not None]
    if trained:
        top.plot(*zip(*trained, strict=True), linestyle="--", label="training episodes (sampled)")
    top.set_ylabel("mean reward")
    top.set_ylim(0, 1.02)
    top.legend(loc="lower right")
    top.grid(alpha=0.3)
    for (name, legend), color in zip(series, ("tab:red", "tab:purple", "tab:green"), strict=False):
        lower.plot(steps, [getattr(p, name) for p in curve], marker="o", color=color, label=legend or None)
    if len(series) > 1:
        lower.legend(loc="upper right")
    lower.set_ylabel(label)
    lower.set_xlabel("environment steps")
    lower.set_ylim(bottom=0)
    lower.grid(alpha=0.3)
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def add_training_arguments(parser: argparse.ArgumentParser, defaults: Any) -> None:
    """The options every PPO script takes, with the defaults of its config."""
    parser.add_argument("--steps", type=int, default=defaults.steps)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--cases", default=defaults.cases, help="procedural, train, or a JSONL path")
    parser.add_argument("--algo", choices=("maskable", "ppo"), default=defaults.algo)
    parser.add_argument("--n-envs", type=int, default=defaults.n_envs)
    parser.add_argument("--subproc", action="store_true", help="step envs in worker processes")
    parser.add_argument("--gamma", type=float, default=defaults.gamma)
    parser.add_argument("--ent-coef", type=float, default=defaults.ent_coef)
    parser.add_argument("--lr", dest="learning_rate", type=float, default=defaults.learning_rate)
    parser.add_argument("--n-steps", type=int, default=defaults.n_steps, help="steps per env per rollout")
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size)
    parser.add_argument("--epochs", type=int, default=defaults.epochs)
    parser.add_argument("--curve-every", type=int, default=defaults.curve_every)
    parser.add_argument("--threads", type=int, default=defaults.threads, help="torch threads")


def config_from(args: argparse.Namespace, config_class: Any) -> Any:
    """A verbose config of ``config_class`` (a dataclass) from the parsed options it has fields for."""
    given = {f.name: getattr(args, f.name) for f in fields(config_class) if hasattr(args, f.name)}
    return config_class(**given, verbose=True)


def _arguments(argv: list[str] | None) -> tuple[TrainConfig, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_training_arguments(parser, TrainConfig())
    parser.add_argument("--jobs", type=int, default=1, help="worker processes for the final evaluation")
    parser.add_argument("--out", type=Path, default=Path("out/ppo"), help="directory for curve, model, JSON")
    parser.add_argument(
        "--via-text",
        action="store_true",
        help="send each move as its text action (the same training, slower)",
    )
    args = parser.parse_args(argv)
    return config_from(args, TrainConfig), args


def main(argv: list[str] | None = None) -> int:
    config, args = _arguments(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    run = train(config)
    results = compare(run, args.jobs)
    ppo = results["ppo"].overall
    print(
        f"trained {run.model.num_timesteps} env steps in {run.train_seconds:.1f} s (curve evaluations: {run.curve_seconds:.1f} s)"
    )
    print(f"\n### Held-out {config.eval_split} split\n\n{baseline_table(results)}")
    print(f"\n### Mean reward per family\n\n{family_table(results)}")
    run.model.save(args.out / "model.zip")
    summary = {
        "config": asdict(config),
        "env_steps": int(run.model.num_timesteps),
        "train_seconds": round(run.train_seconds, 1),
        "libraries": library_versions(TRAINING_LIBRARIES),
        "curve": [asdict(point) for point in run.curve],
        "results": {name: result.to_json() for name, result in results.items()},
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True))
    if run.curve:
        title = f"{'MaskablePPO' if config.algo == 'maskable' else 'PPO'} on BadBatchGateMacro-v0"
        plot_curve(run.curve, args.out / "learning_curve.png", ppo.defective_batches, title)
        print(f"\nlearning curve: {args.out / 'learning_curve.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
