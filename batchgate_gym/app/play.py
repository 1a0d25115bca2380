"""``batchgate play``: gate one nightly load yourself, in the terminal.

Playing a case by hand is the quickest way to see what an agent sees: the task
text first, then one action per line (the same syntax a policy sends), each
answered with the environment's observation, and the score with its four terms
at the end. ``--case`` picks a fixed case by id (from ``--cases`` or a split,
eval by default); otherwise a case is drawn with ``--seed`` (a procedural one
unless ``--cases`` or ``--split`` is given). ``:quit`` (or end of input) stops
without a report, which scores zero.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable
from typing import Any

from batchgate_gym.desks.gate.grader import TERMS

from .report import add_case_source

QUIT = ":quit"
PROMPT = "action> "
SCORE_BANNER = "=== score ==="


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_case_source(parser, default="procedural cases")
    parser.add_argument(
        "--case", metavar="CASE_ID", help="play this case (eval split unless --cases/--split)"
    )
    parser.add_argument("--seed", type=int, default=None, help="seed for drawing the case")
    parser.add_argument("--max-turns", type=int, default=30, help="turn limit (default 30)")


def build_env(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The environment and the reset arguments the options ask for."""
    from batchgate_gym.envs import BatchGateEnv

    cases: Any = args.cases or args.split
    if args.case and cases is None:
        cases = "eval"
    env = BatchGateEnv(cases, max_turns=args.max_turns)
    reset: dict[str, Any] = {"seed": args.seed}
    if args.case:
        reset["options"] = {"case_id": args.case}
    return env, reset


def play(
    env: Any,
    reset_kwargs: dict[str, Any],
    read_line: Callable[[str], str],
    write: Callable[[str], None],
) -> dict[str, Any]:
    """One episode driven by a person; returns the last step's info (with the score if it ended)."""
    observation, info = env.reset(**reset_kwargs)
    write(observation)
    write(f"\nOne action per line; {QUIT} stops without a report.")
    while True:
        try:
            line = read_line(PROMPT)
        except EOFError:
            line = QUIT
        if not line.strip():
            continue
        if line.strip() == QUIT:
            write("Stopped without a report: nothing counts.")
            return info
        observation, _reward, terminated, truncated, info = env.step(line)
        write(observation)
        if terminated or truncated:
            write(score_text(info))
            return info


def score_text(info: dict[str, Any]) -> str:
    score = info["score"]
    lines = [
        SCORE_BANNER,
        f"case {info['case_id']} ({info['family']})",
        f"reward {score['reward']:.4f}",
        *(f"  {term:<12} {score[term]:.4f}" for term in TERMS),
        f"defective batches loaded: {score['bad_batches_loaded']} of {info['defective_batches']}",
        f"revenue error: ${score['revenue_error_usd']:,.2f}",
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    with contextlib.suppress(ImportError):  # not on every platform
        import readline  # noqa: F401  (line editing and history for input())
    env, reset = build_env(args)
    try:
        play(env, reset, input, lambda text: print(text, flush=True))
    finally:
        env.close()
    return 0
