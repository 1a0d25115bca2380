"""The ``sqlite`` store: the kernel's guarded SQLite over the dataset, read-only.

The kernel's :class:`~batchgate_gym.kernel.sqlguard.SqlGuard` (authorizer, VM-step and
memory budgets, clock-free) over one in-memory copy of the dataset per store, or, for
TPC-H, the dataset's database file on disk opened read-only (at SF 1 a gigabyte, over
SQLite's heap limit as an image). The work budget is counted in VM steps, so what stops
a query is the same on any machine; its budgets grow with a TPC-H dataset
(:func:`~.base.budget_scale`).
"""

from __future__ import annotations

import dataclasses
import functools
import sqlite3
from typing import Any

from batchgate_gym.kernel import sqlite_image
from batchgate_gym.kernel.sqlguard import SqlBudget, SqlGuard, SqlRefused

from ..datasets.canonical import dataset_dir, fill_sqlite, table_names, tables_of
from ..datasets.market import DataSpec
from .base import SAFETY_NET_SECONDS, StoreFailure, StoreRefused, StoreResult, budget_scale, plain_cell

SQLITE_BUDGET = SqlBudget(
    max_steps=20_000_000,
    max_action_steps=60_000_000,
    max_seconds=SAFETY_NET_SECONDS,
    # what the step count cannot see (one LIKE over a long text): careful's heaviest query
    # takes a tenth of this, the rest of its queries far less
    max_cpu_seconds=2.0,
    max_action_cpu_seconds=6.0,
)


def sqlite_budget(spec: DataSpec, seconds: float | None = None) -> SqlBudget:
    """The SQLite store's budget over ``spec``: every counted limit and the safety net times
    :func:`budget_scale`; ``seconds``, if given, is one query's CPU budget (three for an action)."""
    scale = budget_scale(spec)
    base = SQLITE_BUDGET
    budget = dataclasses.replace(
        base,
        max_steps=int(base.max_steps * scale),
        max_action_steps=int(base.max_action_steps * scale),
        max_seconds=base.max_seconds * scale,
        max_cpu_seconds=base.max_cpu_seconds * scale,
        max_action_cpu_seconds=base.max_action_cpu_seconds * scale,
        max_memory_bytes=int(base.max_memory_bytes * scale),
    )
    if seconds is None:
        return budget
    return dataclasses.replace(budget, max_cpu_seconds=seconds, max_action_cpu_seconds=3 * seconds)


@functools.lru_cache(maxsize=16)
def sqlite_image_of(spec: DataSpec, visible: tuple[str, ...] | None = None) -> bytes:
    """The dataset's ``visible`` tables (all by default) as a serialized SQLite database, built once per process."""
    conn = sqlite_image.open_connection()
    try:
        fill_sqlite(conn, tables_of(spec), table_names(spec) if visible is None else visible)
        return conn.serialize()
    finally:
        conn.close()


def sqlite_connection(spec: DataSpec, visible: tuple[str, ...] | None) -> sqlite3.Connection:
    """A connection to the dataset for one store: TPC-H's database file opened read-only (at
    SF 1 it is a gigabyte, over SQLite's heap limit as an image), else a copy of its image."""
    if spec.tpch is None:
        return sqlite_image.connection_from(sqlite_image_of(spec, visible))
    if visible not in (None, table_names(spec)):
        raise ValueError("a TPC-H sqlite store serves every table of its dataset")
    path = dataset_dir(spec, "sqlite") / "store.sqlite"
    # immutable: the file never changes once renamed into place, so no lock and no journal
    return sqlite3.connect(
        f"{path.as_uri()}?mode=ro&immutable=1",
        uri=True,
        isolation_level=None,
        cached_statements=0,
        check_same_thread=False,
    )


class SqliteStore:
    """The kernel's guarded SQLite over an in-memory copy of the dataset."""

    name = "sqlite"

    def __init__(
        self, spec: DataSpec, visible: tuple[str, ...] | None = None, seconds: float | None = None
    ) -> None:
        try:
            conn = sqlite_connection(spec, visible)
            self.guard = SqlGuard(conn, sqlite_budget(spec, seconds), deterministic=True)
        except Exception as exc:
            raise StoreFailure(f"sqlite store could not start: {type(exc).__name__}") from None

    def tables(self) -> list[str]:
        rows = self.guard.conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        return [row[0] for row in rows]

    def describe(self, table: str) -> dict[str, Any]:
        if table not in self.tables():
            raise StoreRefused(f"no table {table!r}")
        conn = self.guard.conn
        columns = [[r[1], r[2]] for r in conn.execute(f"PRAGMA table_info({table})")]
        count = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        return {"table": table, "columns": columns, "rows": count}

    def run(self, query: str) -> StoreResult:
        try:
            result = self.guard.run(query)
        except SqlRefused as exc:
            raise StoreRefused(str(exc)) from None
        rows = [[plain_cell(v) for v in row] for row in result.rows]
        return StoreResult(result.columns, rows, result.truncated, result.tables_read)

    def begin_action(self) -> None:
        self.guard.begin_action()

    def close(self) -> None:
        self.guard.conn.close()


__all__ = ["SQLITE_BUDGET", "SqliteStore", "sqlite_budget", "sqlite_connection", "sqlite_image_of"]
