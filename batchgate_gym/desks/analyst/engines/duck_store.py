"""The DuckDB stores: ``duckdb`` (the dataset's database file), ``lake`` (its Parquet copy),
``files`` (its raw CSV and JSON files) and ``iceberg`` (its Iceberg tables, as the data files
pyiceberg's scan plans), each read through DuckDB, read-only.

The DuckDB stores run one thread under a memory limit with no spilling to disk,
external access switched off after the views are made (only the case's own
directory stays readable), extension installing and loading off, and the
configuration locked; a query must parse as exactly one SELECT, and a watchdog
interrupts it past its thread's CPU budget (DuckDB counts nothing else: the store
runs one thread, a paused process spends none, a contended one about the same; the
queries of one action share a budget too). The built-ins whose output size an argument sets
(``repeat``, ``lpad``, ``range`` ...: one call is one step no interrupt stops) are
refused by name, from DuckDB's own parse tree, and so is every function off DuckDB's
allow-list (:data:`.function_lists.DUCKDB`, one a new engine version brings included),
every function that reads the clock, the session or chance, and table samples.
What a DuckDB query read is the store's tables it
names outside its own CTEs, and none when the plan scans nothing (``SELECT 42``).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from batchgate_gym.kernel.infra import InfraFailure

from ..datasets import iceberg
from ..datasets.canonical import csv_tables, dataset_dir, quiet, table_names, tables_of
from ..datasets.market import DataSpec
from .base import (
    MAX_CELL_CHARS,
    MAX_ROWS,
    ListedTables,
    StoreFailure,
    StoreRefused,
    StoreResult,
    Watchdog,
    cpu_budget,
    first_line,
    query_text,
    shaped_result,
)
from .function_lists import DUCKDB

DUCK_MEMORY = "128MB"

# DuckDB functions that read the clock, the session or a random source: a result must
# depend on the data alone, so that evidence re-run later gives what the agent saw.
CLOCK_AND_CHANCE = frozenset(
    {
        "random", "setseed", "gen_random_uuid", "uuid", "uuidv4", "uuidv7", "now",
        "current_timestamp", "get_current_timestamp", "get_current_time", "current_date",
        "current_time", "current_localtime", "current_localtimestamp", "localtime",
        "localtimestamp", "today", "transaction_timestamp", "txid_current", "current_query",
        "current_query_id", "current_transaction_id", "current_connection_id", "nextval",
        "currval", "setval", "sleep_ms", "write_log",
    }
)  # fmt: skip
# DuckDB built-ins whose output size an argument sets: one call is one step that no
# interrupt stops (``repeat('x', 10**9)`` held a store for minutes past its budget,
# outside the memory limit), so they are not offered at all.
SIZED_FUNCTIONS = frozenset(
    {
        "repeat",
        "lpad",
        "rpad",
        "printf",
        "format",
        "bar",
        "list_resize",
        "array_resize",
        "range",
        "generate_series",
        "repeat_row",
        "list_repeat",
    }
)


# DuckDB's catalogue and settings functions: they tell the store's files, paths and settings,
# none of it the case's data (``information_schema`` stays: it lists the store's own tables).
ENGINE_PREFIXES = ("duckdb_", "pragma_")
ENGINE_FUNCTIONS = frozenset({"current_setting", "getvariable", "which_secret"})
# The only table functions a query may name in FROM: the ones that compute on values. Every other
# one reads a file (``read_parquet``, ``glob`` ...), a Python object, or runs SQL given as text
# (``query``, ``query_table``, ``json_execute_serialized_sql``), which no check of this
# statement's parse tree sees into: ``query('SELECT random()')`` ran, and so did the sized and
# engine functions refused above. A file named in FROM as a path is a read of a file too.
TABLE_FUNCTIONS = frozenset({"unnest", "json_each", "json_tree"})
PATH_CHARACTERS = frozenset("/\\.:*?")


_DUCK_TYPES = {pl.String: "VARCHAR", pl.Int64: "BIGINT", pl.Float64: "DOUBLE", pl.Date: "DATE"}


def _columns(frame: pl.DataFrame, types: dict[Any, str]) -> list[tuple[str, str]]:
    return [(name, types[dtype.base_type()]) for name, dtype in frame.schema.items()]


def _duck_config() -> dict[str, Any]:
    return {
        "threads": 1,
        "memory_limit": DUCK_MEMORY,
        "temp_directory": "",
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_community_extensions": False,
        "allow_unsigned_extensions": False,
    }


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _planned_source(files: list[Path]) -> str:
    """The Parquet files an Iceberg scan planned, read in the plan's order (one thread: rows
    come back in that order)."""
    if not files:
        raise ValueError("an iceberg table with no data file")
    return f"read_parquet([{', '.join(_literal(path) for path in files)}])"


def _view_source(kind: str, folder: Path, name: str, frame: pl.DataFrame, as_csv: bool) -> str:
    if kind == "lake":
        return f"read_parquet({_literal(folder / f'{name}.parquet')})"
    cols = "{" + ", ".join(f"'{c}': '{t}'" for c, t in _columns(frame, _DUCK_TYPES)) + "}"
    if as_csv:
        return f"read_csv({_literal(folder / f'{name}.csv')}, header=true, columns={cols}, nullstr='')"
    return f"read_json({_literal(folder / f'{name}.json')}, format='newline_delimited', columns={cols})"


# Opened DuckDB databases kept per process, the most recently used last: a store is a new
# connection (a cursor) to one of them, so opening one costs no file open, view creation or
# settings lock-down. A database dropped from here stays open while a store still uses it.
_DUCK_BASES: OrderedDict[tuple[str, str, tuple[str, ...]], tuple[Any, tuple[str, ...]]] = OrderedDict()
DUCK_BASES_KEPT = 8
_DUCK_BASES_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class _Named:
    """What a statement's parse tree names: functions, tables and CTEs (lower case)."""

    functions: set[str]
    tables: set[str]
    ctes: set[str]
    sampled: list[bool]  # [True] once a USING SAMPLE or TABLESAMPLE is met
    table_functions: set[str]


def _lock(con: Any, folder: Path) -> None:
    """Shut every door but the case's directory, then lock the settings.

    Connections to one database file in one process share one DuckDB instance and
    its settings: a second opening of the file finds them already locked down.
    """
    locked, external = con.execute(
        "SELECT current_setting('lock_configuration'), current_setting('enable_external_access')"
    ).fetchone()
    if locked and not external:
        return
    allowed = str(folder).rstrip("/") + "/"
    con.execute(f"SET allowed_directories=[{_literal(Path(allowed))}]")
    con.execute("SET enable_external_access=false")
    con.execute("SET lock_configuration=true")


class DuckStore(ListedTables):
    """A DuckDB connection over the dataset: its database file, its lake or its raw files.

    Each store is its own connection (its own interrupt, nothing shared but the read-only
    database and its locked settings) to a database opened once per process and dataset.
    """

    def __init__(
        self, kind: str, spec: DataSpec, visible: tuple[str, ...] | None = None, seconds: float | None = None
    ) -> None:
        import duckdb

        self.seconds, self.safety_net, self.action = cpu_budget(spec, seconds)
        self.name = kind
        self.visible = table_names(spec) if visible is None else visible
        self._duckdb = duckdb
        try:
            self.folder = dataset_dir(spec, kind)
            if kind == "iceberg":  # the tables' files live where the catalog was written
                self.folder = iceberg.catalog_home(self.folder)
            self._base, self._tables = self._database(kind, spec)
            self.con = self._base.cursor()
        except Exception as exc:
            raise StoreFailure(f"{kind} store could not start: {type(exc).__name__}: {exc}") from None

    def _database(self, kind: str, spec: DataSpec) -> tuple[Any, tuple[str, ...]]:
        """The dataset's database in this process (opened, listed and locked down once) and its tables."""
        key = (kind, str(self.folder), tuple(self.visible))
        with _DUCK_BASES_LOCK:
            if key in _DUCK_BASES:
                _DUCK_BASES.move_to_end(key)
                return _DUCK_BASES[key]
        con = self._open(kind, spec)
        listed = con.execute(
            "SELECT table_name FROM duckdb_tables() UNION ALL SELECT view_name FROM duckdb_views() WHERE NOT internal"
        ).fetchall()
        _lock(con, self.folder)
        opened = (con, tuple(sorted(r[0] for r in listed)))
        with _DUCK_BASES_LOCK:
            opened = _DUCK_BASES.setdefault(key, opened)
            while len(_DUCK_BASES) > DUCK_BASES_KEPT:
                _DUCK_BASES.popitem(last=False)
        return opened

    def _open(self, kind: str, spec: DataSpec) -> Any:
        duckdb = self._duckdb
        if kind == "duckdb":
            return quiet(
                duckdb.connect(str(self.folder / "store.duckdb"), read_only=True, config=_duck_config())
            )
        con = quiet(duckdb.connect(":memory:", config=_duck_config()))
        if kind == "iceberg":
            planned = iceberg.planned_files(dataset_dir(spec, kind), self.visible)
            for name in self.visible:
                con.execute(f"CREATE VIEW {name} AS SELECT * FROM {_planned_source(planned[name])}")
            return con
        tables, as_csv = tables_of(spec), csv_tables(spec)
        for name in self.visible:
            source = _view_source(kind, self.folder, name, tables[name], name in as_csv)
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM {source}")
        return con

    def _columns_and_count(self, table: str) -> tuple[list[list[Any]], int]:
        try:
            columns = [[r[0], r[1]] for r in self.con.execute(f"DESCRIBE {table}").fetchall()]
            count = self.con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        except self._duckdb.Error as exc:
            raise StoreFailure(f"{self.name} store failed: {type(exc).__name__}") from None
        return columns, int(count)

    def run(self, query: str) -> StoreResult:
        sql, named = self._checked(query)
        allowance = self.action.allowance()
        if allowance is None:
            raise StoreRefused(self.action.used_up())
        tables = self._tables_read(sql, named)
        watch = Watchdog(self.con.interrupt, allowance, self.safety_net)
        try:
            with watch:
                cursor = self.con.execute(sql)
                fetched = cursor.fetchmany(MAX_ROWS + 1)
                names = [str(d[0])[:MAX_CELL_CHARS] for d in cursor.description or ()]
        except self._duckdb.Error as exc:
            raise self._classify(exc, watch) from None
        finally:
            self.action.spend(watch.cpu_spent)
        return shaped_result(names, fetched, tables)

    def begin_action(self) -> None:
        """An action starts: its queries share :data:`DUCK_ACTION_CPU_SECONDS` from now on (until
        the next call); a store never told of actions holds each query to its own budget alone."""
        self.action.begin()

    def _checked(self, query: object) -> tuple[str, _Named]:
        """The query's text and what its parse tree names; :class:`StoreRefused` if it may not run."""
        sql = query_text(query)
        try:
            statements = self.con.extract_statements(sql)
        except self._duckdb.Error as exc:
            raise StoreRefused(first_line(exc)) from None
        if len(statements) != 1:
            raise StoreRefused("one statement at a time")
        if statements[0].type != self._duckdb.StatementType.SELECT:
            raise StoreRefused(
                "only reading queries are allowed: one SELECT (or WITH ... SELECT); statements that "
                "write, change the schema or settings (INSERT, UPDATE, DELETE, CREATE, DROP, COPY, "
                "ATTACH, SET, INSTALL ...) are refused"
            )
        named = self._named(sql)
        called = sorted(named.functions & SIZED_FUNCTIONS)
        if called:
            raise StoreRefused(
                f"function {called[0]} is not available: its output size is set by an argument"
            )
        engine = sorted(
            n
            for n in named.functions | named.tables
            if n in ENGINE_FUNCTIONS or n.startswith(ENGINE_PREFIXES)
        )
        if engine:
            raise StoreRefused(f"{engine[0]} is not available: it reads the engine, not the case's data")
        chance = sorted(named.functions & CLOCK_AND_CHANCE)
        if chance:
            raise StoreRefused(
                f"{chance[0]}() is not available: a result here may depend on the data alone, "
                "not on the clock, the session or chance"
            )
        if named.sampled:
            raise StoreRefused("table samples are not available: a result here may depend on the data alone")
        readers = sorted(named.table_functions - TABLE_FUNCTIONS)
        if readers:
            raise StoreRefused(
                f"table function {readers[0]} is not available: a query reads the store's tables "
                f"(and may unnest values: {', '.join(sorted(TABLE_FUNCTIONS))})"
            )
        unlisted = sorted(n for n in named.functions if not DUCKDB.allows(n))
        if unlisted:
            raise StoreRefused(f"function {unlisted[0]} is not available: {DUCKDB.reason(unlisted[0])}")
        paths = sorted(t for t in named.tables if PATH_CHARACTERS & set(t))
        if paths:
            raise StoreRefused(
                f"{paths[0]!r} is not one of the store's tables: files are read through them only"
            )
        return sql, named

    def _named(self, sql: str) -> _Named:
        """The functions, tables and CTEs the statement names, from DuckDB's own parse tree (read once)."""
        try:
            tree = json.loads(self.con.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0])
        except self._duckdb.Error as exc:
            raise StoreRefused(first_line(exc)) from None
        if tree.get("error"):
            raise StoreRefused(str(tree.get("error_message", "the query does not parse"))[:300])
        named = _Named(set(), set(), set(), [], set())
        for node in _walk(tree):
            if node.get("sample") is not None:
                named.sampled.append(True)
            if node.get("type") == "TABLE_FUNCTION":
                function = node.get("function")
                name = function.get("function_name") if isinstance(function, dict) else None
                named.table_functions.add(str(name).lower())
            if isinstance(node.get("function_name"), str):
                named.functions.add(str(node["function_name"]).lower())
            # current_date, current_time ... parse as a bare name, bound to a function later
            column = node.get("column_names")
            if isinstance(column, list) and len(column) == 1 and node.get("class") == "COLUMN_REF":
                bare = str(column[0]).lower()
                if bare in CLOCK_AND_CHANCE:
                    named.functions.add(bare)
            if node.get("type") == "BASE_TABLE" and isinstance(node.get("table_name"), str):
                named.tables.add(node["table_name"].lower())
            cte_map = node.get("cte_map")
            if isinstance(cte_map, dict):
                named.ctes.update(str(item.get("key", "")).lower() for item in cte_map.get("map", []))
        return named

    def _tables_read(self, sql: str, named: _Named) -> tuple[str, ...]:
        """The store's tables ``sql`` names outside its CTEs; none when its plan scans nothing."""
        try:
            plan = self.con.execute("EXPLAIN (FORMAT JSON) " + sql).fetchall()
        except self._duckdb.Error as exc:
            raise self._classify(exc) from None
        if not any(_scans(node) for _, text in plan for node in json.loads(text)):
            return ()
        return tuple(sorted((named.tables - named.ctes) & set(self._tables)))

    def _classify(self, exc: Exception, watch: Watchdog | None = None) -> Exception:
        duckdb = self._duckdb
        if isinstance(exc, duckdb.InterruptException):
            if watch is not None and watch.stopped_by == "clock":
                return InfraFailure(
                    f"{self.name} store: the query ran past the {self.safety_net:g} s safety limit, "
                    "which no query within its CPU budget reaches on a healthy machine"
                )
            if watch is not None and watch.limit < self.seconds:
                return StoreRefused(
                    f"interrupted: this action's queries used their {self.action.per_action:g} s of CPU"
                )
            return StoreRefused(f"interrupted: over the {self.seconds:g} s CPU budget of one query")
        if isinstance(exc, duckdb.OutOfMemoryException):
            return StoreRefused(f"stopped: over the {DUCK_MEMORY} memory budget")
        if isinstance(exc, (duckdb.IOException, duckdb.InternalException, duckdb.FatalException)):
            return StoreFailure(f"{self.name} store failed: {type(exc).__name__}: {first_line(exc)}")
        return StoreRefused(first_line(exc))

    def close(self) -> None:
        self.con.close()


def _scans(node: Any) -> bool:
    if not isinstance(node, dict):
        return False
    name = str(node.get("name", ""))
    if ("SCAN" in name and name not in ("DUMMY_SCAN", "EMPTY_RESULT")) or name.startswith("READ_"):
        return True
    return any(_scans(child) for child in node.get("children", []))


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


__all__ = ["DUCK_BASES_KEPT", "DUCK_MEMORY", "DuckStore"]
