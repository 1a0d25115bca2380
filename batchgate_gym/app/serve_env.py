"""``batchgate serve-env``: a desk as a network environment, one episode per session.

``--protocol openenv`` (the default) serves OpenEnv's WebSocket protocol at
``ws://127.0.0.1:PORT/ws`` on the ``openenv`` package's own server; ``--protocol
mcp`` serves the desk's tools over MCP's streamable HTTP at
``http://127.0.0.1:PORT/mcp`` on the ``mcp`` SDK. Each session is one desk
episode, the same as ``gymnasium.make`` would play: its reset takes a seed, a
case id or index and a split (``--split`` or ``--cases`` fixes the server's
cases; without them cases are drawn from the seed, shaped by the desk's
options). A session ends when its connection closes or after ``--idle-timeout``
seconds without a request; past ``--max-sessions`` live sessions a new one is
refused with a clear error. ``--sign-key KEY`` (from ``batchgate keygen``) signs
every ended episode's result: the client receives its certificate with the score. ``--port 0`` takes a free port. Serves until
interrupted; the address goes to standard error once it accepts connections. See
:mod:`batchgate_gym.serving`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .shared import add_case_source, desk_of, env_kwargs, int_in

TAKES_DESK_OPTIONS = True  # plays the desk's environment: --rules, --recovery, ... apply
DEFAULT_MAX_SESSIONS = 256
DEFAULT_IDLE_TIMEOUT = 600.0


def positive_seconds(text: str) -> float:
    """An argparse ``type``: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from batchgate_gym.serving.running import PROTOCOLS

    add_case_source(parser, default="procedural cases")
    parser.add_argument(
        "--port", type=int_in(0, 65_535), default=8000, help="port on 127.0.0.1 (0: any free)"
    )
    parser.add_argument("--protocol", choices=PROTOCOLS, default="openenv", help="openenv (default) or mcp")
    parser.add_argument(
        "--idle-timeout",
        type=positive_seconds,
        default=DEFAULT_IDLE_TIMEOUT,
        help=f"seconds a session may go without a request before it is closed (default {DEFAULT_IDLE_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-sessions",
        type=int_in(1, 100_000),
        default=DEFAULT_MAX_SESSIONS,
        help=f"live sessions at most; more are refused (default {DEFAULT_MAX_SESSIONS})",
    )
    add_sign_key_option(parser)


def catalog_of(args: argparse.Namespace) -> object:
    """The desk, cases and options the command line names, checked before anything listens."""
    from batchgate_gym.serving.episodes import DeskCatalog

    desk = desk_of(args)
    source = args.cases or args.split
    cases = desk.fixed_cases(args.cases, args.split) if source else None
    return DeskCatalog(
        desk.name,
        source,
        env_kwargs(args, desk, cases),
        signer=signer_of(args.sign_key, "serve-env"),
        protocol=args.protocol,
    )


def add_sign_key_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sign-key",
        metavar="KEY",
        help="an Ed25519 private key (batchgate keygen): every ended episode's result is signed with it",
    )


def signer_of(path: str | None, command: str) -> Any:
    """The ``--sign-key`` key at ``path``, loaded before anything listens (None without one)."""
    if path is None:
        return None
    from batchgate_gym.kernel.certificate import CertificateError, Signer

    try:
        return Signer.load(path)
    except CertificateError as exc:
        raise SystemExit(f"batchgate {command}: --sign-key: {exc}") from None


def run(args: argparse.Namespace) -> int:
    from batchgate_gym.serving.running import build, serve

    catalog = catalog_of(args)
    app, path = build(args.protocol, catalog, max_sessions=args.max_sessions, idle_timeout=args.idle_timeout)
    scheme = "ws" if args.protocol == "openenv" else "http"

    def announce(port: int) -> None:
        print(
            f"batchgate serve-env: the {args.desk} desk over {args.protocol} at {scheme}://127.0.0.1:{port}/{path}"
            f" (at most {args.max_sessions} sessions, idle timeout {args.idle_timeout:g} s)",
            file=sys.stderr,
            flush=True,
        )

    try:
        serve(app, args.port, announce)
    except ValueError as exc:
        raise SystemExit(f"batchgate serve-env: {exc}") from None
    return 0
