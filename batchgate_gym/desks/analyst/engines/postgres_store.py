"""The ``postgres`` store: a real PostgreSQL server, the agent connected as a read-only role.

The server is started once per process and shared (:mod:`.postgres_server`); each
dataset (and each share of one a level-4 case shows) is its own database, created
once per process, its tables loaded with ``COPY`` and owned by the desk. The agent's
connection logs in as this process's reader role, which may connect to those
databases and read their tables, nothing more: the server refuses every write, DDL,
``COPY``, file read and settings change a role without privileges may not make, and
the role's own settings (set server-side on the role) cap what one statement may use:
``work_mem`` and ``temp_file_limit`` (bytes, counted by the server), read-only
transactions, no parallel workers, and ``statement_timeout`` (the wall clock: only a
safety net far above any honest query, whose firing is an infrastructure error). Every
query runs through a server-side cursor of which at most 51 rows are fetched.

Before a query reaches the server, PostgreSQL's own parser (``pglast``, the server's
grammar) must find exactly one SELECT that writes nothing, names only the case's
tables (and its own CTEs), calls only functions on the allow-list
(:data:`.postgres_functions.POSTGRES`: the ones that compute on values), reads no
clock or session value (``CURRENT_DATE``, ``CURRENT_USER`` ...), samples nothing, and
casts to no catalogue type (``regclass`` ...). The work budget is what the server
process serving the connection spends on the query in CPU time (read from ``/proc``,
the DuckDB stores' budget, counted alike): past it the query is cancelled and refused.
What a query read is the case's tables it names outside its CTEs, and none when the
plan scans no table (``SELECT 42``).
"""

from __future__ import annotations

import hashlib
import io
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from batchgate_gym.kernel.infra import Clocks, InfraFailure

from ..datasets.canonical import INSERT_ROWS, table_names, tables_of
from ..datasets.market import DataSpec
from . import postgres_server
from .base import (
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
from .postgres_functions import POSTGRES

_PG_TYPES = {pl.String: "TEXT", pl.Int64: "BIGINT", pl.Float64: "DOUBLE PRECISION", pl.Date: "DATE"}
# The table functions a query may name in FROM: the ones that unnest values.
TABLE_FUNCTIONS = frozenset(
    {
        "unnest",
        "json_array_elements",
        "json_array_elements_text",
        "json_each",
        "json_each_text",
        "jsonb_array_elements",
        "jsonb_array_elements_text",
        "jsonb_each",
        "jsonb_each_text",
        "regexp_matches",
    }
)
# Casts to these types look names up in the server's catalogue ('pg_authid'::regclass).
CATALOGUE_TYPES = frozenset(
    {
        "regclass", "regcollation", "regconfig", "regdictionary", "regnamespace", "regoper",
        "regoperator", "regproc", "regprocedure", "regrole", "regtype",
    }
)  # fmt: skip
WRITING_NODES = ("InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt")
DATABASES_KEPT = 16  # datasets kept loaded in the process; the least recently opened is dropped


@dataclass
class _Named:
    """What a statement's parse tree names (lower case)."""

    functions: set[str] = field(default_factory=set)
    tables: set[str] = field(default_factory=set)
    ctes: set[str] = field(default_factory=set)
    table_functions: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)


def database_name(spec: DataSpec, visible: tuple[str, ...]) -> str:
    """The process's database of ``spec``'s ``visible`` tables: a readable start of the dataset's
    key and a digest of the key and the tables, within PostgreSQL's 63 characters."""
    readable = re.sub(r"[^a-z0-9_]", "_", spec.key().lower())[:20]
    digest = hashlib.sha256(repr((spec.key(), tuple(visible))).encode()).hexdigest()[:16]
    return f"bg_{postgres_server.server().tag}_{readable}_{digest}"


_LOADED: dict[str, tuple[str, ...]] = {}
_LOAD_LOCK = threading.Lock()


def _load(spec: DataSpec, visible: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The dataset's database in this process's server (created and loaded once) and its tables."""
    with _LOAD_LOCK:
        return _load_once(spec, visible)


def _load_once(spec: DataSpec, visible: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    name = database_name(spec, visible)
    if name in _LOADED:
        _LOADED[name] = _LOADED.pop(name)  # most recently used last
        return name, _LOADED[name]
    url = postgres_server.create_database(name)
    psycopg = postgres_server.psycopg_module()
    reader = postgres_server.server().reader
    frames = tables_of(spec)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("REVOKE ALL ON SCHEMA public FROM PUBLIC")
        con.execute(f"GRANT USAGE ON SCHEMA public TO {reader}")
        for table in visible:
            _copy(con, table, frames[table])
        con.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader}")
    _LOADED[name] = tuple(sorted(visible))
    while len(_LOADED) > DATABASES_KEPT:
        postgres_server.drop_database(next(iter(_LOADED)))
        _LOADED.pop(next(iter(_LOADED)))
    return name, _LOADED[name]


def _copy(con: Any, table: str, frame: pl.DataFrame) -> None:
    """One table created and filled with ``COPY`` from CSV (text quoted, so NULL and '' stay apart),
    a bounded slice of rows at a time (TPC-H's lineitem at scale factor 1 is six million)."""
    columns = ", ".join(f"{c} {_PG_TYPES[t.base_type()]}" for c, t in frame.schema.items())
    con.execute(f"CREATE TABLE {table} ({columns}) WITH (autovacuum_enabled = false)")
    with con.cursor().copy(f"COPY {table} FROM STDIN WITH (FORMAT csv, NULL '')") as copy:
        for part in frame.iter_slices(INSERT_ROWS):
            text = io.BytesIO()
            part.write_csv(
                text, include_header=False, quote_style="non_numeric", null_value="", float_precision=None
            )
            copy.write(text.getbuffer())


class _BackendClock:
    """The CPU time of the server process serving one connection, read from ``/proc``."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.process = psutil.Process(pid)

    def cpu(self) -> float:
        times = self.process.cpu_times()
        return float(times.user + times.system)

    def now(self) -> Clocks:
        return Clocks(time.perf_counter(), self.cpu())


class _BackendWatchdog(Watchdog):
    """The stores' watchdog, counting the server process's CPU time instead of this thread's."""

    def __init__(self, interrupt: Any, limit: float, wall: float, clock: _BackendClock) -> None:
        super().__init__(interrupt, limit, wall)
        self._clock = clock  # type: ignore[assignment]


class PostgresStore(ListedTables):
    """A read-only connection to the case's database on this process's PostgreSQL server."""

    name = "postgres"

    def __init__(
        self, spec: DataSpec, visible: tuple[str, ...] | None = None, seconds: float | None = None
    ) -> None:
        self.seconds, self.safety_net, self.action = cpu_budget(spec, seconds)
        visible = table_names(spec) if visible is None else visible
        try:
            self._psycopg = postgres_server.psycopg_module()
            database, self._tables = _load(spec, visible)
            self.con = self._psycopg.connect(postgres_server.server().url(database, reader=True))
            # the server's safety net, as far above this dataset's budget as the role's is above the default
            self.con.execute(f"SET statement_timeout = {int(self.safety_net * 1000)}")
            self.con.commit()
            self.con.read_only = True
            self._clock = _BackendClock(self.con.info.backend_pid)
        except Exception as exc:
            raise StoreFailure(
                f"postgres store could not start: {type(exc).__name__}: {first_line(exc)}"
            ) from None
        if not self._clock.process.name().startswith("postgres"):
            self.con.close()
            raise StoreFailure(
                "postgres store could not start: its work budget is the server process's CPU time, read "
                "on this machine, and the server's process is not here"
            )

    def _columns_and_count(self, table: str) -> tuple[list[list[Any]], int]:
        try:
            with self.con.transaction():
                columns = self.con.execute(
                    "SELECT column_name::text, data_type::text FROM information_schema.columns "
                    "WHERE table_schema = 'public' AND table_name = %s ORDER BY ordinal_position",
                    [table],
                ).fetchall()
                count = self.con.execute(f"SELECT count(*) FROM {table}").fetchone()
        except self._psycopg.Error as exc:
            raise StoreFailure(f"postgres store failed: {first_line(exc)}") from None
        return [list(c) for c in columns], int(count[0] if count else 0)

    def run(self, query: str) -> StoreResult:
        sql, named = self._checked(query)
        allowance = self.action.allowance()
        if allowance is None:
            raise StoreRefused(self.action.used_up())
        watch = _BackendWatchdog(self.con.cancel_safe, allowance, self.safety_net + 5, self._clock)
        try:
            with watch, self.con.transaction():
                tables = self._tables_read(sql, named)
                cursor = self.con.cursor(name="agent")
                cursor.execute(sql)
                fetched = cursor.fetchmany(MAX_ROWS + 1)
                names = [str(d.name) for d in cursor.description or ()]
                cursor.close()
        except self._psycopg.Error as exc:
            raise self._classify(exc, watch) from None
        finally:
            self.action.spend(watch.cpu_spent)
        return shaped_result(names, fetched, tables)

    def _tables_read(self, sql: str, named: _Named) -> tuple[str, ...]:
        """The case's tables the statement names outside its CTEs; none when its plan scans no table."""
        plan = self.con.execute("EXPLAIN (FORMAT JSON) " + sql).fetchone()
        if plan is None or not _scans(plan[0]):
            return ()
        return tuple(sorted((named.tables - named.ctes) & set(self._tables)))

    def begin_action(self) -> None:
        self.action.begin()

    def _checked(self, query: object) -> tuple[str, _Named]:
        sql = query_text(query)
        import pglast

        try:
            statements = pglast.parse_sql(sql)
        except pglast.parser.ParseError as exc:
            raise StoreRefused(first_line(exc)) from None
        if len(statements) != 1:
            raise StoreRefused("one statement at a time")
        statement = statements[0].stmt
        if type(statement).__name__ != "SelectStmt" or any(
            getattr(statement, clause, None) for clause in ("intoClause", "lockingClause")
        ):
            raise StoreRefused(
                "only reading queries are allowed: one SELECT (or WITH ... SELECT); statements that "
                "write, change the schema or settings, copy, lock or explain are refused"
            )
        named = _Named()
        _name_all(statement, named)
        if named.problems:
            raise StoreRefused(named.problems[0])
        self._check_names(named)
        return sql, named

    def _check_names(self, named: _Named) -> None:
        readers = sorted(named.table_functions - TABLE_FUNCTIONS)
        if readers:
            raise StoreRefused(
                f"table function {readers[0]} is not available: a query reads the store's tables "
                "(and may unnest values)"
            )
        unlisted = sorted(n for n in named.functions if not POSTGRES.allows(n))
        if unlisted:
            raise StoreRefused(f"function {unlisted[0]} is not available: {POSTGRES.reason(unlisted[0])}")
        unknown = sorted(named.tables - named.ctes - set(self._tables))
        if unknown:
            raise StoreRefused(f"{unknown[0]!r} is not one of the store's tables ({', '.join(self._tables)})")

    def _classify(self, exc: Exception, watch: Watchdog) -> Exception:
        errors = self._psycopg.errors
        if isinstance(exc, errors.QueryCanceled):
            if watch.stopped_by == "cpu":
                if watch.limit < self.seconds:
                    return StoreRefused(
                        f"interrupted: this action's queries used their {self.action.per_action:g} s of CPU"
                    )
                return StoreRefused(f"interrupted: over the {self.seconds:g} s CPU budget of one query")
            return InfraFailure(
                f"postgres store: the query ran past the {self.safety_net:g} s safety limit, which no "
                "query within its CPU budget reaches on a healthy machine"
            )
        if isinstance(exc, errors.ConfigurationLimitExceeded):
            return StoreRefused(f"stopped: {first_line(exc)}")
        if isinstance(exc, errors.OutOfMemory):
            return StoreRefused("stopped: out of memory")
        if isinstance(exc, (self._psycopg.OperationalError, errors.InternalError_)):
            return StoreFailure(f"postgres store failed: {type(exc).__name__}: {first_line(exc)}")
        return StoreRefused(first_line(exc))

    def close(self) -> None:
        self.con.close()


def _name_all(node: Any, named: _Named) -> None:
    """Walk a parse tree, recording what it names and what it may not do."""
    from pglast import ast

    if isinstance(node, (list, tuple)):
        for item in node:
            _name_all(item, named)
        return
    if not isinstance(node, ast.Node):
        return
    _name_one(node, named)
    for slot in getattr(type(node), "__slots__", ()):
        _name_all(getattr(node, slot, None), named)


def _name_one(node: Any, named: _Named) -> None:
    kind = type(node).__name__
    if kind == "FuncCall":
        parts = [str(p.sval) for p in node.funcname]
        if len(parts) > 1 and parts[0] != "pg_catalog":
            named.problems.append(
                f"function {'.'.join(parts)} is not available: no schema holds functions here"
            )
        named.functions.add(parts[-1].lower())
    elif kind == "RangeVar":
        if node.catalogname or (node.schemaname and node.schemaname != "public"):
            named.problems.append(f"{node.relname!r} in another schema is not one of the store's tables")
        named.tables.add(str(node.relname).lower())
    elif kind == "CommonTableExpr":
        named.ctes.add(str(node.ctename).lower())
    elif kind == "RangeFunction":
        for item in node.functions or ():
            call = item[0] if isinstance(item, (list, tuple)) else item
            if type(call).__name__ == "FuncCall":
                named.table_functions.add(str(call.funcname[-1].sval).lower())
    elif kind == "SQLValueFunction":
        named.problems.append(
            "the clock and the session's values (CURRENT_DATE, CURRENT_USER ...) are not available: "
            "a result here may depend on the data alone"
        )
    elif kind == "RangeTableSample":
        named.problems.append("table samples are not available: a result here may depend on the data alone")
    elif kind == "TypeName" and str(node.names[-1].sval).lower() in CATALOGUE_TYPES:
        named.problems.append(f"casts to {node.names[-1].sval} are not available: they read the catalogue")
    elif kind in ("XmlExpr", "XmlSerialize"):
        named.problems.append("XML is not available: no table here holds it")
    elif kind in WRITING_NODES:
        named.problems.append("only reading queries are allowed: a statement inside it writes")


def _scans(plan: Any) -> bool:
    """Whether an ``EXPLAIN (FORMAT JSON)`` plan reads a table."""
    if isinstance(plan, list):
        return any(_scans(item) for item in plan)
    if not isinstance(plan, dict):
        return False
    if "Relation Name" in plan:
        return True
    return any(_scans(value) for value in plan.values() if isinstance(value, (list, dict)))


__all__ = ["DATABASES_KEPT", "TABLE_FUNCTIONS", "PostgresStore", "database_name"]
