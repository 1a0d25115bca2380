"""``batchgate bench``: how fast the environment is, measured the same way every time.

Speed is a feature here (users run millions of steps), so it is measured, not
guessed: episodes per second of the reference policies through the full text
interface (grading included), steps per second of single tools, reset time for a
built and for a fresh procedural case, memory per live environment, vector-env
throughput, and how the cost grows with rows per batch and batches per case.

Every figure is a median over ``repeats`` runs. The single-process figures run
pinned to one core (where the platform allows it); vector envs use what they
need. ``--json`` prints the full result; otherwise a Markdown table. The script
``benchmarks/gate_speed.py`` runs exactly this code and writes both to files.
"""

# The measuring lives in batchgate_gym.bench (its docstring says which module does
# what); this module runs a desk's benchmark and holds the command line.

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from batchgate_gym.bench import BenchConfig, bench_of
from batchgate_gym.bench.harness import CLOCKS

from .shared import desk_of, int_in, unsupported

__all__ = ["add_arguments", "config_from", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the full result as JSON")
    parser.add_argument("--quick", action="store_true", help="tiny run (a smoke test, not a measurement)")
    parser.add_argument("--repeats", type=int_in(1), default=None, help="runs per figure (median reported)")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall (default) or cpu: process CPU time, steadier on a busy machine (vector envs: wall)",
    )


def config_from(args: argparse.Namespace) -> BenchConfig:
    config = BenchConfig.quick() if args.quick else BenchConfig()
    if args.repeats:
        config = BenchConfig(**{**asdict(config), "repeats": args.repeats})
    return config


def run(args: argparse.Namespace) -> int:
    desk = desk_of(args)
    if desk.bench is None:
        raise unsupported("bench", desk, "speed benchmark")
    hooks = bench_of(desk)
    result = hooks.run_benchmark(
        config_from(args), log=lambda stage: print(f"[bench] {stage}", file=sys.stderr), clock=args.clock
    )
    print(json.dumps(result, indent=1) if args.json else hooks.markdown(result))
    return 0
