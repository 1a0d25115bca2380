"""Train MaskablePPO on the refund desk's macro moves and compare it with the baselines.

Shows that RefundDesk can be learned from its reward alone: MaskablePPO
(sb3-contrib) trains from scratch on CPU on procedural cases (a fresh generated
ticket per reset) through ``batchgate_gym/RefundDeskMacro-v0``, where every move
is the real text tool call and the reward is the grader's terminal score. Half the
training tickets are drawn from legit-partial-refund (``--partial-share``), the one
family that owes a line other than the first: in the generator's own mix one
ticket in fourteen asks for such a payment, and the network stopped trying the
later lines' ``pay`` moves before it learned them. The
trained network then plays the held-out eval split through the same wrapper,
beside the same network untrained, a uniform random pick among the allowed moves,
and the three reference policies spelled in the same moves (``naive``: pay the
first line, pay it again under a new key after an error; ``careful``: read the
history, pay the first line it shows unpaid, escalate it when above the cap, else
hold; ``refuse-all``: escalate). The reference text policies are also played on
the text environment itself, as a check that the macro spelling scores alike.
A learning curve (held-out mean reward and duplicate payments against environment
steps, plus the training episodes' mean reward) is written as a PNG.

    python benchmarks/refund_train_ppo.py --subproc --out out/ppo_refund

``benchmarks/results/ppo_refund/`` holds the curve, summary and output of that run.

Needs the ``train`` extra (torch CPU build, stable-baselines3, sb3-contrib) and
``plot`` for the PNG.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from batchgate_gym.app.report import baseline_table, family_table
from batchgate_gym.bench.harness import library_versions, load_average
from batchgate_gym.desks import registry
from batchgate_gym.desks.refund.sources import ProceduralRefundCases
from batchgate_gym.envs.refund.macro import RefundMacroEnv
from batchgate_gym.envs.refund.macro_codec import RefundMacroTracker
from batchgate_gym.evaluation import EpisodeResult, EvaluationResult, evaluate
from batchgate_gym.policies.refund.reference import REFERENCE_POLICIES

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gate_train_ppo as shared  # the gate's script: model, training loop, curve plot, options

DESK = "refund"
CHECK_SEED_BASE = 1_000_000_000  # far from the training envs' seeds (config.seed + rank)


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 200_000
    seed: int = 0
    cases: str = "procedural"  # "procedural", "train" or a JSONL path
    algo: str = "maskable"  # "maskable" (sb3-contrib MaskablePPO) or "ppo" (moves unmasked)
    lines: int = 4
    n_envs: int = 8
    subproc: bool = False  # step the envs in worker processes (SubprocVecEnv)
    n_steps: int = 128  # per env per rollout
    batch_size: int = 256
    epochs: int = 10
    learning_rate: float = 3e-4
    gamma: float = 0.99
    ent_coef: float = 0.03  # with 0.01 the pay moves of later lines were dropped before they paid
    net: tuple[int, ...] = (64, 64)
    curve_every: int = 10_000  # env steps between learning-curve points (0: none)
    eval_split: str = "eval"
    check_seeds: int = 1000  # fresh procedural tickets the final policies also play (0: none)
    partial_share: float = 0.5  # share of procedural training tickets drawn from PARTIAL_FAMILY (0: none)
    threads: int = 1
    verbose: bool = False  # print each learning-curve point as it is measured


@dataclass(frozen=True)
class CurvePoint:
    steps: int
    eval_mean_reward: float
    eval_duplicate_payments: int
    eval_false_blocks: int
    train_mean_reward: float | None  # mean over the last finished training episodes (sampled actions)


# -- choosers: (env, vector, mask, episode index) -> move ---------------------------------

Chooser = Callable[[RefundMacroEnv, np.ndarray, np.ndarray, int], int]


def model_chooser(model: Any) -> Chooser:
    """The network's most likely allowed move."""

    def choose(env: RefundMacroEnv, vector: np.ndarray, mask: np.ndarray, episode: int) -> int:
        index, _state = model.predict(vector, deterministic=True, action_masks=mask)
        return int(index)

    return choose


def random_chooser(seed: int) -> Chooser:
    """Uniform among allowed moves, each draw seeded by ``(seed, episode, turn)``: the
    same episode draws the same moves whenever it runs and however often."""

    def choose(env: RefundMacroEnv, vector: np.ndarray, mask: np.ndarray, episode: int) -> int:
        rng = np.random.default_rng([seed, episode, env.tracker.turn])
        return int(rng.choice(np.flatnonzero(mask)))

    return choose


def _scripted(rule: Callable[[RefundMacroTracker], tuple[int, str]]) -> Chooser:
    def choose(env: RefundMacroEnv, vector: np.ndarray, mask: np.ndarray, episode: int) -> int:
        line, move = rule(env.tracker)
        return env.layout.index(line, move)

    return choose


def careful_moves(tracker: RefundMacroTracker) -> tuple[int, str]:
    """Read the history; pay the first line it shows unpaid, escalate it above the cap,
    or hold; after a payment that answered with an error, read the history again and, if
    no row carries its key, send the same payment once more (it pays once); then reply."""
    if tracker.escalated:
        return -1, "reply"
    paid = next((line for line, state in enumerate(tracker.lines) if state.sent), None)
    if paid is not None:
        state = tracker.lines[paid]
        if not state.last_error or state.sent > 1:
            return -1, "reply"
        if not tracker.history_fresh:
            return -1, "history"
        shown = {row.get("idempotency_key") for row in tracker.history or []}
        return (-1, "reply") if state.keys[-1] in shown else (paid, "pay")
    if not tracker.history_fresh:
        return -1, "history"
    shown = {row.get("sku") for row in tracker.history or []}
    unpaid = [line for line, state in enumerate(tracker.lines) if state.sku not in shown]
    if not unpaid:
        return -1, "reply"
    if tracker.lines[unpaid[0]].amount_cents > tracker.ticket.cap_cents:
        return -1, "escalate"
    return unpaid[0], "pay"


def naive_moves(tracker: RefundMacroTracker) -> tuple[int, str]:
    """Pay the first line without reading the history; after an error, pay it again under a new key."""
    first = tracker.lines[0]
    if first.sent == 0:
        return 0, "pay"
    if first.last_error and first.sent < 2:
        return 0, "repay"
    return -1, "reply"


def refuse_all_moves(tracker: RefundMacroTracker) -> tuple[int, str]:
    return (-1, "reply") if tracker.escalated else (-1, "escalate")


SCRIPTED: dict[str, Chooser] = {
    "naive": _scripted(naive_moves),
    "careful": _scripted(careful_moves),
    "refuse-all": _scripted(refuse_all_moves),
}


# -- playing the held-out split through the wrapper --------------------------------------


def play(choose: Chooser, config: TrainConfig, name: str, seeds: range | None = None) -> EvaluationResult:
    """Every case of the held-out split once (or one fresh procedural ticket per seed
    of ``seeds``) through the macro wrapper, scored by the desk."""
    desk = registry.get(DESK)
    if seeds is None:
        cases = desk.fixed_cases(split=config.eval_split)
        env = RefundMacroEnv(cases, lines=config.lines)
        resets = [(i, {"seed": i, "options": {"case_index": i}}) for i in range(len(cases))]
    else:
        env = RefundMacroEnv(None, lines=config.lines)
        resets = [(i, {"seed": seed}) for i, seed in enumerate(seeds)]
    try:
        episodes = [_episode(env, choose, index, reset, desk) for index, reset in resets]
    finally:
        env.close()
    return EvaluationResult(name, episodes)


def _episode(
    env: RefundMacroEnv, choose: Chooser, index: int, reset: dict[str, Any], desk: registry.DeskSpec
) -> EpisodeResult:
    vector, info = env.reset(**reset)
    done, calls = False, info["calls"]
    while not done:
        vector, _reward, terminated, truncated, info = env.step(
            choose(env, vector, info["action_mask"], index)
        )
        done, calls = terminated or truncated, calls + info["calls"]
    return EpisodeResult(
        index,
        turns=info["turn"],
        calls=calls,
        terminated=terminated,
        truncated=truncated,
        seed=reset["seed"],
        **desk.scoring.episode_fields(info),
    )


def check_seeds(config: TrainConfig) -> range:
    """Reset seeds of the fresh procedural tickets played after training."""
    return range(CHECK_SEED_BASE, CHECK_SEED_BASE + config.check_seeds)


# -- training --------------------------------------------------------------------------------

# The one family whose owed line is mostly not the order's first: every other family
# owes line 0 or nothing, so the generator's own mix asks for a payment on a later
# line in about one ticket in fourteen.
PARTIAL_FAMILY = "legit-partial-refund"


@dataclass(frozen=True)
class TrainingTickets:
    """The procedural tickets training plays: the generator's own draw, except that a
    share ``partial_share`` of the resets build a ticket of :data:`PARTIAL_FAMILY` (its
    variant and everything else drawn as usual). The environment's generator decides
    which, so a seeded run draws the same tickets. Training only: the splits, the fresh
    tickets played after training and every default procedural case are untouched."""

    partial_share: float
    base: ProceduralRefundCases = field(default_factory=ProceduralRefundCases)

    def pick_seeded(self, rng: np.random.Generator, options: Mapping[str, Any]) -> tuple[int, Any]:
        if not options and rng.random() < self.partial_share:
            return self.base.pick_seeded(rng, {"family": PARTIAL_FAMILY})
        return self.base.pick_seeded(rng, options)

    def pick(self, rng: np.random.Generator, options: Mapping[str, Any]) -> Any:
        return self.pick_seeded(rng, options)[1]


def training_cases(config: TrainConfig) -> Any:
    """What the training envs' ``cases`` is: the config's (the gate script's reading of
    it), or the mix of :class:`TrainingTickets` when procedural tickets are reweighted."""
    if not config.partial_share:
        return None if config.cases == "procedural" else config.cases
    if config.cases != "procedural":
        raise ValueError("--partial-share reweights procedural tickets: give it only with --cases procedural")
    if not 0 < config.partial_share <= 1:
        raise ValueError(f"--partial-share must be in [0, 1], not {config.partial_share}")
    return TrainingTickets(config.partial_share)


def make_model(config: TrainConfig) -> Any:
    """A fresh, seeded model on vectorised refund macro envs (their ``cases`` given with
    the wrapper's own keywords, which the gate script's ``make_model`` passes on last)."""
    return shared.make_model(config, RefundMacroEnv, {"lines": config.lines, "cases": training_cases(config)})


def train(config: TrainConfig) -> Any:
    """Train from scratch (the gate script's loop); a learning-curve point every ``curve_every`` steps."""
    return shared.train(config, make_model, _curve_point)


def _curve_point(model: Any, config: TrainConfig, steps: int) -> CurvePoint:
    held_out = play(model_chooser(model), config, "ppo").overall
    point = CurvePoint(
        steps=steps,
        eval_mean_reward=held_out.mean("reward"),
        eval_duplicate_payments=int(held_out.total("duplicate_effects")),
        eval_false_blocks=int(held_out.total("false_blocks")),
        train_mean_reward=shared.train_mean_reward(model),
    )
    if config.verbose:
        print(
            f"{steps:>9} steps: held-out mean reward {point.eval_mean_reward:.4f},"
            f" duplicate payments {point.eval_duplicate_payments}, false blocks {point.eval_false_blocks}",
            flush=True,
        )
    return point


def compare(run: Any, seeds: range | None = None) -> dict[str, EvaluationResult]:
    """Every policy of the comparison through the wrapper, the trained one first: on the
    held-out split, or on fresh procedural tickets when ``seeds`` is given."""
    config = run.config
    choosers = {
        "ppo": model_chooser(run.model),
        "untrained": model_chooser(run.untrained),
        "random": random_chooser(config.seed),
        **SCRIPTED,
    }
    return {name: play(choose, config, name, seeds) for name, choose in choosers.items()}


def text_baselines(config: TrainConfig) -> dict[str, EvaluationResult]:
    """The reference text policies on the text environment, same split and grader."""
    return {
        name: evaluate(policy, split=config.eval_split, desk=DESK, progress=False)
        for name, policy in REFERENCE_POLICIES.items()
    }


def plot_curve(curve: list[CurvePoint], path: Path) -> None:
    shared.plot_curve(
        curve,
        path,
        None,
        "MaskablePPO on RefundDeskMacro-v0",
        lower_series=(
            ("eval_duplicate_payments", "duplicate payments"),
            ("eval_false_blocks", "false blocks"),
        ),
        lower_label="episodes on the eval split",
    )


def _arguments(argv: list[str] | None) -> tuple[TrainConfig, argparse.Namespace]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    defaults = TrainConfig()
    shared.add_training_arguments(parser, defaults)
    parser.add_argument(
        "--check-seeds", type=int, default=defaults.check_seeds, help="fresh tickets after training"
    )
    parser.add_argument(
        "--partial-share",
        type=float,
        default=defaults.partial_share,
        help=f"share of procedural training tickets drawn from {PARTIAL_FAMILY} (0: the generator's mix)",
    )
    parser.add_argument("--save-model", action="store_true", help="also write model.zip")
    parser.add_argument("--out", type=Path, default=Path("out/ppo_refund"), help="directory for the results")
    args = parser.parse_args(argv)
    return shared.config_from(args, TrainConfig), args


def _headline(result: EvaluationResult) -> dict[str, Any]:
    """A result's JSON without its per-case rows (too many on the procedural check)."""
    return {key: value for key, value in result.to_json(DESK).items() if key != "per_case"}


def main(argv: list[str] | None = None) -> int:
    config, args = _arguments(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    load_before = load_average()
    run = train(config)
    machine = {
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after_training": load_average(),
    }
    results = compare(run)
    fresh = compare(run, check_seeds(config)) if config.check_seeds else {}
    texts = text_baselines(config)
    output = _output(run, machine, results, texts, fresh)
    print(output)
    (args.out / "output.txt").write_text(output + "\n")
    if args.save_model:
        run.model.save(args.out / "model.zip")
    summary = _summary(run, machine, results, texts, fresh)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True))
    if run.curve:
        plot_curve(run.curve, args.out / "learning_curve.png")
        print(f"\nlearning curve: {args.out / 'learning_curve.png'}")
    return 0


Results = dict[str, EvaluationResult]


def _output(run: Any, machine: dict[str, Any], results: Results, texts: Results, fresh: Results) -> str:
    """The tables the run prints (and writes to ``output.txt``)."""
    config = run.config
    parts = [
        f"trained {run.model.num_timesteps} env steps in {run.train_seconds:.1f} s"
        f" (curve evaluations: {run.curve_seconds:.1f} s); {machine['cpus']} CPUs, load averages"
        f" (1, 5, 15 min) {machine['load_average_before']} before and"
        f" {machine['load_average_after_training']} after training",
        f"\n### Held-out {config.eval_split} split, through RefundDeskMacro-v0\n",
        baseline_table(results, DESK),
        "\n### Mean reward per family\n",
        family_table(results),
        "\n### The reference text policies on RefundDesk-v0, same split\n",
        baseline_table(texts, DESK),
    ]
    if fresh:
        parts += [
            f"\n### {config.check_seeds} fresh procedural tickets, through RefundDeskMacro-v0\n",
            baseline_table(fresh, DESK),
        ]
    return "\n".join(parts)


def _summary(
    run: Any, machine: dict[str, Any], results: Results, texts: Results, fresh: Results
) -> dict[str, Any]:
    """``summary.json``: the gate's ``ppo_macro`` shape (config, steps, time, curve, results
    per policy on the held-out split), plus duplicate payments and cents paid twice per
    policy, the text policies and the fresh-ticket check."""
    return {
        "config": asdict(run.config),
        "env_steps": int(run.model.num_timesteps),
        "train_seconds": round(run.train_seconds, 1),
        "machine": machine,
        "libraries": library_versions(shared.TRAINING_LIBRARIES),
        "curve": [asdict(point) for point in run.curve],
        "results": {name: result.to_json(DESK) for name, result in results.items()},
        "duplicate_payments": {name: r.overall.total("duplicate_effects") for name, r in results.items()},
        "cents_paid_twice": {name: r.overall.total("duplicate_cents") for name, r in results.items()},
        "text_policies": {name: result.to_json(DESK) for name, result in texts.items()},
        "procedural_check": {name: _headline(result) for name, result in fresh.items()},
    }


if __name__ == "__main__":
    sys.exit(main())
