"""``batchgate run-model``: play a desk with a model behind a chat-completions API.

Plays ``-r`` rollouts of each of the first ``-n`` cases of a split (or case file)
with the model ``--model`` at ``--base-url`` (the key read from the environment
variable ``--api-key-env``), at most ``--concurrency`` at a time, through the
official ``openai`` client, and appends one JSONL row per rollout to ``--out`` as
it finishes. Failed requests (429, 5xx, timeouts, bodies that are not JSON) are
retried ``--max-retries`` times with exponential backoff from ``--backoff``
seconds; a rollout that still fails is written as an infra error, not scored. A
rerun skips the rollouts already in ``--out``. ``batchgate report --results``
re-grades and compares the files. See :mod:`batchgate_gym.llm.runner`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from .shared import add_case_source, desk_of, env_kwargs

TAKES_DESK_OPTIONS = True  # plays the desk's environment: --rules, --recovery, ... apply


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_case_source(parser)
    parser.add_argument("--model", required=True, help="model name sent with every request")
    parser.add_argument("--base-url", required=True, help="the API's base URL, e.g. http://127.0.0.1:8000/v1")
    parser.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the API key (default OPENAI_API_KEY; any value for a local server)",
    )
    parser.add_argument("-n", type=int, default=None, help="the first N cases (default all)")
    parser.add_argument("-r", "--rollouts", type=int, default=1, help="rollouts per case (default 1)")
    parser.add_argument("--concurrency", type=int, default=8, help="rollouts in flight at once (default 8)")
    parser.add_argument("--out", required=True, help="the JSONL results file (appended to; resumed)")
    parser.add_argument(
        "--mode", choices=("tools", "text"), default="tools", help="tool calls or calls in text"
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
    parser.add_argument("--max-retries", type=int, default=5, help="retries per request (default 5)")
    parser.add_argument(
        "--backoff", type=float, default=0.5, help="first retry delay in seconds, doubled each time"
    )
    parser.add_argument(
        "--retry-infra", action="store_true", help="also replay rollouts that ended in infra errors"
    )
    parser.add_argument("--limit", type=int, default=None, help="play at most this many rollouts in this run")


def run(args: argparse.Namespace) -> int:
    from batchgate_gym.llm.runner import RunConfig, run_rollouts

    desk = desk_of(args)
    if desk.split_cases is None and desk.load_cases is None:
        raise SystemExit(f"batchgate run-model: the {desk.name!r} desk has no fixed cases to play")
    key = os.environ.get(args.api_key_env)
    if key is None:
        raise SystemExit(
            f"batchgate run-model: set the environment variable {args.api_key_env} "
            "(any value for a local server)"
        )
    try:
        config = RunConfig(
            model=args.model,
            base_url=args.base_url,
            api_key=key,
            out=Path(args.out),
            desk=desk.name,
            split=args.split,
            cases=args.cases,
            n=args.n,
            rollouts=args.rollouts,
            concurrency=args.concurrency,
            mode=args.mode,
            timeout=args.timeout,
            max_retries=args.max_retries,
            backoff=args.backoff,
            env_kwargs=env_kwargs(args, desk, desk.fixed_cases(args.cases, args.split)),
            retry_infra=args.retry_infra,
            limit=args.limit,
        )
    except ValueError as exc:
        raise SystemExit(f"batchgate run-model: {exc}") from exc
    summary = asyncio.run(run_rollouts(config))
    print(
        f"{config.out}: {summary.scored} scored, {summary.infra_errors} infra errors, "
        f"{summary.skipped} already done of {summary.planned}; "
        f"{summary.requests} requests ({summary.retries} retries)",
        file=sys.stderr,
    )
    return 0
