"""Macro environment speed: steps per second of both desks' macro envs under random masked moves.

Writes benchmarks/results/macro_speed.json and macro_speed.md. For each desk
(``BadBatchGateMacro-v0``, ``RefundDeskMacro-v0``) and each case set (the eval split,
warm: every case met once before the timed runs; procedural, cold: a new case every
reset), each way a move can reach the world the code offers (``world``: the move's
call goes to the desk's tool directly; ``text``: it is written as the text action a
language agent would send and read back from the text observation) is timed in turn,
round after round in one process, with this process's CPU time
(``time.process_time``) unless ``--clock wall``: the median of the rounds. A move is
drawn uniformly among the allowed ones (``action_masks()``); the draw is part of
the step, as it is in a training loop. The same seeds drive both ways, so both play
the same episodes (the equivalence tests hold them to it). Code without the option
(``via_text``) has one way, the text one, reported as ``text``. Beside them, what the
text environment alone takes for the same resets and calls (replayed without the
wrapper): the most any wrapper could reach.

    python benchmarks/macro_speed.py [--steps N] [--rounds N] [--clock cpu|wall] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from batchgate_gym.bench.harness import CLOCKS, load_average, one_core
from batchgate_gym.tables import markdown_table

TARGETS = {"gate": 15_000.0, "refund": 20_000.0}  # steps per second, at least (warm, world)
CASE_SETS = {"eval": "eval split, warm", "procedural": "procedural, a new case each reset (cold)"}


def _env_class(desk: str) -> type[Any]:
    if desk == "gate":
        from batchgate_gym.envs.gate.macro import GateMacroEnv

        return GateMacroEnv
    from batchgate_gym.envs.refund.macro import RefundMacroEnv

    return RefundMacroEnv


def ways(desk: str) -> list[str]:
    """The ways this code can send a move: ``world`` and ``text``, or ``text`` alone."""
    offered = "via_text" in inspect.signature(_env_class(desk).__init__).parameters
    return ["world", "text"] if offered else ["text"]


def make_env(desk: str, case_set: str, way: str) -> Any:
    options: dict[str, Any] = {} if case_set == "procedural" else {"split": case_set}
    if way == "text" and "world" in ways(desk):
        options["via_text"] = True
    return _env_class(desk)(**options)


def driver(env: Any, seed: int) -> Callable[[int], None]:
    """``steps`` random masked moves on ``env``, resetting at each episode's end."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)  # later resets draw from the env's own generator, as a training loop's do

    def run(steps: int) -> None:
        for _ in range(steps):
            allowed = np.flatnonzero(env.action_masks())
            *_, terminated, truncated, _info = env.step(allowed[rng.integers(len(allowed))])
            if terminated or truncated:
                env.reset()

    return run


def measure(desk: str, case_set: str, steps: int, rounds: int, clock: str) -> dict[str, Any]:
    """Steps per second of each way, the median of ``rounds`` rounds taken in turn."""
    timer = CLOCKS[clock]
    runners = {way: driver(make_env(desk, case_set, way), seed=0) for way in ways(desk)}
    for run in runners.values():
        run(steps)  # warm: the eval split's cases built, statements compiled
    seconds: dict[str, list[float]] = {way: [] for way in runners}
    for _ in range(rounds):
        for way, run in runners.items():
            start = timer()
            run(steps)
            seconds[way].append(timer() - start)
    row: dict[str, Any] = {
        way: {
            "steps_per_second": round(steps / statistics.median(taken), 1),
            "us_per_step": round(statistics.median(taken) / steps * 1e6, 2),
            "rounds_s": [round(value, 4) for value in taken],
        }
        for way, taken in seconds.items()
    }
    if len(row) == 2:
        row["speedup"] = round(statistics.median(seconds["text"]) / statistics.median(seconds["world"]), 2)
        alone = text_env_alone(desk, case_set, steps, rounds, timer)
        row["text_env_alone"] = {
            "steps_per_second": round(steps / alone, 1),
            "us_per_step": round(alone / steps * 1e6, 2),
        }
    return row


Turn = tuple[str, Any]  # ("reset", its keywords), ("calls", a move's calls) or ("text", an action)


def text_env_alone(desk: str, case_set: str, steps: int, rounds: int, timer: Callable[[], float]) -> float:
    """Seconds (median of ``rounds``) the text environment alone takes for what ``steps``
    random masked moves sent it: the same resets, calls and actions, replayed on a fresh
    one, with no tracker, mask, vector or draw. What no wrapper can go below."""
    env = make_env(desk, case_set, "world")
    played: list[Turn] = []
    text_env = env.text_env
    reset, step, step_calls = text_env.reset, text_env.step, text_env.step_calls

    def recorded_reset(**kwargs: Any) -> Any:
        played.append(("reset", kwargs))
        return reset(**kwargs)

    def recorded_step(action: str) -> Any:
        played.append(("text", action))
        return step(action)

    def recorded_calls(calls: list[Any], bound: Any = None) -> Any:
        played.append(("calls", (calls, bound)))  # the bound calls too: the wrapper keeps them
        return step_calls(calls, bound)

    text_env.reset, text_env.step, text_env.step_calls = recorded_reset, recorded_step, recorded_calls
    driver(env, seed=0)(steps)
    env.close()
    taken = []
    for _ in range(rounds + 1):  # the first warms the cases and statements
        bare = make_env(desk, case_set, "world").text_env
        start = timer()
        for kind, what in played:
            if kind == "reset":
                bare.reset(**what)
            elif kind == "calls":
                bare.step_calls(*what)
            else:
                bare.step(what)
        taken.append(timer() - start)
        bare.close()
    return statistics.median(taken[1:])


def markdown(result: dict[str, Any]) -> str:
    rows = []
    for desk, by_set in result["desks"].items():
        for case_set, row in by_set.items():
            world = row.get("world")
            target = TARGETS[desk] if case_set == "eval" else None
            met = (
                ""
                if world is None or target is None
                else ("met" if world["steps_per_second"] >= target else "not met")
            )
            rows.append(
                [
                    desk,
                    CASE_SETS[case_set],
                    f"{row['text']['steps_per_second']:,.0f}",
                    "-" if world is None else f"{world['steps_per_second']:,.0f}",
                    "-" if "speedup" not in row else f"{row['speedup']:.2f}x",
                    "-"
                    if "text_env_alone" not in row
                    else f"{row['text_env_alone']['steps_per_second']:,.0f}",
                    "-" if target is None else f">= {target:,.0f} ({met})" if met else f">= {target:,.0f}",
                ]
            )
    table = markdown_table(
        ["desk", "cases", "text steps/s", "world steps/s", "world/text", "text env alone, steps/s", "target"],
        rows,
    )
    load = result["load_before"], result["load_after"]
    note = (
        f"{result['steps']:,} steps a round, median of {result['rounds']} rounds taken in turn in one process;"
        f" clock: {result['clock']}; load (1-minute) {load[0][0] if load[0] else '?'} before,"
        f' {load[1][0] if load[1] else "?"} after. "text env alone": the same resets, calls and actions'
        " replayed on a bare text environment (no tracker, mask, vector or draw), timed after the rounds."
    )
    return f"{table}\n\n{note}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=5_000, help="steps per timed round")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per way")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    parser.add_argument("--desks", default="gate,refund", help="comma-separated: gate, refund")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"), help="output directory")
    parser.add_argument("--name", default="macro_speed", help="file name of the results, without suffix")
    args = parser.parse_args(argv)
    before = load_average()
    with one_core():
        desks = {
            desk: {
                case_set: measure(desk, case_set, args.steps, args.rounds, args.clock)
                for case_set in CASE_SETS
            }
            for desk in args.desks.split(",")
        }
    result = {
        "desks": desks,
        "steps": args.steps,
        "rounds": args.rounds,
        "clock": args.clock,
        "load_before": before,
        "load_after": load_average(),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.name}.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    words = argv if argv is not None else sys.argv[1:]
    command = " ".join(["python benchmarks/macro_speed.py", *words])
    table = markdown(result)
    (out / f"{args.name}.md").write_text(f"<!-- made by: {command} -->\n\n{table}\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
