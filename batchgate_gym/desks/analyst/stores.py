"""The engines an agent queries: each started by the environment, bounded, read-only by construction.

Every store answers ``tables()``, ``describe(table)`` and ``run(query)`` with the
same caps as the kernel's SQL guard (one statement of at most 20,000 characters and
20,000 tokens with its CTEs inlined, valid UTF-8, at most 50 rows back, cells cut
to 200 characters, a work budget and a memory budget) and says which of its tables
a query read (``tables_read``), the record the grader checks evidence against.

No result and no refusal depends on the clock or the machine's load, so that the
evidence a grader re-runs, live or in a replay, gives what the agent saw:

* the work budget is counted: SQLite's VM steps; for the DuckDB stores, which
  count nothing else, the CPU time of the query's own thread (the store runs one
  thread, a paused process spends none, a contended one about the same); the
  queries of one action share a budget too (``begin_action``); a TPC-H dataset
  above SF 0.1 gets budgets as many times larger (:func:`budget_scale`). A wall-clock limit
  far above any honest query is only a safety net: when it fires the store raises
  :class:`~batchgate_gym.kernel.infra.InfraFailure` and the episode ends as an
  infrastructure error;
* functions that read the clock, the time zone or a random source (``random()``,
  ``now()``, ``current_timestamp``, ``date('now')``, ``uuid()`` ...) and table
  samples are refused.

* ``sqlite``: the kernel's guarded SQLite (:class:`~batchgate_gym.kernel.sqlguard.SqlGuard`:
  authorizer, VM-step and memory budgets, clock-free), one in-memory copy per episode
  (TPC-H's database file on disk, opened read-only);
* ``duckdb``: the dataset's DuckDB database file opened ``read_only``;
* ``lake``: the Parquet copy, as views in an in-memory DuckDB;
* ``files``: the raw CSV and JSON files, as typed views in an in-memory DuckDB;
* ``chdb`` (optional extra): ClickHouse in the process (:mod:`.chdb_store`);
* ``postgres``: a PostgreSQL server the desk starts, a read-only role (:mod:`.postgres_store`).

The DuckDB stores run one thread under a memory limit with no spilling to disk,
external access switched off after the views are made (only the case's own
directory stays readable), extension installing and loading off, and the
configuration locked; a query must parse as exactly one SELECT, and a watchdog
interrupts it past its thread's CPU budget. The built-ins whose output size an argument sets
(``repeat``, ``lpad``, ``range`` ...: one call is one step no interrupt stops) are
refused by name, from DuckDB's own parse tree, and so is every function off DuckDB's
allow-list (:data:`.function_lists.DUCKDB`, one a new engine version brings included).
What a DuckDB query read is the store's tables it
names outside its own CTEs, and none when the plan scans nothing (``SELECT 42``).

A query the agent got wrong raises :class:`StoreRefused`; a store that fails on
its own (files gone, an internal error) raises :class:`StoreFailure`, which the
grader counts as an infrastructure error, never as a wrong answer.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import functools
import json
import math
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from batchgate_gym.kernel import sqlite_image
from batchgate_gym.kernel.infra import InfraFailure, ThreadClock
from batchgate_gym.kernel.sqlguard import (
    NOT_UTF8,
    ActionBudget,
    SqlBudget,
    SqlGuard,
    SqlRefused,
    clean_query,
    encodable,
)
from batchgate_gym.kernel.sqlshape import MAX_INLINED_TOKENS, too_large

from .canonical import csv_tables, dataset_dir, fill_sqlite, quiet, table_names, tables_of
from .function_lists import DUCKDB
from .market import DataSpec

STORES = ("sqlite", "duckdb", "lake", "files")
# Stores never drawn for a procedural case or the eval and train splits' single-store
# cases, asked for by name (the ``chdb`` and ``postgres`` splits): chDB is behind an
# optional extra, and the postgres store starts a server.
OPTIONAL_STORES = ("chdb", "postgres")
MAX_ROWS = 50
MAX_CELL_CHARS = 200
MAX_COLUMNS = 64
MAX_QUERY_CHARS = 20_000
DUCK_CPU_SECONDS = 2.0  # CPU time of one query's thread: the DuckDB stores' work budget
DUCK_ACTION_CPU_SECONDS = 6.0  # ... and of every query of one action together
DUCK_MEMORY = "128MB"
SAFETY_NET_SECONDS = 60.0  # wall clock: only a safety net, far above any honest query
SQLITE_BUDGET = SqlBudget(
    max_steps=20_000_000,
    max_action_steps=60_000_000,
    max_seconds=SAFETY_NET_SECONDS,
    # what the step count cannot see (one LIKE over a long text): careful's heaviest query
    # takes a tenth of this, the rest of its queries far less
    max_cpu_seconds=2.0,
    max_action_cpu_seconds=6.0,
)
# TPC-H up to this scale factor runs under the budgets above; a larger dataset's queries
# get budgets as many times larger as its scale factor is (SF 1: ten times).
BUDGET_SF = 0.1


def budget_scale(spec: DataSpec) -> float:
    """How many times the default budgets one query over ``spec``'s dataset gets.

    An honest query's work grows with the rows it reads, so its budget grows with the
    dataset: 1 for the marketplace and for TPC-H up to :data:`BUDGET_SF`, the scale
    factor over :data:`BUDGET_SF` above it. A function of the dataset alone, so a query
    and its re-run by the grader (on the dataset or a copy at the same scale) are held
    to the same budget; the wall-clock safety net grows with it, so that it stays far
    above any query within budget.
    """
    if spec.tpch is None:
        return 1.0
    return max(1.0, spec.tpch / BUDGET_SF)


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


class StoreRefused(Exception):
    """The agent's query was refused, failed or was stopped at a budget."""


class StoreFailure(Exception):
    """The store itself failed: an infrastructure error, not the agent's."""


@dataclass(frozen=True, slots=True)
class StoreResult:
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool
    tables_read: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"columns": self.columns, "rows": self.rows, "truncated": self.truncated}


class Store(Protocol):
    name: str

    def tables(self) -> list[str]: ...

    def describe(self, table: str) -> dict[str, Any]: ...

    def run(self, query: str) -> StoreResult: ...

    def begin_action(self) -> None: ...

    def close(self) -> None: ...


def plain_cell(value: Any) -> Any:
    """A result cell as JSON: dates as ISO text, decimals as floats, long text cut."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<blob {len(bytes(value))} bytes>"
    if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
        return value[:MAX_CELL_CHARS] + "..."
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)[:MAX_CELL_CHARS]


_DUCK_TYPES = {pl.String: "VARCHAR", pl.Int64: "BIGINT", pl.Float64: "DOUBLE", pl.Date: "DATE"}


def _columns(frame: pl.DataFrame, types: dict[Any, str]) -> list[tuple[str, str]]:
    return [(name, types[dtype.base_type()]) for name, dtype in frame.schema.items()]


def query_text(query: object) -> str:
    """The agent's query as one statement's text; :class:`StoreRefused` if it is not text
    (or not valid UTF-8), too long, empty, or too large once its CTEs are inlined."""
    if not isinstance(query, str):
        raise StoreRefused("query must be a string")
    if len(query) > MAX_QUERY_CHARS:
        raise StoreRefused(f"query longer than {MAX_QUERY_CHARS} characters")
    if not encodable(query):
        raise StoreRefused(NOT_UTF8)
    sql = clean_query(query)
    if not sql:
        raise StoreRefused("empty query")
    oversized = too_large(sql, MAX_INLINED_TOKENS)
    if oversized:
        raise StoreRefused(oversized)
    return sql


def shaped_result(names: list[str], fetched: list[Any], tables: tuple[str, ...]) -> StoreResult:
    """At most ``MAX_COLUMNS`` columns and ``MAX_ROWS`` rows of plain cells (``fetched`` holds one more row if there are more)."""
    if len(names) > MAX_COLUMNS:
        raise StoreRefused(f"a result has at most {MAX_COLUMNS} columns")
    rows = [[plain_cell(v) for v in row] for row in fetched[:MAX_ROWS]]
    return StoreResult([n[:MAX_CELL_CHARS] for n in names], rows, len(fetched) > MAX_ROWS, tables)


# -- SQLite -----------------------------------------------------------------------------


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


# -- DuckDB -----------------------------------------------------------------------------


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


class DuckStore:
    """A DuckDB connection over the dataset: its database file, its lake or its raw files.

    Each store is its own connection (its own interrupt, nothing shared but the read-only
    database and its locked settings) to a database opened once per process and dataset.
    """

    def __init__(
        self, kind: str, spec: DataSpec, visible: tuple[str, ...] | None = None, seconds: float | None = None
    ) -> None:
        import duckdb

        scale = budget_scale(spec)
        self.seconds = DUCK_CPU_SECONDS * scale if seconds is None else seconds
        self.safety_net = SAFETY_NET_SECONDS * scale
        # the queries of one action share the CPU of three queries, whatever one query's budget
        self.action = ActionBudget(
            self.seconds, DUCK_ACTION_CPU_SECONDS * self.seconds / DUCK_CPU_SECONDS, "{:g} s of CPU"
        )
        self.name = kind
        self.visible = table_names(spec) if visible is None else visible
        self._duckdb = duckdb
        try:
            self.folder = dataset_dir(spec, "duckdb" if kind == "duckdb" else kind)
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
        tables, as_csv = tables_of(spec), csv_tables(spec)
        for name in self.visible:
            source = _view_source(kind, self.folder, name, tables[name], name in as_csv)
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM {source}")
        return con

    def tables(self) -> list[str]:
        return list(self._tables)

    def describe(self, table: str) -> dict[str, Any]:
        if table not in self._tables:
            raise StoreRefused(f"no table {table!r}")
        try:
            columns = [[r[0], r[1]] for r in self.con.execute(f"DESCRIBE {table}").fetchall()]
            count = self.con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        except self._duckdb.Error as exc:
            raise StoreFailure(f"{self.name} store failed: {type(exc).__name__}") from None
        return {"table": table, "columns": columns, "rows": int(count)}

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


class Watchdog:
    """Stops one query from another thread: past ``limit`` seconds of the CPU time of the
    thread that entered it (the work budget), or past ``wall`` seconds of the wall clock
    (the safety net). ``stopped_by`` says which (``"cpu"``, ``"clock"`` or ``""``);
    ``cpu_spent`` is the CPU time the query's thread spent between entry and exit.

    Built and entered in the thread that runs the query. A query shorter than one poll
    costs the start of the watchdog's thread and nothing more.
    """

    POLL_SECONDS = 0.02

    def __init__(self, interrupt: Any, limit: float, wall: float) -> None:
        self.interrupt = interrupt
        self.limit = limit
        self.wall = wall
        self.stopped_by = ""
        self.cpu_spent = 0.0
        self._clock = ThreadClock()
        self._start = self._clock.now()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> Watchdog:
        self._start = self._clock.now()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self.cpu_spent = self._clock.cpu() - self._start.cpu

    def _watch(self) -> None:
        while not self._done.wait(self.POLL_SECONDS):
            now = self._clock.now()
            if now.cpu - self._start.cpu > self.limit:
                self.stopped_by = "cpu"
            elif now.wall - self._start.wall > self.wall:
                self.stopped_by = "clock"
            else:
                continue
            self.interrupt()
            return


def first_line(exc: Exception) -> str:
    """An engine's error message, first line only, at most 300 characters."""
    return str(exc).strip().split("\n")[0][:300]


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
    if kind in STORES:
        return DuckStore(kind, spec, visible, seconds)
    raise ValueError(f"unknown store {kind!r}")


__all__ = [
    "OPTIONAL_STORES",
    "STORES",
    "Store",
    "StoreFailure",
    "StoreRefused",
    "StoreResult",
    "first_line",
    "open_store",
    "plain_cell",
]
