"""The stores an agent queries: each started by the environment, bounded, read-only by construction.

No result and no refusal depends on the clock or the machine's load, so that the
evidence a grader re-runs, live or in a replay, gives what the agent saw:

* the work budget is counted: SQLite's VM steps; for the DuckDB stores, which
  count nothing else, the CPU time of the query's own thread (the store runs one
  thread, a paused process spends none, a contended one about the same); the
  queries of one action share a budget too (``begin_action``); a TPC-H dataset
  above SF 0.1 gets budgets as many times larger (:func:`~.base.budget_scale`). A wall-clock limit
  far above any honest query is only a safety net: when it fires the store raises
  :class:`~batchgate_gym.kernel.infra.InfraFailure` and the episode ends as an
  infrastructure error;
* functions that read the clock, the time zone or a random source (``random()``,
  ``now()``, ``current_timestamp``, ``date('now')``, ``uuid()`` ...) and table
  samples are refused.

The stores, what each shares in :mod:`.base`:

* ``sqlite``: the kernel's guarded SQLite (:mod:`.sqlite_store`), one in-memory copy per
  episode (TPC-H's database file on disk, opened read-only);
* ``duckdb``: the dataset's DuckDB database file opened ``read_only`` (:mod:`.duck_store`);
* ``lake``: the Parquet copy, as views in an in-memory DuckDB;
* ``files``: the raw CSV and JSON files, as typed views in an in-memory DuckDB;
* ``iceberg`` (optional extra): Apache Iceberg tables in a SQL catalog, the data files
  pyiceberg's scan plans read as views in an in-memory DuckDB;
* ``chdb`` (optional extra): ClickHouse in the process (:mod:`.chdb_store`);
* ``postgres``: a PostgreSQL server the desk starts, a read-only role (:mod:`.postgres_store`).

The optional stores' modules are imported when one is opened: chDB's engine and the
PostgreSQL client stay out of a process that never asks for them.
"""

from __future__ import annotations

from ..datasets.canonical import table_names
from ..datasets.market import DataSpec
from .base import Store
from .duck_store import DuckStore
from .sqlite_store import SqliteStore

STORES = ("sqlite", "duckdb", "lake", "files")
# Stores never drawn for a procedural case or the eval and train splits' single-store
# cases, asked for by name (the ``chdb``, ``postgres`` and ``iceberg`` splits): chDB and
# pyiceberg are behind optional extras, and the postgres store starts a server.
OPTIONAL_STORES = ("chdb", "postgres", "iceberg")


def open_store(
    kind: str, spec: DataSpec, visible: tuple[str, ...] | None = None, seconds: float | None = None
) -> Store:
    """A fresh store of ``kind`` over ``spec``'s ``visible`` tables; :class:`StoreFailure` if it cannot start.

    The ``duckdb`` store's database file holds every table, so it serves the whole dataset only.
    """
    if kind == "sqlite":
        return SqliteStore(spec, visible, seconds)
    if kind == "chdb":
        from .chdb_store import ChdbStore

        if visible not in (None, table_names(spec)):
            raise ValueError("the chdb store serves every table of its dataset")
        return ChdbStore(spec, seconds)
    if kind == "postgres":
        from .postgres_store import PostgresStore

        return PostgresStore(spec, visible, seconds)
    if kind == "duckdb" and visible not in (None, table_names(spec)):
        raise ValueError("the duckdb store serves every table of its dataset")
    if kind in STORES or kind == "iceberg":
        return DuckStore(kind, spec, visible, seconds)
    raise ValueError(f"unknown store {kind!r}")


__all__ = ["OPTIONAL_STORES", "STORES", "open_store"]
