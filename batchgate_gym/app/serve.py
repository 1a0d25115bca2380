"""``batchgate serve``: a local chat-completions server that plays a scripted policy.

``POST /v1/chat/completions`` at ``http://127.0.0.1:PORT/v1`` answers every
request with the next assistant message of a reference policy of the desk
(``--policy``), rebuilt from the request's messages alone, until interrupted. Any
model name and any API key are accepted. ``--faults P`` makes a share P of
requests fail in transport (429 with Retry-After, 500, an answer held back
``--stall`` seconds, a body that is not JSON); ``--model-errors P`` makes a share
P of turns a model's mistake (an unknown tool, arguments that are not JSON). Both
are drawn from ``--seed``, so a run is reproducible. ``--context-window TOKENS``
refuses longer requests as a model with a full context does. It honours
``stream``, ``n`` and ``max_tokens`` as a real server does. A port already taken
ends it with one line and exit status 1. See :mod:`batchgate_gym.llm.server`.
"""

from __future__ import annotations

import argparse
import sys

from .shared import UsageError, desk_of, int_in


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--policy", required=True, help="a reference policy of the desk (careful, naive, ...)"
    )
    parser.add_argument(
        "--port", type=int_in(1, 65_535), default=8000, help="port on 127.0.0.1 (default 8000)"
    )
    parser.add_argument("--faults", type=float, default=0.0, help="share of requests failed in transport")
    parser.add_argument("--model-errors", type=float, default=0.0, help="share of turns that are mistakes")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault and mistake draws")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds every answer takes (default 0)")
    parser.add_argument("--stall", type=float, default=30.0, help="seconds a stalled answer is held back")
    parser.add_argument(
        "--retry-after", type=float, default=1.0, help="seconds a 429 asks the client to wait"
    )
    parser.add_argument(
        "--context-window",
        type=int_in(1),
        default=None,
        metavar="TOKENS",
        help="refuse a longer request (estimated tokens) with 400 context_length_exceeded, as a full model",
    )


def unused_options(args: argparse.Namespace, desk: object) -> dict[str, str]:
    """The fault settings with nothing to shape: no transport fault drawn, or no draw at all."""
    unused: dict[str, str] = {}
    if not args.faults:
        reason = "it shapes transport faults, and --faults is 0"
        unused.update(stall=reason, retry_after=reason)
    if not args.faults and not args.model_errors:
        unused["seed"] = "it draws faults and mistakes, and --faults and --model-errors are 0"
    return unused


def run(args: argparse.Namespace) -> int:
    from batchgate_gym.llm.server import PortBusy, ServerSettings, serve_forever

    desk = desk_of(args)
    try:
        settings = ServerSettings(
            desk=desk.name,
            policy=args.policy,
            faults=args.faults,
            model_errors=args.model_errors,
            seed=args.seed,
            stall=args.stall,
            retry_after=args.retry_after,
            delay=args.delay,
            context_window=args.context_window,
        )
        serve_forever(settings, args.port, announce=lambda text: print(text, file=sys.stderr, flush=True))
    except ValueError as exc:  # an unknown policy, a share out of [0, 1]: the command line's
        raise UsageError(f"batchgate serve: {exc}") from None
    except PortBusy as exc:
        raise SystemExit(f"batchgate serve: {exc}") from None
    except KeyboardInterrupt:
        print("batchgate serve: stopped", file=sys.stderr)
    return 0
