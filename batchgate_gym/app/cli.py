"""The ``batchgate`` command (also ``python -m batchgate_gym``).

Each subcommand lives in its own module of this package (``-`` in its name
written ``_``), exposing
``add_arguments(parser)`` and ``run(args) -> int``; a module that is not there
yet simply does not appear. Every subcommand takes ``--desk NAME`` (a desk of
:mod:`.desks`, the gate by default); a desk that lacks what a command needs
makes it stop with a message and exit status 1, and so does a desk whose
libraries come with an extra that is not installed (the message names it).
Building the parser builds no desk, so ``batchgate --help`` and every gate and
refund command run on the base install. A mistake on the command line (a missing
file, an unknown name) stops a command with one line and exit status 2; a failure
while it works (a policy that raises, a server that is down) with one line and exit
status 1; never with a traceback (``BATCHGATE_TRACEBACK=1`` shows one). ``view``, whose rows name their desk, sets
``TAKES_DESK = False`` and has no ``--desk``. The desks' environment options
(``--rules``, ``--recovery``) belong to the commands that play a desk's own
environment (a module setting ``TAKES_DESK_OPTIONS``); anywhere else argparse
refuses them, rather than the command running without them. A command's ``--help``
shows the options of the desk its ``--desk`` names (the gate's by default).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import sys
from collections.abc import Sequence

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import DEFAULT_DESK, CaseSourceError
from batchgate_gym.evaluation import PolicyError
from batchgate_gym.kernel.extras import DISTRIBUTION, MissingExtra, extra_providing, install_line

from .helptext import TerminalHelp, description
from .shared import UsageError, add_desk_env_options, add_desk_option, desk_of

SUBCOMMANDS = {
    "report": "compare policies over a split or a case file",
    "attacks": "the attacker table against careful",
    "audit": "every rule tested from both sides: census, ablations, grader mutations",
    "bench": "speed benchmark",
    "play": "play a case yourself in the terminal",
    "team": "the multi-agent (PettingZoo) team table",
    "serve": "a local chat-completions server playing a scripted policy",
    "run-model": "play a desk with a model behind a chat-completions API",
    "view": "result files as one self-contained HTML page: models, cases, conversations",
    "serve-env": "a desk as a network environment (OpenEnv or MCP), one episode per session",
    "mcp": "one episode of a desk as an MCP server over stdio",
    "keygen": "a new Ed25519 key pair for signing results",
    "verify": "check results files and their run against a public key",
}


def desks_text() -> str:
    """The top-level help's list of desks (read from the registry: no desk is built)."""
    described = registry.descriptions()
    width = max(map(len, described))
    lines = []
    for name, text in described.items():
        lines.append(f"  {name:<{width}}  {text}" + (" (the default)" if name == DEFAULT_DESK else ""))
        extra = registry.extra_of(name)
        if extra is not None:
            lines.append(f"  {'':<{width}}  needs the {extra} extra: {install_line(extra)}")
    return "desks (--desk NAME, on every command):\n" + "\n".join(lines)


def version() -> str:
    """The installed package's version (the source tree's own when it is not installed)."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        import batchgate_gym

        return batchgate_gym.__version__


def desk_named(argv: Sequence[str]) -> str:
    """The desk ``argv`` names with ``--desk``, for the options its help shows (the default
    desk when it names none, or one argparse will refuse)."""
    early = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    early.add_argument("--desk", default=DEFAULT_DESK)
    try:
        found, _ = early.parse_known_args(argv)
    except argparse.ArgumentError:
        return DEFAULT_DESK
    return found.desk if found.desk in registry.names() else DEFAULT_DESK


def build_parser(desk: str = DEFAULT_DESK) -> argparse.ArgumentParser:
    """Every command's parser; ``desk`` is the desk whose options each ``--help`` shows."""
    parser = argparse.ArgumentParser(
        prog="batchgate",
        description="Play, compare and measure the desks of batchgate_gym: tool-using agents"
        " graded from what they did, never from what they say.",
        epilog=desks_text() + "\n\nbatchgate COMMAND --help describes a command and its options.",
        formatter_class=TerminalHelp,
    )
    parser.add_argument("--version", action="version", version=f"batchgate {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_text in SUBCOMMANDS.items():
        module_name = f"batchgate_gym.app.{name.replace('-', '_')}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        command = sub.add_parser(
            name,
            help=help_text,
            description=description(module.__doc__, help_text),
            formatter_class=TerminalHelp,
        )
        if getattr(module, "TAKES_DESK", True):  # view reads the desk from its rows
            add_desk_option(command)
        if getattr(module, "TAKES_DESK_OPTIONS", False):
            add_desk_env_options(command, desk, getattr(module, "desk_options", None))
        module.add_arguments(command)
        command.set_defaults(handler=module.run, unused=getattr(module, "unused_options", None))
    return parser


def command_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser, by name."""
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(commands.choices)


def given_options(argv: Sequence[str]) -> set[str]:
    """The options ``argv`` gives explicitly (their ``dest``), told apart from defaults by
    parsing it again where no option has a default."""
    parser = build_parser()
    for command in command_parsers(parser).values():
        for action in command._actions:
            if action.option_strings:
                action.default = argparse.SUPPRESS
    found = vars(parser.parse_args(argv))
    return {name for name in found if name not in ("command", "handler", "unused")}


def refuse_unused(args: argparse.Namespace, argv: Sequence[str]) -> None:
    """Options given that the command would not use here (the command's ``unused_options``
    says which, and why) stop it before any work, each named with the reason."""
    if args.unused is None:
        return
    unused = args.unused(args, desk_of(args))
    refused = sorted(set(unused) & given_options(argv))
    if refused:
        option = "--" + refused[0].replace("_", "-")
        command = command_parsers(build_parser())[args.command]
        command.error(f"{option} is not used here: {unused[refused[0]]}")


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(desk_named(argv)).parse_args(argv)
    try:
        return run_command(args, argv)
    except UsageError as exc:  # exit status 2, as argparse's refusals: the line is said here
        print(exc, file=sys.stderr)
        raise


def run_command(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """The command's handler, every error it lets out said in one line (see the module's text)."""
    command = f"batchgate {args.command}"
    try:
        refuse_unused(args, argv)
        return int(args.handler(args) or 0)
    except (SystemExit, KeyboardInterrupt):
        raise
    except CaseSourceError as exc:  # a mistyped split or a bad case file: the reason, not a traceback
        raise UsageError(f"{command}: {exc}") from None
    except MissingExtra as exc:  # a desk whose extra is not installed: the line that installs it
        raise SystemExit(f"{command}: {exc}") from None
    except ModuleNotFoundError as exc:  # a library of an extra (the api extra's aiohttp, ...)
        extra = extra_providing(exc.name)
        hint = install_line(extra) if extra is not None else f"pip install {exc.name}"
        raise SystemExit(f"{command} needs {exc.name}, which is not installed: {hint}") from None
    except PolicyError as exc:  # a user's policy raised: which policy, which case, what it raised
        raise SystemExit(f"{command}: {exc}") from None
    except OSError as exc:
        if exc.filename is None:  # the network, the machine: a failure
            raise SystemExit(f"{command}: {exc.strerror or exc}") from None
        raise UsageError(f"{command}: {exc.filename}: {exc.strerror or exc}") from None
    except Exception as exc:
        if os.environ.get("BATCHGATE_TRACEBACK") == "1":
            raise
        raise SystemExit(
            f"{command} failed: {type(exc).__name__}: {exc} (BATCHGATE_TRACEBACK=1 shows where)"
        ) from None


if __name__ == "__main__":
    sys.exit(main())
