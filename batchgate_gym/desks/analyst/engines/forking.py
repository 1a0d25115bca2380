"""The analyst desk and ``fork``: a clear error instead of a hang.

polars runs its work on a thread pool it starts once per process, and chDB runs
a whole engine of threads; neither survives ``fork`` (the child inherits the
pool's state without its threads, and its first polars or chDB call waits
forever). Python's default start method on Linux is ``fork``, so a vector of
environments built after the parent played one analyst episode would hang. The
desk records the process it first worked in; a process forked after that refuses
to build or open a case, and says how to start workers instead. A child forked
before the parent's first analyst episode works as any process does.
"""

from __future__ import annotations

import os

_FIRST_PID: list[int] = []


class ForkedAfterStartError(RuntimeError):
    """This process was forked after the analyst desk had started polars or chDB in its parent."""


def enter() -> None:
    """Mark this process as one the desk works in; :class:`ForkedAfterStartError` in a late fork."""
    if not _FIRST_PID:
        _FIRST_PID.append(os.getpid())
    elif _FIRST_PID[0] != os.getpid():
        raise ForkedAfterStartError(
            "this process was forked after its parent had started the analyst desk's engines (polars, chDB), "
            "whose threads do not survive fork: create the environments before the parent's first analyst "
            "episode, or start worker processes with 'spawn' or 'forkserver' "
            "(e.g. AsyncVectorEnv(fns, context='spawn'))"
        )


__all__ = ["ForkedAfterStartError", "enter"]
