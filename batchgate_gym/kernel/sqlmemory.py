"""What the guard's memory budget counts, and SQLite's heap limit for the whole process.

A query's memory is counted by SQLite's own count of the bytes its allocator holds
(:data:`MEMORY_COUNT`): the same for the same query over the same data, whatever the
process did before. Where that count cannot be read, the process's resident memory
stands in (:func:`resident_bytes`). SQLite's hard heap limit belongs to the whole
process, so no budget carries it: it is set once, to :data:`PROCESS_HEAP_LIMIT_BYTES`,
when the first guard is built (:func:`apply_process_heap_limit`), and lowered only on
purpose, with :func:`set_process_heap_limit`.
"""

from __future__ import annotations

import ctypes
import os
import resource
import sqlite3
import sys
from collections.abc import Callable

PROCESS_HEAP_LIMIT_BYTES = 1 << 30
"""SQLite's hard heap limit for this process, set when the first guard is built.

The limit is SQLite's ceiling on its own allocations, across every connection in
the process, and a pragma can lower it but never raise it. A per-budget setting
would let a second environment with a smaller one silently shrink the first's, so
it is a process setting instead: applied once, and changed only through
:func:`set_process_heap_limit`.
"""
_process_heap = {"applied": False}


def set_process_heap_limit(limit_bytes: int) -> int:
    """Lower SQLite's hard heap limit for the whole process, deliberately; return the limit now.

    Every connection and every environment in the process shares the new limit, and
    it stays for the life of the process: SQLite only ever lowers it, so a request
    above the limit already in force changes nothing. Called before the first guard
    is built, it replaces :data:`PROCESS_HEAP_LIMIT_BYTES` (a larger value is then
    kept too); the first guard no longer applies the default.
    """
    if int(limit_bytes) <= 0:
        raise ValueError("the heap limit must be a positive number of bytes")
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(f"PRAGMA hard_heap_limit={int(limit_bytes)}")
        limit = int(conn.execute("PRAGMA hard_heap_limit").fetchone()[0])
    finally:
        conn.close()
    _process_heap["applied"] = True
    return limit


def apply_process_heap_limit(conn: sqlite3.Connection) -> None:
    """Set the default heap limit through ``conn`` unless a limit was set already (the first guard calls it)."""
    if not _process_heap["applied"]:
        conn.execute(f"PRAGMA hard_heap_limit={int(PROCESS_HEAP_LIMIT_BYTES)}")
        _process_heap["applied"] = True


def _sqlite_memory_used() -> Callable[[], int] | None:
    """SQLite's ``sqlite3_memory_used()``, from the library this process's ``sqlite3``
    module runs on, or ``None`` where it cannot be reached or does not count.

    The count is SQLite's own: every byte its allocator holds, across the process's
    connections. Unlike the process's resident memory it does not depend on what else
    the process did before (a heap left with freed blocks by earlier work lets a query
    grow without the resident figure moving). The probe checks that the function found
    is the one this module's connections allocate through: a build with memory status
    compiled out, or another copy of the library, would count nothing.
    """
    try:
        import _sqlite3

        used = ctypes.CDLL(_sqlite3.__file__).sqlite3_memory_used
    except (ImportError, OSError, AttributeError):  # a static build with no exported symbol, say
        return None
    used.restype, used.argtypes = ctypes.c_int64, []
    probe = sqlite3.connect(":memory:")
    try:
        before = used()
        probe.execute("CREATE TABLE probe (x)")
        probe.execute("INSERT INTO probe VALUES (?)", (bytes(1 << 16),))
        grew = used() - before >= 1 << 16
    finally:
        probe.close()
    return (lambda: int(used())) if grew else None


def resident_bytes() -> int:
    """This process's resident memory now (Linux), else its peak so far.

    ``/proc/self/statm`` is opened once per process and re-read from its start on
    every call (a fresh open costs several times the read). The descriptor is keyed
    by process id: after a fork (vector environments) an inherited one would describe
    the parent, so the child opens its own.
    """
    try:
        return int(os.pread(_statm_descriptor(), 128, 0).split()[1]) * _PAGE_BYTES
    except (OSError, IndexError, ValueError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


_statm: dict[str, int] = {}  # "pid" and "fd" of the process that opened it


def _statm_descriptor() -> int:
    pid = os.getpid()
    if _statm.get("pid") != pid:
        if "fd" in _statm:
            os.close(_statm.pop("fd"))  # the parent's, inherited through fork
        _statm["fd"] = os.open("/proc/self/statm", os.O_RDONLY)
        _statm["pid"] = pid
    return _statm["fd"]


_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

_SQLITE_MEMORY_USED = _sqlite_memory_used()
MEMORY_COUNT = "sqlite" if _SQLITE_MEMORY_USED is not None else "resident"
"""What the memory budget counts: ``"sqlite"``, SQLite's own count of the bytes it
holds (the same for the same query over the same data, whatever the process did
before, up to the few kilobytes SQLite keeps in per-connection pools), or, where that
count cannot be read, ``"resident"``, the process's resident memory, which earlier work
in the process moves (freed blocks the heap keeps let a query grow unseen)."""
memory_now: Callable[[], int] = _SQLITE_MEMORY_USED or resident_bytes
"""The bytes :data:`MEMORY_COUNT` counts, now."""
