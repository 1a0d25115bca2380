"""What several commands share: the ``--desk``, case-source, ``--quiet`` and Ray options,
and the JSON every result command prints (the play loop itself is
:mod:`batchgate_gym.evaluation`'s)."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Sequence
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import DEFAULT_DESK
from batchgate_gym.evaluation.ray_backend import BACKENDS, NODES, ensure_ray


class UsageError(SystemExit):
    """A mistake on the command line (a file or folder that is not there, a name that is not
    known, an option the desk has not): the command stops before any work with one line
    naming it, and exit status 2, as argparse's own refusals. :func:`.cli.main` prints the
    line; a failure met while working (a server that is down, a policy that raises) is a
    plain ``SystemExit(message)``, exit status 1."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.code = 2


def int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: an integer from ``low`` to ``high`` (no upper end if None); any
    other text is refused by argparse with the bounds, before the command does any work."""
    bounds = f"{low}..{high}" if high is not None else f"{low} or more"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be an integer {bounds}, not {value}")
        return value

    return parse


def probability(text: str) -> float:
    """An argparse ``type``: a number in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1], not {text}")
    return value


def add_desk_option(parser: argparse.ArgumentParser) -> None:
    """``--desk NAME``: which desk the command plays (choices: every registered desk)."""
    parser.add_argument(
        "--desk",
        default=DEFAULT_DESK,
        choices=registry.names(),
        help="the desk to play (batchgate --help lists them)",
    )


def desk_of(args: argparse.Namespace) -> registry.DeskSpec:
    return registry.get(getattr(args, "desk", DEFAULT_DESK))


def add_desk_env_options(
    parser: argparse.ArgumentParser,
    desk: str = DEFAULT_DESK,
    taken: Callable[[str], Sequence[str] | None] | None = None,
) -> None:
    """Every registered desk's environment options (``--rules`` ...), as ``--NAME VALUE``
    (read from the registrations: declaring them builds no desk). ``--help`` shows those of
    ``desk`` (the one the command line names) that the command takes there (``taken(desk)``,
    when the command says: the team game takes fewer) and, at its end, how to see the other
    desks'; they parse all the same, to be refused with the reason (:func:`env_kwargs`, the
    command's ``unused_options``)."""
    elsewhere: dict[str, list[str]] = {}
    own = [option for option in registry.all_options() if desk in registry.having_option(option)]
    takes = None if taken is None or not own else taken(desk)  # a desk without options is not built
    for option in registry.all_options().values():
        having = registry.having_option(option.name)
        flag = f"--{option.name.replace('_', '-')}"
        shown = f"{option.help} (the {' and '.join(having)} desk only; default: {option.default!r})"
        applies = desk in having and (takes is None or option.name in takes)
        parser.add_argument(
            flag,
            dest=option.name,
            choices=option.choices,
            default=None,  # not given: the desk's own default, and no desk is refused for it
            help=shown if applies else argparse.SUPPRESS,
        )
        if desk not in having:
            for name in having:
                elsewhere.setdefault(name, []).append(flag)
    # The flags of another desk, where the command takes them all there (that desk is not built to ask).
    lines = [
        f"  {parser.prog} --desk {name} --help" + ("" if taken else f": {', '.join(flags)}")
        for name, flags in elsewhere.items()
    ]
    if lines:  # a list under its heading: the help formatter keeps its lines as written
        parser.epilog = "\n".join(["options of other desks:", *lines])


def env_kwargs(args: argparse.Namespace, desk: registry.DeskSpec, cases: Any = None) -> dict[str, Any]:
    """The desk's environment keywords from the command line, parsed; an option it lacks, one
    that shapes procedural cases given with fixed ``cases``, or options its environment
    refuses together, end the command with the reason."""
    known = registry.all_options()
    given = {name: value for name, value in vars(args).items() if value is not None and name in known}
    own = {option.name: option for option in desk.options}
    command = f"batchgate {getattr(args, 'command', 'run')}"
    stray = sorted(set(given) - set(own))
    if stray:
        having = " and ".join(registry.having_option(stray[0]))
        raise UsageError(
            f"{command}: the {desk.name} desk has no option --{stray[0].replace('_', '-')}"
            f" (the {having} desk has)"
        )
    parsed = {name: own[name].parse(value) for name, value in given.items()}
    shaping = [name for name, value in given.items() if own[name].draws and value != own[name].default]
    if shaping and cases is not None:
        raise UsageError(
            f"{command}: --{shaping[0].replace('_', '-')} shapes the procedural cases drawn (play without"
            " --case, --cases or --split; attacks --seeds), not fixed cases"
        )
    if parsed:
        try:  # refused here, with the reason, rather than in every episode's worker
            desk.make_env(cases, **parsed).close()
        except ValueError as exc:
            raise UsageError(f"{command}: {exc}") from None
    return parsed


def split_options(options: dict[str, Any], desk: registry.DeskSpec) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(drawing, playing)``: the options that shape procedural cases as they are drawn, and
    the rest, for the environment that plays the drawn cases."""
    draws = {option.name for option in desk.options if option.draws}
    drawing = {name: value for name, value in options.items() if name in draws}
    return drawing, {name: value for name, value in options.items() if name not in draws}


def unsupported(command: str, desk: registry.DeskSpec, what: str) -> SystemExit:
    """The error a command raises for a desk that lacks what it needs (exit status 1)."""
    return SystemExit(f"batchgate {command}: the {desk.name!r} desk has no {what}")


def add_case_source(
    parser: argparse.ArgumentParser, default: str = "eval"
) -> argparse._MutuallyExclusiveGroup:
    """``--cases PATH`` or ``--split NAME`` (every command that plays fixed cases)."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--cases", help="a JSONL file of cases")
    source.add_argument(
        "--split",
        help=f"a named split of the desk (eval, train, ...; a name it lacks is answered with its splits); {default} when none is given",
    )
    return source


def dumps(value: Any) -> str:
    """The JSON a result command prints."""
    return json.dumps(value, indent=1, sort_keys=True)


def add_quiet_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--quiet",
        "--no-progress",
        dest="quiet",
        action="store_true",
        help="no progress bar on stderr (there is none either when stderr is not a terminal)",
    )


def add_backend_options(parser: argparse.ArgumentParser) -> None:
    """``--backend`` and ``--ray-address``, for a command that plays many episodes."""
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="where episodes run: this machine (local, the default) or a Ray cluster (ray)",
    )
    parser.add_argument(
        "--ray-address",
        metavar="HOST:PORT",
        help="with --backend ray: the cluster's head (default: RAY_ADDRESS, else a local Ray)",
    )


def check_backend_options(backend: str, ray_address: str | None, command: str) -> None:
    """Refuse ``--ray-address`` without ``--backend ray``; join the cluster up front with it."""
    if ray_address is not None and backend != "ray":
        raise UsageError(f"batchgate {command}: --ray-address is used with --backend ray")
    if backend == "ray":
        try:
            ensure_ray(ray_address)
        except ImportError as exc:
            raise UsageError(f"batchgate {command}: {exc}") from None
        except Exception as exc:  # Ray's own errors (no cluster there, a token refused) in one line
            where = ray_address or os.environ.get("RAY_ADDRESS") or "a local Ray"
            raise SystemExit(
                f"batchgate {command}: cannot join the Ray cluster at {where}: {exc} (a cluster started"
                " with RAY_AUTH_MODE=token needs it set here too)"
            ) from None


def nodes_line(command: str) -> str:
    """What a command says, on standard error, of where its Ray tasks ran."""
    tasks = sum(NODES.values())
    return f"batchgate {command}: {tasks} Ray tasks ran on {len(NODES)} node{'s' if len(NODES) != 1 else ''}"
