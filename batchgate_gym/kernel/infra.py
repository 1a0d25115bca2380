"""Infrastructure failures: the machine, not the agent, stopped the work.

A score may depend only on what the agent did, never on how busy the machine was.
So the budgets that decide what an agent's query did are counted in deterministic
units (SQLite's VM steps, rows, bytes) or, where an engine offers nothing else, in
CPU time of the query's own thread (a paused process spends none, and a contended
one spends about the same). The wall clock still bounds every query, but only as a
safety net far above any honest query: when it fires, the machine was stalled or
overloaded, and the work ends with :class:`InfraFailure`.

An :class:`InfraFailure` is never the agent's failure. The kernel's episode ends on
one (the log is sealed with a reason starting :data:`INFRA_SEAL`), the environment
sets it apart (``info["infra_error"]``, no reward earned or lost), and a log
sealed that way has no score to replay (:func:`check_scorable`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

INFRA_NOTE = "infra: "  # how a log entry's note marks a call the machine stopped
INFRA_SEAL = "infra error: "  # how the seal's reason marks an episode the machine stopped


class InfraFailure(Exception):
    """The machine stopped the work (a safety net fired): an infrastructure error, never the agent's."""


@dataclass(frozen=True, slots=True)
class Clocks:
    """Two readings of the same moment: the wall clock and a thread's CPU clock."""

    wall: float
    cpu: float


class ThreadClock:
    """The CPU time of one thread, readable from any thread (a watchdog's, say).

    Where the platform has no per-thread CPU clock (``time.pthread_getcpuclockid``
    is POSIX), the process's CPU time stands in: with one query at a time, it is
    that query's thread's time plus the interpreter's own.
    """

    __slots__ = ("_clock",)

    def __init__(self, thread_id: int | None = None) -> None:
        ident = threading.get_ident() if thread_id is None else thread_id
        try:
            self._clock: int | None = time.pthread_getcpuclockid(ident)
        except (AttributeError, OSError):
            self._clock = None

    def cpu(self) -> float:
        if self._clock is None:
            return time.process_time()
        return time.clock_gettime(self._clock)

    def now(self) -> Clocks:
        return Clocks(time.perf_counter(), self.cpu())


def sealed_as_infra(entries: Sequence[Mapping[str, Any]]) -> str | None:
    """The seal's reason if an exported log ended in an infrastructure error, else ``None``."""
    if not entries:
        return None
    last = entries[-1]
    args = last.get("args") if isinstance(last, Mapping) else None
    reason = args.get("reason") if isinstance(args, Mapping) else None
    if isinstance(reason, str) and reason.startswith(INFRA_SEAL):
        return reason
    return None


def check_scorable(entries: Sequence[Mapping[str, Any]]) -> None:
    """Raise :class:`InfraFailure` if the log ended in an infrastructure error: it has no score."""
    reason = sealed_as_infra(entries)
    if reason is not None:
        raise InfraFailure(f"the episode ended in an infrastructure error and has no score ({reason})")


__all__ = [
    "INFRA_NOTE",
    "INFRA_SEAL",
    "Clocks",
    "InfraFailure",
    "ThreadClock",
    "check_scorable",
    "sealed_as_infra",
]
