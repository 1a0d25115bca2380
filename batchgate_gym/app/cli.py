"""The ``batchgate`` command (also ``python -m batchgate_gym``).

Each subcommand lives in its own module of this package (``-`` in its name
written ``_``), exposing
``add_arguments(parser)`` and ``run(args) -> int``; a module that is not there
yet simply does not appear. Every subcommand takes ``--desk NAME`` (a desk of
:mod:`.desks`, the gate by default); a desk that lacks what a command needs
makes it stop with a message and exit status 1. The desks' environment options
(``--rules``, ``--recovery``) belong to the commands that play a desk's own
environment (a module setting ``TAKES_DESK_OPTIONS``); anywhere else argparse
refuses them, rather than the command running without them.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from .desks import CaseSourceError
from .shared import add_desk_env_options, add_desk_option

SUBCOMMANDS = {
    "report": "compare policies over a split or a case file",
    "attacks": "the attacker table against careful",
    "bench": "speed benchmark",
    "play": "play a case yourself in the terminal",
    "team": "the multi-agent (PettingZoo) team table",
    "serve": "a local chat-completions server playing a scripted policy",
    "run-model": "play a desk with a model behind a chat-completions API",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="batchgate", description="BadBatchGate: gate a nightly warehouse load."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in SUBCOMMANDS.items():
        module_name = f"batchgate_gym.app.{name.replace('-', '_')}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        command = sub.add_parser(
            name, help=help_text, description=(module.__doc__ or help_text).strip().splitlines()[0]
        )
        add_desk_option(command)
        if getattr(module, "TAKES_DESK_OPTIONS", False):
            add_desk_env_options(command)
        module.add_arguments(command)
        command.set_defaults(handler=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except CaseSourceError as exc:  # a mistyped split or a bad case file: the reason, not a traceback
        raise SystemExit(f"batchgate {args.command}: {exc}") from None


if __name__ == "__main__":
    sys.exit(main())
