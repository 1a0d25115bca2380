"""How figures are timed: clocks, repeated runs and their medians, one pinned core, the machine."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sqlite3
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any


def median_rate(runs: Sequence[float], count: int) -> float:
    """Per-second rate from the median duration of runs of ``count`` items each."""
    return count / statistics.median(runs)


CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = CLOCKS["wall"]


def use_clock(name: str) -> None:
    """``wall`` (default) or ``cpu``: this process's CPU time, steadier on a busy machine."""
    global _clock
    _clock = CLOCKS[name]


def timed_runs(
    function: Callable[[], Any], repeats: int, clock: Callable[[], float] | None = None
) -> list[float]:
    """Seconds of ``repeats`` calls of ``function`` (after one warm-up call)."""
    clock = clock or _clock
    function()
    out = []
    for _ in range(repeats):
        start = clock()
        function()
        out.append(clock() - start)
    return out


@contextmanager
def one_core() -> Iterator[int | None]:
    """Pin this process to one core while measuring; yields the core or None."""
    getter = getattr(os, "sched_getaffinity", None)
    if getter is None:
        yield None
        return
    before = getter(0)
    core = max(before)
    os.sched_setaffinity(0, {core})
    try:
        yield core
    finally:
        os.sched_setaffinity(0, before)


def seconds(function: Callable[[], Any]) -> float:
    """Seconds of one call of ``function``, on the clock in use."""
    start = _clock()
    function()
    return _clock() - start


def library_versions(names: Sequence[str]) -> dict[str, str | None]:
    """The installed version of each distribution (``None``: not installed), for a result
    that depends on them: a training run's figures move with its libraries' versions."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or ``None`` where the platform has none: a
    figure taken on a busy machine says so."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(terse=True),
        "cpus": os.cpu_count(),
    }
