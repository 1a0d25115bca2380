"""Read-only, bounded SQL for untrusted agents.

An agent's query runs on the episode's own SQLite connection, so the guard has to
hold on three fronts at once:

* nothing is written: a SQLite authorizer allows only SELECT, READ, FUNCTION and
  RECURSIVE while agent SQL runs (denying writes, DDL including temp objects,
  PRAGMA, ATTACH and transactions) and allows only the functions on SQLite's
  allow-list (:data:`.engine_functions.SQLITE`: not the allocation, extension,
  full-text or engine functions, ``fts3_tokenizer`` among them); ``PRAGMA query_only`` backs it up for every statement that is not a
  query by its grammar (one SQLite might never ask the authorizer about: VACUUM, for
  one), while a SELECT, VALUES or WITH statement, which cannot write without asking,
  runs without switching it (a switch expires every prepared statement);
* nothing runs away, and what stops a query is counted, not timed: a progress
  handler interrupts a query past its VM-step budget (``max_steps`` for one
  query, ``max_action_steps`` for every query of one action together: call
  :meth:`SqlGuard.begin_action` when an action starts) or its memory budget
  (SQLite's own count of the bytes it holds may not grow by more than
  ``max_memory_bytes`` during one query: :data:`MEMORY_COUNT`); compiling is bounded before it starts, by the size of the
  statement with its CTEs inlined (``max_inlined_tokens``, :mod:`.sqlshape`: a
  chain of self-joined CTEs doubles at every level), and while it runs, by the
  authorizer, which refuses a statement once it has been asked
  ``max_compile_calls`` times (every table and column named counts, each time a
  view or CTE is expanded). Work inside one VM instruction that the step count
  cannot see is held to ``max_cpu_seconds`` of the query's own thread's CPU time
  (a LIKE over a long text, say: a paused process spends none, a contended one
  about the same, and honest queries stay far below it); the checked ``printf``
  charges its work as steps. Those budgets decide what an agent's query did, the
  same on an idle machine and a busy one. The wall clock is only a safety net: a
  query past ``max_seconds`` is stopped with :class:`SqlSafetyStop`, an
  infrastructure error, never the agent's refusal.
  With ``deterministic=True`` the functions that read the clock or draw random
  numbers (``random()``, ``date('now')``, ``current_timestamp`` ...) are refused,
  so a query's result depends on the data alone. Connection limits cap value
  length, LIKE patterns and result width, the built-in functions whose work a
  number sets (``printf``'s width and precision) are held to the same value limit
  (:mod:`.sqlfuncs`), since one call is one VM instruction the handler cannot
  interrupt, and temporary b-trees (sorts, DISTINCT, recursive UNION) live in
  memory under that budget instead of spilling to files on disk. Every one of
  these limits belongs to the guard's own connection, so two environments with
  different budgets each keep theirs. SQLite's hard heap limit is the last line;
  it belongs to the whole process, so no budget carries it: it is set once, to
  :data:`PROCESS_HEAP_LIMIT_BYTES`, when the first guard is built, and lowered
  only on purpose, with :func:`set_process_heap_limit`;
* what the agent looked at is known from SQLite itself, by one definition that the
  live episode and replay share (:meth:`SqlGuard.tables_read`): the real tables
  whose b-tree (or one of whose indexes) the compiled query opens for reading, by
  their names in the schema. Names in comments or strings, CTEs named like a table,
  joins the planner drops and an agent's own EXPLAIN read nothing.

The authorizer is installed once and switched by a flag, so the environment's own
statements (loading, grading) run unhindered.

Preparing a statement is most of what a typical agent query costs, so a guard may
reuse prepared statements (``reuse_statements=True``, on a connection opened with a
statement cache). SQLite alone cannot be trusted with that here: a database replaced
by ``deserialize`` with the same schema cookie keeps every cached statement, compiled
against the old tables' pages, and such a statement would read whatever table now
lives on those pages. So every statement the guard runs for an agent is keyed by the
schema it is compiled against: its text carries the digest of the schema as SQLite
holds it (names, root pages, definitions), read again after every replacement (or
handed over with the image, read when the image was made). A statement is reused
only over an identical schema; any other schema gets a new text, prepared afresh
under the authorizer. What the authorizer said of a reused statement
(that it is a SELECT) is remembered per keyed text; forgetting it expires every
prepared statement, so each is authorized again before it next runs.

The guard's parts each have a module of their own, and every public name is importable
from here as well: the budget (:mod:`.sqlbudget`), what agent SQL may do and how a
refusal is worded (:mod:`.sqlrules`), the memory count and the process's heap limit
(:mod:`.sqlmemory`) and the schema a statement is keyed by (:mod:`.sqlschema`).
"""

from __future__ import annotations

import math
import sqlite3
import time
from dataclasses import dataclass

from .engine_functions import SQLITE
from .infra import Clocks, InfraFailure, ThreadClock
from .sqlbudget import ActionBudget, SqlBudget
from .sqlfuncs import BoundedFunctions, ClockFreeDates
from .sqlmemory import (
    MEMORY_COUNT,
    PROCESS_HEAP_LIMIT_BYTES,
    apply_process_heap_limit,
    memory_now,
    resident_bytes,
    set_process_heap_limit,
)
from .sqlrules import (
    ALLOWED_ACTIONS,
    NONDETERMINISTIC_FUNCTIONS,
    NOT_UTF8,
    QUERY_WORDS,
    READING_ONLY,
    SqlRefused,
    checked_query,
    clean_query,
    encodable,
    first_word,
    refusal,
)
from .sqlschema import SchemaKey, caches_statements, keyed_by, schema_digest, schema_key

_STEP_GRANULARITY = 1000  # VM instructions between two progress-handler calls
# The memory count is read on the first progress call, which sets the query's
# baseline (after it compiled: a statement taken from the cache compiles nothing), and
# on every call after; most agent queries finish before the first call.


@dataclass(frozen=True, slots=True)
class SqlResult:
    columns: list[str]
    rows: list[list[object]]
    truncated: bool
    tables_read: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {"columns": self.columns, "rows": self.rows, "truncated": self.truncated}


class SqlSafetyStop(InfraFailure):
    """A clock stopped the query: the safety net fired, an infrastructure error, not the agent's."""


class SqlGuard:
    """Owns the authorizer, limits and budget of one SQLite connection.

    The connection has no statement cache (``cached_statements=0``, as
    :func:`~.sqlite_image.open_connection` opens one), unless ``reuse_statements=True``:
    a guard must see every query it has not compiled over the same schema, and one
    taken from a cache it knows nothing of would be refused as not a query. A
    connection with a cache is refused, with ``ValueError``, when the guard is made.
    """

    __slots__ = (
        "_action",
        "_action_cpu",
        "_active",
        "_charged",
        "_clock",
        "_compile_calls",
        "_cpu_deadline",
        "_dates",
        "_deadline",
        "_deterministic",
        "_memory_ceiling",
        "_prepared",
        "_reuse",
        "_saw_select",
        "_schema",
        "_selects",
        "_started",
        "_step_limit",
        "_steps",
        "_stopped_by",
        "_text",
        "budget",
        "conn",
    )

    def __init__(
        self,
        conn: sqlite3.Connection,
        budget: SqlBudget | None = None,
        *,
        reuse_statements: bool = False,
        deterministic: bool = False,
    ) -> None:
        if not reuse_statements and caches_statements(conn):
            raise ValueError(
                "SqlGuard needs a connection without a statement cache, opened with"
                " sqlite3.connect(..., cached_statements=0) (sqlite_image.open_connection opens one),"
                " or reuse_statements=True: over a cache, a query run a second time is not"
                " authorized again and would be refused"
            )
        self.conn = conn
        self.budget = budget or SqlBudget()
        self._deterministic = deterministic
        self._clock: ThreadClock | None = None  # of the thread running the current query
        self._cpu_deadline = 0.0
        self._compile_calls = 0
        self._charged = 0  # steps charged by checked functions for work inside one VM instruction
        self._action = ActionBudget(self.budget.max_steps, self.budget.max_action_steps, "{:,} VM steps")
        self._action_cpu = ActionBudget(
            self.budget.max_cpu_seconds, self.budget.max_action_cpu_seconds, "{:g} s of CPU"
        )
        self._step_limit = 0  # the step count at which the running query stops
        self._active = False
        self._reuse = reuse_statements
        self._prepared = False  # the authorizer was asked while agent SQL was being compiled
        self._selects: dict[str, bool] = {}  # keyed text -> its compilation saw a SELECT
        self._steps = 0
        self._deadline = 0.0
        self._saw_select = False
        self._memory_ceiling = 0
        self._stopped_by = ""
        self._schema: tuple[int, str] | None = None  # (schema_version, fingerprint) last seen
        self._text = ""  # the running query's statement as run, once it is
        self._started: Clocks | None = None  # when the running query started, once it did
        self._dates = self._install(conn, deterministic)

    def _install(self, conn: sqlite3.Connection, deterministic: bool) -> ClockFreeDates | None:
        """Set the guard's authorizer, limits and checked functions on ``conn``; the dates
        refused for reading the clock, under ``deterministic=True``."""
        conn.set_authorizer(self._authorize)
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self.budget.max_value_bytes)
        conn.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, self.budget.max_like_pattern)
        conn.setlimit(sqlite3.SQLITE_LIMIT_COLUMN, self.budget.max_columns)
        functions = BoundedFunctions(self.budget.max_value_bytes, charge=self._charge)
        functions.install(conn)
        dates = ClockFreeDates(functions) if deterministic else None
        if dates is not None:
            dates.install(conn)
        apply_process_heap_limit(conn)
        # Sorts and temporary b-trees would otherwise spill to temp files: a hostile
        # query wrote 266 MB to disk in its 2 s. In memory, the memory budget stops it.
        conn.execute("PRAGMA temp_store=MEMORY")
        return dates

    def _authorize(
        self, action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None
    ) -> int:
        if not self._active:
            return sqlite3.SQLITE_OK
        self._prepared = True
        self._compile_calls += 1
        if self._compile_calls > self.budget.max_compile_calls:
            self._stopped_by = "compile"
            return sqlite3.SQLITE_DENY
        if action not in ALLOWED_ACTIONS:
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_SELECT:
            self._saw_select = True
        elif action == sqlite3.SQLITE_FUNCTION and arg2:
            name = arg2.lower()
            if not SQLITE.allows(name) or (self._deterministic and name in NONDETERMINISTIC_FUNCTIONS):
                return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    def _charge(self, steps: int) -> None:
        """Count work done inside one VM instruction (a checked function's) as VM steps."""
        if self._active:
            self._charged += steps

    def _progress(self) -> int:
        self._steps += _STEP_GRANULARITY
        spent = self._steps + self._charged
        if spent > self._step_limit:
            self._stopped_by = "VM-step" if spent > self.budget.max_steps else "action's VM-step"
        elif self._over_memory():
            self._stopped_by = "memory"
        elif time.perf_counter() > self._deadline:
            self._stopped_by = "clock"
        elif self._clock is not None and self._clock.cpu() > self._cpu_deadline:
            self._stopped_by = "CPU-time"
        else:
            return 0
        return 1  # non-zero interrupts the statement

    def begin_action(self) -> None:
        """An action starts: its queries share ``max_action_steps`` from now on (until the
        next call). A guard never told of actions holds each query to ``max_steps`` alone."""
        self._action.begin()
        self._action_cpu.begin()

    def end_actions(self) -> None:
        """Back to no action (a new episode starts): each query has its own budget alone
        until :meth:`begin_action` is called again."""
        self._action.end()
        self._action_cpu.end()

    def _over_memory(self) -> bool:
        if self._steps == _STEP_GRANULARITY:  # the first call: the baseline
            self._memory_ceiling = memory_now() + self.budget.max_memory_bytes
            return False
        return memory_now() > self._memory_ceiling

    def run(self, query: str) -> SqlResult:
        """Run one agent query; raise :class:`SqlRefused` with a readable reason, or
        :class:`SqlSafetyStop` if a safety net (a clock) stopped it."""
        sql = checked_query(query, self.budget)
        cpu = self._allow_next_query()
        # A statement that is a query by its grammar cannot write without asking the
        # authorizer; any other keeps the pragma as its backstop. (Switching the pragma
        # expires every prepared statement, so queries leave it alone.)
        backstop = first_word(sql) not in QUERY_WORDS
        if backstop:
            self.conn.execute("PRAGMA query_only=1")
        self._start_counting()
        # The clock of the thread running this query, taken anew for each: a guard passes
        # between threads (a server's worker pool, a world handed on), and a clock kept
        # from an ended thread cannot be read (EINVAL) or, its id reused, would time
        # another thread's work.
        clock = self._clock = ThreadClock()
        try:
            tables, fetched, columns = self._execute(sql, clock, cpu)
        except SqlRefused:
            raise
        except Exception as exc:
            raise self._stopped(exc) from None
        finally:
            saw_select = self._settle(clock, backstop)
        if not saw_select:
            # A statement SQLite never authorized as a SELECT (REINDEX, say) is not a
            # query; query_only kept it from writing, and the agent is told so.
            raise SqlRefused(READING_ONLY)
        return self._result(fetched, columns, tables)

    def _allow_next_query(self) -> float:
        """Set the VM steps the next query may take and return its CPU seconds, or refuse
        it when its action's queries have spent their budget."""
        steps, cpu = self._action.allowance(), self._action_cpu.allowance()
        if steps is None or cpu is None:
            raise SqlRefused((self._action if steps is None else self._action_cpu).used_up())
        self._step_limit = int(steps)
        return cpu

    def _start_counting(self) -> None:
        """The next query's counts start at nothing, and the authorizer judges what compiles."""
        self._steps = self._charged = 0
        self._stopped_by = ""
        if self._dates is not None:
            self._dates.refused = ""
        self._active = True
        self._text = ""  # the statement as run, once it is
        self._started = None  # when it started running, once it does

    def _execute(
        self, sql: str, clock: ThreadClock, cpu: float
    ) -> tuple[tuple[str, ...], list[tuple[object, ...]], list[str]]:
        """Compile ``sql`` under the authorizer as EXPLAIN first (once per text and schema),
        which runs none of it and says which tables it opens, then run it for real under the
        progress handler: the tables, the rows fetched (one past ``max_rows``), the columns."""
        tables = self._tables_opened(sql)
        text = self._text = self._keyed_by_last_schema(sql)
        self._saw_select = self._prepared = False
        self._compile_calls = 0
        started = self._started = clock.now()
        self._deadline = started.wall + self.budget.max_seconds
        self._cpu_deadline = started.cpu + cpu
        conn = self.conn
        conn.set_progress_handler(self._progress, _STEP_GRANULARITY)
        cursor = conn.execute(text)
        fetched = cursor.fetchmany(self.budget.max_rows + 1)
        columns = [_cut(str(d[0]), self.budget.max_cell_chars) for d in cursor.description or ()]
        cursor.close()
        return tables, fetched, columns

    def _settle(self, clock: ThreadClock, backstop: bool) -> bool:
        """After a query, finished or stopped: its action is charged its steps and CPU time,
        the authorizer and the progress handler stand down, the backstop is lifted. Whether
        SQLite authorized the statement as a SELECT."""
        self._active = False
        self._action.spend(self._steps + self._charged)
        started = self._started
        if started is not None:
            self._action_cpu.spend(clock.cpu() - started.cpu)
        conn = self.conn
        conn.set_progress_handler(None, 0)
        if backstop:
            conn.execute("PRAGMA query_only=0")
        return bool(self._text) and self._note_select(self._text)

    def _result(
        self, fetched: list[tuple[object, ...]], columns: list[str], tables: tuple[str, ...]
    ) -> SqlResult:
        cell = self._cell
        # Integers, most of what checks and counts return, are shown as they are.
        rows = [[v if type(v) is int else cell(v) for v in row] for row in fetched[: self.budget.max_rows]]
        truncated = len(fetched) > self.budget.max_rows
        return SqlResult(columns, rows, truncated, tables)

    def _stopped(self, exc: BaseException) -> Exception:
        """What to raise for a query that failed: the agent's refusal, or the safety net's stop."""
        stopped_by = self._stopped_by
        if stopped_by == "clock" and str(exc) == "interrupted":
            return SqlSafetyStop(
                f"the query ran past the {self.budget.max_seconds:g} s safety limit of the wall clock, "
                f"which no query within its {self.budget.max_steps:,} VM steps reaches on a healthy machine"
            )
        if self._dates is not None and self._dates.refused:
            return SqlRefused(
                f"{self._dates.refused}() is not available with 'now', 'localtime' or 'utc' or without "
                "a time value: results here may not depend on the clock or the time zone; give the date"
            )
        return SqlRefused(refusal(exc, stopped_by))

    def _note_select(self, text: str) -> bool:
        """Whether the statement just run was authorized as a SELECT.

        Compiled now (the authorizer was asked), the answer is what it saw, and it is
        remembered for the keyed text. Reused from the statement cache, the statement
        was compiled earlier under this guard's authorizer over the same schema (its
        text names the schema), and the remembered answer stands. An answer never
        remembered reads as no: refused, never let through.
        """
        if not self._reuse:
            return self._saw_select
        if self._prepared:
            if len(self._selects) >= _SELECTS_MAX:
                self.forget_statements()
            self._selects[text] = self._saw_select
            return self._saw_select
        return self._selects.get(text, False)

    def forget_statements(self) -> None:
        """Forget what the authorizer said of cached statements, and expire them all.

        Installing the authorizer again makes SQLite expire every prepared statement of
        the connection: each is compiled afresh, under the authorizer, before it next runs.
        """
        self._selects.clear()
        self.conn.set_authorizer(self._authorize)

    def _keyed_by_last_schema(self, sql: str) -> str:
        """:meth:`keyed`, by the schema just read (nothing has run since)."""
        if not self._reuse or self._schema is None:
            return self.keyed(sql)
        return keyed_by(self._schema[1], sql)

    def keyed(self, sql: str) -> str:
        """``sql`` as the guard runs it: with reuse on, led by a comment naming the schema.

        A desk running its own statements on a connection with a statement cache keys
        them the same way, so that none compiled over one schema runs over another.
        """
        if not self._reuse:
            return sql
        active, self._active = self._active, False  # the guard's own look at the schema
        try:
            return keyed_by(self._schema_fingerprint(), sql)
        finally:
            self._active = active

    def tables_read(self, query: str) -> tuple[str, ...]:
        """What :meth:`run` returns as ``tables_read`` for ``query``, without running it.

        The one definition, for the live episode and for replay alike: the real tables
        (canonical names) whose b-tree, or one of whose indexes, the compiled query
        opens for reading. Whatever the query names but never opens (a table shadowed
        by a CTE of its name, the right side of a LEFT JOIN the planner drops, a name
        in a string or a comment) is not read; an agent's own ``EXPLAIN`` runs none of
        its program, so it reads nothing. Refused queries raise :class:`SqlRefused`.
        """
        sql = checked_query(query, self.budget)
        self._active = True
        try:
            return self._tables_opened(sql)
        finally:
            self._active = False

    def schema_changed(self, schema: SchemaKey | None = None) -> None:
        """Call after replacing the database (``deserialize``): its schema may differ.

        ``schema`` is the replacement's :func:`schema_key`, read from the connection
        that made the image (as :func:`~.sqlite_image.stamped_image` leaves it): given,
        the guard need not read the schema again; without it, it reads it on next use.
        """
        self._schema = schema

    def _schema_fingerprint(self) -> str:
        """A digest of the schema as SQLite holds it (names, root pages, definitions).

        Read again whenever the schema cookie moves or the database was replaced; the
        digest of a schema already seen in this process is looked up, not recomputed.
        """
        version = self.conn.execute("PRAGMA schema_version").fetchone()[0]
        if self._schema is None or self._schema[0] != version:
            self._schema = (version, schema_digest(self.conn))
        return self._schema[1]

    def _tables_opened(self, sql: str) -> tuple[str, ...]:
        """The tables ``sql`` opens, from a cache keyed by the schema, the limits and the text.

        What a statement opens is decided when SQLite compiles it, from the schema and
        the text alone, so the answer for one text over one schema never changes and is
        computed once per process. (That holds while the database has no planner
        statistics: agents cannot run ANALYZE, and a desk that did would have to call
        :meth:`schema_changed` after it, as statistics tables are part of the schema.)
        """
        active, self._active = self._active, False  # the guard's own look at the schema
        try:
            key = (self._schema_fingerprint(), self._compile_limits(), sql)
        finally:
            self._active = active
        tables = _TABLES_OPENED.get(key)
        if tables is None:
            tables = self._compile_and_list(sql)
            if len(_TABLES_OPENED) >= _TABLES_OPENED_MAX:
                _TABLES_OPENED.clear()
            _TABLES_OPENED[key] = tables
        return tables

    def _compile_limits(self) -> tuple[int, int, int]:
        budget = self.budget
        return (budget.max_columns, budget.max_value_bytes, budget.max_like_pattern)

    def _compile_and_list(self, sql: str) -> tuple[str, ...]:
        """Compile ``sql`` under the (active) authorizer with EXPLAIN; name the tables it opens."""
        text = self.keyed(sql)  # a cached EXPLAIN lists the program of the schema it names
        self._compile_calls = 0
        if first_word(sql) == "explain":
            self._saw_select = self._prepared = False
            try:
                self.conn.execute(text).close()  # still compiled under the authorizer
            except Exception as exc:
                raise SqlRefused(refusal(exc, self._stopped_by)) from None
            self._note_select(text)  # run() may reuse this very statement
            return ()
        try:
            program = self.conn.execute("EXPLAIN " + text).fetchall()
        except Exception as exc:
            raise SqlRefused(refusal(exc, self._stopped_by)) from None
        opened = {int(row[3]) for row in program if row[1] in _OPEN_READ and row[4] == 0}
        if not opened:
            return ()
        active, self._active = self._active, False  # the guard's own look at the schema
        try:
            pages = self.conn.execute(
                "SELECT tbl_name, rootpage FROM sqlite_master WHERE rootpage > 0"
            ).fetchall()
        finally:
            self._active = active
        # An opened index counts as its table read: count(*) scans the smallest index.
        return tuple(sorted({table for table, root in pages if root in opened}))

    def _cell(self, value: object) -> object:
        if isinstance(value, str):
            return _cut(value, self.budget.max_cell_chars)
        if isinstance(value, bytes):
            return "0x" + value[: self.budget.max_blob_bytes].hex()
        if isinstance(value, float) and not math.isfinite(value):
            return str(value)
        return value


# EXPLAIN rows: addr, opcode, p1, p2 (root page), p3 (database: 0 is main), ...
_OPEN_READ = frozenset({"OpenRead", "ReopenIdx"})
# (schema fingerprint, compile limits, statement) -> tables it opens; shared by every
# guard in the process, so a query text is explained once per schema.
_TABLES_OPENED: dict[tuple[str, tuple[int, int, int], str], tuple[str, ...]] = {}
_TABLES_OPENED_MAX = 16_384
_SELECTS_MAX = 4096  # remembered answers per guard; more expire every cached statement


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "...[truncated]"


__all__ = [
    "MEMORY_COUNT",
    "NOT_UTF8",
    "PROCESS_HEAP_LIMIT_BYTES",
    "READING_ONLY",
    "ActionBudget",
    "SchemaKey",
    "SqlBudget",
    "SqlGuard",
    "SqlRefused",
    "SqlResult",
    "SqlSafetyStop",
    "clean_query",
    "encodable",
    "keyed_by",
    "resident_bytes",
    "schema_digest",
    "schema_key",
    "set_process_heap_limit",
]
