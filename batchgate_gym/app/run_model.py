"""``batchgate run-model``: play a desk with a model behind a chat-completions API.

Plays ``-r`` rollouts of each selected case of a split (or case file): all, the
first ``-n``, those named by ``--case``, or ``--sample N`` drawn with
``--sample-seed``, with the model ``--model`` at ``--base-url`` (the key read from
the environment variable ``--api-key-env``), at most ``--concurrency`` at a time,
through the official ``openai`` client, and appends one JSONL row per rollout to
``--out`` as it finishes. Sampling (``--temperature``, ``--top-p``,
``--max-tokens``, ``--seed``, ``--sampling-args JSON``), ``--header`` and
``--system-prompt FILE`` shape every request; ``--stream`` reads answers as
server-sent events.

Transport faults (429, 5xx, timeouts, bodies that are not a chat completion) are
retried ``--max-retries`` times with exponential backoff from ``--backoff``
seconds; a rollout that still fails is an infra error, not scored. A rollout the
service cuts short (context too long, an answer cut at ``--max-tokens``) is
scored as unfinished and counted. A bad key, an unknown model or a wrong address
stops the run with one line and exit status 2, before any row is written. A
rerun with the same settings skips the rollouts already in ``--out``; other
settings on the same ``--out`` are refused (see ``OUT.meta.json``, which also
holds the run's manifest: what it was asked to play). ``--sign-key KEY`` signs the
manifest and every row with an Ed25519 key made by ``batchgate keygen``, so that
anyone with ``KEY.pub`` can check them (``batchgate verify``). Exit status 0
needs at least one scored rollout; the last line sums the run up. ``batchgate
report --results`` re-grades and compares the files. See
:mod:`batchgate_gym.llm.runner`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .shared import (
    UsageError,
    add_backend_options,
    add_case_source,
    check_backend_options,
    desk_of,
    env_kwargs,
    int_in,
    nodes_line,
)

TAKES_DESK_OPTIONS = True  # plays the desk's environment: --rules, --recovery, ... apply

STOPPED = 2  # exit status when the run cannot work at all (bad key, unknown model, wrong address)


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
    pick = parser.add_mutually_exclusive_group()
    pick.add_argument("-n", type=int_in(1), default=None, help="the first N cases (default all)")
    pick.add_argument(
        "--case", action="append", default=None, metavar="ID", help="play this case (repeatable)"
    )
    pick.add_argument("--sample", type=int_in(1), default=None, metavar="N", help="N cases drawn at random")
    parser.add_argument(
        "--sample-seed", type=int, default=None, metavar="S", help="seed of --sample's draw (default 0)"
    )
    parser.add_argument("-r", "--rollouts", type=int_in(1), default=1, help="rollouts per case (default 1)")
    parser.add_argument(
        "--concurrency", type=int_in(1), default=8, help="rollouts in flight at once (default 8)"
    )
    parser.add_argument("--out", required=True, help="the JSONL results file (appended to; resumed)")
    parser.add_argument(
        "--mode", choices=("tools", "text"), default="tools", help="tool calls or calls in text"
    )
    parser.add_argument(
        "--temperature", type=float, default=None, help="sampling temperature (default: the server's)"
    )
    parser.add_argument(
        "--top-p", type=float, default=None, help="nucleus sampling share (default: the server's)"
    )
    parser.add_argument(
        "--max-tokens", type=int_in(1), default=None, help="tokens per answer at most (default: the server's)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="request seed of rollout 0; rollout r sends seed + r (default 0)"
    )
    parser.add_argument(
        "--sampling-args",
        default=None,
        metavar="JSON",
        help="a JSON object merged into every request body, e.g. '{\"min_p\": 0.05}'",
    )
    parser.add_argument(
        "--header",
        action="append",
        default=None,
        metavar="'NAME: VALUE'",
        help="an HTTP header sent with every request (repeatable)",
    )
    parser.add_argument(
        "--system-prompt", metavar="FILE", help="a text file that replaces the system message (the brief)"
    )
    parser.add_argument("--stream", action="store_true", help="read answers as server-sent events")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
    parser.add_argument("--max-retries", type=int_in(0), default=5, help="retries per request (default 5)")
    parser.add_argument(
        "--backoff", type=float, default=0.5, help="first retry delay in seconds, doubled each time"
    )
    parser.add_argument(
        "--retry-infra", action="store_true", help="also replay rollouts that ended in infra errors"
    )
    parser.add_argument(
        "--limit", type=int_in(1), default=None, help="play at most this many rollouts in this run"
    )
    parser.add_argument(
        "--sign-key",
        metavar="KEY",
        help="an Ed25519 private key (batchgate keygen) that signs the run's manifest and every row",
    )
    add_backend_options(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def json_object(text: str) -> dict[str, Any]:
    """``--sampling-args``: a JSON object."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise SystemExit(f"batchgate run-model: --sampling-args is not JSON ({exc}): {text!r}") from None
    if not isinstance(value, dict):
        raise SystemExit(f"batchgate run-model: --sampling-args wants a JSON object ({{...}}), not {text!r}")
    return value


def header(text: str) -> tuple[str, str]:
    """``--header``: ``'Name: value'``."""
    name, colon, value = text.partition(":")
    if not colon or not name.strip() or any(c.isspace() for c in name.strip()):
        raise SystemExit(f"batchgate run-model: a --header is 'Name: value', not {text!r}")
    return name.strip(), value.strip()


def run(args: argparse.Namespace) -> int:
    from batchgate_gym.llm.runner import RunConfig, RunStopped, SettingsMismatch, run_rollouts

    desk = desk_of(args)
    if desk.cases.split_cases is None and desk.cases.load_cases is None:
        raise SystemExit(f"batchgate run-model: the {desk.name!r} desk has no fixed cases to play")
    if args.sample_seed is not None and args.sample is None:
        raise UsageError("batchgate run-model: --sample-seed seeds --sample's draw; give --sample N too")
    if not Path(args.out).parent.is_dir():  # said before any request, not after the first row
        raise UsageError(f"batchgate run-model: --out {args.out}: there is no folder {Path(args.out).parent}")
    key = os.environ.get(args.api_key_env)
    if key is None:
        raise UsageError(
            f"batchgate run-model: set the environment variable {args.api_key_env} "
            "(any value for a local server)"
        )
    if args.sign_key is not None:
        from batchgate_gym.kernel.certificate import CertificateError, Signer

        try:
            Signer.load(args.sign_key)  # a bad key stops the run before any request
        except CertificateError as exc:
            raise SystemExit(f"batchgate run-model: --sign-key: {exc}") from None
    config = _config(args, desk, key, RunConfig)
    check_backend_options(args.backend, args.ray_address, "run-model")
    player = None
    if args.backend == "ray":
        from .ray_runs import play_on_ray

        player = play_on_ray
    bar = progress_bar(quiet=args.quiet)
    try:
        summary = asyncio.run(run_rollouts(config, on_row=bar.update_row, on_start=bar.start, player=player))
    except RunStopped as exc:
        bar.close()
        print(f"batchgate run-model: {exc}", file=sys.stderr)
        return STOPPED
    except SettingsMismatch as exc:
        bar.close()
        raise SystemExit(f"batchgate run-model: {exc}") from None
    except (ValueError, OSError) as exc:
        bar.close()
        raise SystemExit(f"batchgate run-model: {exc}") from None
    except KeyboardInterrupt:
        bar.close()
        raise SystemExit(
            f"batchgate run-model: interrupted; the {bar.written} rows finished are kept in {config.out};"
            " run the same command again to play the rest"
        ) from None
    bar.close()
    if args.backend == "ray":
        print(nodes_line("run-model"), file=sys.stderr)
    print(summary.line(config.out), file=sys.stderr)
    if summary.scored == 0 and (summary.infra_errors or not summary.skipped):
        return 1
    return 0


def _config(args: argparse.Namespace, desk: Any, key: str, make: Callable[..., Any]) -> Any:
    system_prompt = None
    if args.system_prompt is not None:
        try:
            system_prompt = Path(args.system_prompt).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(
                f"batchgate run-model: cannot read --system-prompt {args.system_prompt}: {exc.strerror or exc}"
            ) from None
    try:
        return make(
            model=args.model,
            base_url=args.base_url,
            api_key=key,
            api_key_env=args.api_key_env,
            out=Path(args.out),
            desk=desk.name,
            split=args.split,
            cases=args.cases,
            n=args.n,
            case_ids=tuple(args.case or ()),
            sample=args.sample,
            sample_seed=args.sample_seed or 0,
            rollouts=args.rollouts,
            concurrency=args.concurrency,
            mode=args.mode,
            timeout=args.timeout,
            max_retries=args.max_retries,
            backoff=args.backoff,
            env_kwargs=env_kwargs(args, desk, desk.fixed_cases(args.cases, args.split)),
            retry_infra=args.retry_infra,
            limit=args.limit,
            temperature=args.temperature,
            top_p=args.top_p,
            max_tokens=args.max_tokens,
            seed=args.seed,
            sampling_args=json_object(args.sampling_args) if args.sampling_args is not None else {},
            headers=dict(header(text) for text in args.header or ()),
            system_prompt=system_prompt,
            stream=args.stream,
            sign_key=Path(args.sign_key) if args.sign_key is not None else None,
        )
    except ValueError as exc:
        raise SystemExit(f"batchgate run-model: {exc}") from exc


class RunProgress:
    """A tqdm bar on stderr over the rollouts of a run: scored, cut short, infra, rate and ETA."""

    def __init__(self, disable: bool) -> None:
        from tqdm.auto import tqdm

        self.written = 0
        self.counts = {"scored": 0, "cut short": 0, "infra": 0}
        self._bar = tqdm(total=0, desc="rollouts", unit="rollout", disable=disable, file=sys.stderr)

    def start(self, total: int) -> None:
        """The rollouts this run will play (those already in the file are not counted)."""
        self._bar.reset(total=total)

    def update_row(self, row: dict[str, Any]) -> None:
        from batchgate_gym.llm.runner import CUT_SHORT

        self.written += 1
        if row.get("error") is not None:
            self.counts["infra"] += 1
        else:
            self.counts["scored"] += 1
            self.counts["cut short"] += row.get("ended") in CUT_SHORT
        self._bar.set_postfix(self.counts, refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()


def progress_bar(quiet: bool) -> RunProgress:
    """The run's bar, off with ``--quiet``, when stderr is not a terminal, or under BATCHGATE_NO_PROGRESS=1."""
    off = quiet or not sys.stderr.isatty() or os.environ.get("BATCHGATE_NO_PROGRESS") == "1"
    return RunProgress(disable=off)
