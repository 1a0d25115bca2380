"""Scripted players through the chat-completions server: the "Evaluate a model" table of docs/models.md.

No model is run. Each player is a reference policy served by ``batchgate serve``'s
server (:mod:`batchgate_gym.llm.server`) on a free port of 127.0.0.1 and played by
``batchgate run-model``'s runner (the official ``openai`` client), exactly as a
model behind an API would be; the last one meets injected transport faults and
model mistakes (a stall is held back an hour against a 10-second client timeout, so
the faults table depends on the seeded schedule alone, not on the clock), and the
gate's fourth has a short context: its longer episodes overflow and are scored as
unfinished. The gate's players play each case twice. The
result files go to ``benchmarks/results/llm/`` (replaced), and
``batchgate report --results`` over them prints that table, re-grading
every row from its log.

``--desk refund`` or ``--desk analyst`` plays that desk's careful player and a weaker
one (no faults) into ``benchmarks/results/llm/DESK/``: the transcripts the viewer's
test and its screenshot show (``batchgate view``).

    python benchmarks/llm_scripted.py [--desk gate] [--out benchmarks/results/llm] [-n 32]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from batchgate_gym.llm.runner import RunConfig, run_rollouts
from batchgate_gym.llm.server import ServerSettings, serve_in_thread

# A stalled answer is held back far longer than the client waits, and an answer that is not
# stalled comes back in milliseconds, far within it: which requests time out is decided by the
# fault schedule (seeded), never by how busy the machine is.
TIMEOUT_S = 10.0
STALL_S = 3600.0

# A model whose context holds this many tokens (estimated): the longer episodes overflow it and
# end unfinished, scored and counted (about half the eval split's careful episodes).
CONTEXT_WINDOW = 1600
ROLLOUTS = 2  # per case, so that the table has pass@2 and pass^2

# (file and model name, policy served, server settings, runner settings)
PLAYERS: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    ("scripted-careful", "careful", {}, {"rollouts": ROLLOUTS}),
    ("scripted-naive", "naive", {}, {"rollouts": ROLLOUTS}),
    (
        "scripted-careful-faults",
        "careful",
        {"faults": 0.2, "model_errors": 0.1, "seed": 1, "stall": STALL_S, "retry_after": 0.05},
        {"timeout": TIMEOUT_S, "max_retries": 1, "backoff": 0.05, "rollouts": ROLLOUTS},
    ),
    ("scripted-careful-short-context", "careful", {"context_window": CONTEXT_WINDOW}, {"rollouts": ROLLOUTS}),
]
# The other desks: careful and the reference player it is most often compared with.
DESK_PLAYERS: dict[str, list[tuple[str, str, dict[str, Any], dict[str, Any]]]] = {
    "gate": PLAYERS,
    "refund": [("scripted-careful", "careful", {}, {}), ("scripted-naive", "naive", {}, {})],
    "analyst": [
        ("scripted-careful", "careful", {}, {}),
        ("scripted-one-short", "one-short", {}, {}),
    ],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--desk", choices=sorted(DESK_PLAYERS), default="gate", help="the desk played")
    parser.add_argument(
        "--out",
        help="output directory (default benchmarks/results/llm, and its folder DESK for another desk)",
    )
    parser.add_argument("-n", type=int, default=32, help="cases of the eval split (default 32)")
    args = parser.parse_args(argv)
    results = Path(__file__).parent / "results" / "llm"
    folder = Path(args.out) if args.out else results if args.desk == "gate" else results / args.desk
    folder.mkdir(parents=True, exist_ok=True)
    for name, policy, server_settings, runner_settings in DESK_PLAYERS[args.desk]:
        out = folder / f"{name}.jsonl"
        out.unlink(missing_ok=True)
        with serve_in_thread(ServerSettings(desk=args.desk, policy=policy, **server_settings)) as server:
            config = RunConfig(
                model=name,
                desk=args.desk,
                base_url=server.base_url,
                api_key="local",
                out=out,
                split="eval",
                n=args.n,
                concurrency=8,
                **runner_settings,
            )
            summary = asyncio.run(run_rollouts(config))
        print(
            f"{out}: {summary.scored} scored, {summary.infra_errors} infra errors, "
            f"{summary.requests} requests ({summary.retries} retries)",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
