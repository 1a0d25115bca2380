"""Progress bars for whatever plays long enough to want one (``evaluate``, the commands).

One rule for all of them: a tqdm bar on stderr (stdout stays the tables or JSON a
command prints), shown only after two seconds, so a quick run prints nothing, and never
when it is switched off (``progress=False``, a command's ``--quiet``), when stderr is
not a terminal (a pipe, a log file, a test capturing it), or when
``BATCHGATE_NO_PROGRESS=1`` is set.
"""

from __future__ import annotations

import os
import sys
from typing import Any

SHOWN_AFTER_SECONDS = 2.0


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
