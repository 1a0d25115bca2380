"""Progress bars for the commands that can run longer than a few seconds.

One rule for all of them: a tqdm bar on stderr (stdout stays the tables or JSON a
command prints), shown only after two seconds, so a quick run prints nothing, and never
when the command is given ``--quiet``, when stderr is not a terminal (a pipe, a log
file, a test capturing it), or when ``BATCHGATE_NO_PROGRESS=1`` is set.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

SHOWN_AFTER_SECONDS = 2.0


def add_quiet_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--quiet",
        "--no-progress",
        dest="quiet",
        action="store_true",
        help="no progress bar on stderr (there is none either when stderr is not a terminal)",
    )


def wanted(enabled: bool = True) -> bool:
    """Whether a bar may be drawn: asked for, on a terminal, not switched off by the environment."""
    return enabled and os.environ.get("BATCHGATE_NO_PROGRESS") != "1" and sys.stderr.isatty()


def bar(total: int | None, label: str, *, enabled: bool = True, unit: str = "ep") -> Any:
    """A tqdm bar over ``total`` items (a context manager; ``update(n)`` as they finish)."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=label,
        unit=unit,
        disable=not wanted(enabled),
        leave=False,
        file=sys.stderr,
        delay=SHOWN_AFTER_SECONDS,
    )
