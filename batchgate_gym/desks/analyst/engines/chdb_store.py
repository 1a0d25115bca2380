"""The optional ``chdb`` store: ClickHouse embedded in the process, read-only by its own settings.

chDB runs one ClickHouse engine per process, shared by every connection; settings
belong to a connection. Each dataset is loaded once per process from the case's
Parquet copy into its own database of in-memory tables (the eight datasets opened
last stay loaded; a store still open on one dropped fails as infrastructure). Each
store is a fresh connection that selects that database, fixes its limits (one
thread, a memory budget, at most :data:`CHDB_ROWS_READ` rows read from tables and
as many in any join, sort, grouping or set, at most 51 result rows, UTC as the
session's time zone, standard NULLs for outer joins and empty aggregates, no
spilling to disk) and then sets ``readonly=1``, after which no setting can change:
no write, no table function (``file``, ``url``, ``s3``, ``remote`` ... are refused
by the engine itself). The engine counts those limits in rows and bytes, so what
stops a query is the same on any machine; its wall-clock limit is only a safety
net far above any honest query (:data:`CHDB_SECONDS`), and a query it stops
raises :class:`~batchgate_gym.kernel.infra.InfraFailure`, an infrastructure
error. Functions that read the clock, the server or chance (``now()``,
``today()``, ``rand()``, ``generateUUIDv4()`` ...) are refused.

Before a query runs, ClickHouse's own parse tree must show exactly one SELECT with
no ``SETTINGS``, ``FORMAT`` or ``INTO OUTFILE`` (read-only mode does not stop
``INTO OUTFILE`` writing a file), and its analysed query tree must read only the
case's tables, call no table function, and call only functions on chDB's
allow-list (:data:`.function_lists.CHDB`): the aggregates and window functions
(read without their combinators: ``sumIf`` is ``sum``), and the ordinary functions
that compute on values (arithmetic, strings, dates, arrays, JSON, ...). Anything
else is refused, a function the list has never heard of included: functions
that read files (``file`` reads any path even in read-only mode), reach a
network or an AI provider, read dictionaries or other tables (``joinGet``,
``hasColumnInTable``), or tell the host, the server's settings, paths or
version, or the query's id. The query tree names functions canonically
(``mod`` is ``modulo``), so an alias cannot slip past. What the query read
(``tables_read``) comes from that tree, CTEs resolved.

Without the ``analyst-chdb`` extra the store cannot start, and says which extra
to install.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from batchgate_gym.kernel.infra import InfraFailure

from ..datasets.canonical import dataset_dir, table_names
from ..datasets.market import DataSpec
from .base import (
    MAX_ROWS,
    ListedTables,
    StoreFailure,
    StoreRefused,
    StoreResult,
    budget_scale,
    first_line,
    query_text,
    shaped_result,
)
from .function_lists import CHDB, chdb_aggregate

EXTRA = "analyst-chdb"
CHDB_SECONDS = (
    60.0  # wall clock: a safety net only (an infrastructure error when it fires), times budget_scale
)
CHDB_MEMORY_BYTES = 128 * 1024 * 1024  # one query's, times budget_scale (a TPC-H join grows with it)
CHDB_ROWS_READ = 20_000_000  # rows read from tables, and rows held by one join, sort, grouping or set
# The aggregate function combinators (``If``, ``State`` ...), read from the engine once.
_COMBINATORS: list[frozenset[str]] = []
LOADED_DATASETS = 8  # datasets kept loaded in the process; the least recently opened is dropped
_LOADED: OrderedDict[str, None] = OrderedDict()
_LOAD_LOCK = threading.Lock()
# The connection that loads the datasets stays open for the process: the engine and
# its in-memory tables end with the last connection.
_LOADER: list[Any] = []
_TABLE = re.compile(r"^\s*TABLE id: \d+.*table_name: (\S+?)(?:,|$)")
_TABLE_FUNCTION = re.compile(r"table_function_name: (\w+)")
_FUNCTION = re.compile(r"function_name: (\w+), function_type: (\w+)")


def chdb_module() -> Any:
    """The ``chdb`` package, or :class:`StoreFailure` naming the extra that provides it."""
    try:
        import chdb
    except ImportError:
        raise StoreFailure(
            f"the chdb store needs the optional '{EXTRA}' extra: pip install 'batchgate-gym[{EXTRA}]'"
        ) from None
    return chdb


def combinators(con: Any) -> frozenset[str]:
    """The engine's aggregate function combinators (read once): ``sumIf`` is ``sum`` with ``If``."""
    if not _COMBINATORS:
        body = json.loads(
            con.query("SELECT name FROM system.aggregate_function_combinators", "JSONCompact").bytes()
        )
        _COMBINATORS.append(frozenset(str(row[0]) for row in body["data"]))
    return _COMBINATORS[0]


def database_name(spec: DataSpec) -> str:
    return "analyst_" + re.sub(r"[^A-Za-z0-9_]", "_", spec.key())


def _quoted(path: Path) -> str:
    return "'" + str(path).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _load(chdb: Any, spec: DataSpec) -> str:
    """The dataset's database in this process's engine, loaded from its Parquet copy once."""
    db = database_name(spec)
    with _LOAD_LOCK:
        if db in _LOADED:
            _LOADED.move_to_end(db)
            return db
        folder = dataset_dir(spec, "lake")
        if not _LOADER:
            _LOADER.append(chdb.connect(":memory:"))
        con = _LOADER[0]
        con.query(f"DROP DATABASE IF EXISTS {db}")
        con.query(f"CREATE DATABASE {db}")
        for name in table_names(spec):
            source = _quoted(folder / f"{name}.parquet")
            con.query(f"CREATE TABLE {db}.{name} ENGINE = Memory AS SELECT * FROM file({source}, Parquet)")
        _LOADED[db] = None
        while len(_LOADED) > LOADED_DATASETS:
            con.query(f"DROP DATABASE IF EXISTS {_LOADED.popitem(last=False)[0]}")
    return db


def _limits(seconds: float, memory: int) -> tuple[str, ...]:
    return (
        "max_threads = 1",
        f"max_memory_usage = {memory}",
        f"max_execution_time = {seconds:g}",
        "timeout_overflow_mode = 'throw'",
        f"max_rows_to_read = {CHDB_ROWS_READ}",
        f"max_rows_in_join = {CHDB_ROWS_READ}",
        f"max_rows_to_sort = {CHDB_ROWS_READ}",
        f"max_rows_to_group_by = {CHDB_ROWS_READ}",
        f"max_rows_in_set = {CHDB_ROWS_READ}",
        f"max_rows_in_distinct = {CHDB_ROWS_READ}",
        "session_timezone = 'UTC'",
        f"max_result_rows = {MAX_ROWS + 1}",
        "result_overflow_mode = 'break'",
        "join_use_nulls = 1",
        # the merge join keeps within the memory budget where the hash join's first
        # table already overshoots it; nothing spills to disk
        "join_algorithm = 'partial_merge'",
        "max_bytes_before_external_group_by = 0",
        "max_bytes_ratio_before_external_group_by = 0",
        "max_bytes_before_external_sort = 0",
        "max_bytes_ratio_before_external_sort = 0",
        "aggregate_functions_null_for_empty = 1",
        "output_format_json_quote_64bit_integers = 0",
        "output_format_json_quote_64bit_floats = 0",
        "output_format_json_quote_decimals = 0",
        "readonly = 1",
    )


class ChdbStore(ListedTables):
    """A read-only connection to the case's database in chDB's in-process ClickHouse."""

    name = "chdb"

    def __init__(self, spec: DataSpec, seconds: float | None = None) -> None:
        self._chdb = chdb_module()
        self.seconds = CHDB_SECONDS * budget_scale(spec) if seconds is None else seconds
        self.memory = int(CHDB_MEMORY_BYTES * budget_scale(spec))
        try:
            self.db = _load(self._chdb, spec)
            with _LOAD_LOCK:
                self._combinators = combinators(_LOADER[0])
            self._tables = tuple(sorted(table_names(spec)))
            self.con = self._connect()
        except StoreFailure:
            raise
        except Exception as exc:
            raise StoreFailure(
                f"chdb store could not start: {type(exc).__name__}: {first_line(exc)}"
            ) from None

    def _connect(self) -> Any:
        con = self._chdb.connect(":memory:")
        con.query(f"USE {self.db}")
        for setting in _limits(self.seconds, self.memory):
            con.query(f"SET {setting}")
        return con

    def _failed(self, exc: Exception) -> Exception:
        """The error to raise for a failed query; the connection is replaced, since chDB
        can hand a failed query's leftover output to the next one on the same connection."""
        error = self._classify(exc)
        try:
            self.con.close()
            self.con = self._connect()
        except Exception as again:
            return StoreFailure(f"chdb store failed: {first_line(again)}")
        return error

    def _columns_and_count(self, table: str) -> tuple[list[list[Any]], int]:
        try:
            columns = [[r["name"], r["type"]] for r in self._rows(f"DESCRIBE TABLE {table}")]
            count = self._rows(f"SELECT count() AS n FROM {table}")[0]["n"]
        except Exception as exc:  # chDB raises its own error class from several modules
            raise StoreFailure(f"chdb store failed: {first_line(exc)}") from None
        return columns, int(count)

    def run(self, query: str) -> StoreResult:
        sql = self._checked(query)
        tables = self._tables_read(sql)
        try:
            names, fetched = self._result(sql)
        except Exception as exc:  # chDB raises its own error class from several modules
            raise self._failed(exc) from None
        return shaped_result(names, fetched, tables)

    def _result(self, sql: str) -> tuple[list[str], list[list[Any]]]:
        """Column names and rows, read as JSON (chDB's Arrow output can carry a failed query's leftovers)."""
        body = json.loads(self.con.query(sql, "JSONCompact").bytes())
        return [str(m["name"]) for m in body["meta"]], list(body["data"])

    def _rows(self, sql: str) -> list[dict[str, Any]]:
        names, rows = self._result(sql)
        return [dict(zip(names, row, strict=True)) for row in rows]

    def _explain(self, kind: str, sql: str) -> list[str]:
        try:
            return [str(r["explain"]) for r in self._rows(f"EXPLAIN {kind} {sql}")]
        except Exception as exc:  # chDB raises its own error class from several modules
            raise self._failed(exc) from None

    def _checked(self, query: object) -> str:
        sql = query_text(query)
        if ";" in sql:
            raise StoreRefused("one statement at a time")
        ast = self._explain("AST", sql)
        if not ast or not ast[0].startswith("SelectWithUnionQuery (children 1)"):
            raise StoreRefused("only a plain SELECT is allowed (no SETTINGS, FORMAT or INTO OUTFILE)")
        if any(line.strip() == "Set" for line in ast):
            raise StoreRefused("SETTINGS are fixed by the store")
        return sql

    def _tables_read(self, sql: str) -> tuple[str, ...]:
        tree = self._explain("QUERY TREE", sql)
        read: set[str] = set()
        for line in tree:
            function = _TABLE_FUNCTION.search(line)
            if function:
                raise StoreRefused(f"table function {function.group(1)} is not available")
            called = _FUNCTION.search(line)
            if called:
                self._check_function(*called.groups())
            table = _TABLE.match(line)
            if table:
                read.add(self._own_table(table.group(1)))
        read.discard("")
        return tuple(sorted(read))

    def _check_function(self, name: str, kind: str) -> None:
        """Refuse a function off chDB's allow-list (an aggregate is read without its combinators)."""
        listed = chdb_aggregate(name, self._combinators) if kind in ("aggregate", "window") else name
        if CHDB.allows(listed):
            return
        raise StoreRefused(f"function {name} is not available: {CHDB.reason(listed)}")

    def _own_table(self, qualified: str) -> str:
        """The case's table behind ``db.table``; ``""`` for the constant row; refused otherwise."""
        if qualified == "system.one":
            return ""
        db, _, table = qualified.partition(".")
        if db != self.db or table not in self._tables:
            raise StoreRefused(f"no table {qualified!r}")
        return table

    def _classify(self, exc: Exception) -> Exception:
        text = first_line(exc)
        if "TIMEOUT_EXCEEDED" in text:
            return InfraFailure(
                f"chdb store: the query ran past the {self.seconds:g} s safety limit, which no query "
                "within the store's row and memory limits reaches on a healthy machine"
            )
        if "TOO_MANY_ROWS" in text or "SET_SIZE_LIMIT_EXCEEDED" in text:
            return StoreRefused(f"stopped: over the store's limit of {CHDB_ROWS_READ:,} rows ({text[:160]})")
        if "MEMORY_LIMIT_EXCEEDED" in text:
            return StoreRefused(f"stopped: over the {self.memory // 2**20} MB memory budget")
        if f"Database {self.db} does not exist" in text:  # dropped under a store still open
            return StoreFailure(f"chdb store failed: {text}")
        if "LOGICAL_ERROR" in text or "CANNOT_OPEN_FILE" in text or "FILE_DOESNT_EXIST" in text:
            return StoreFailure(f"chdb store failed: {text}")
        return StoreRefused(text)

    def begin_action(self) -> None:
        """Nothing to start again: the engine's limits hold each query, counted in rows."""

    def close(self) -> None:
        self.con.close()


__all__ = ["EXTRA", "ChdbStore", "chdb_module", "database_name"]
