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
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import os
import re
import resource
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from .engine_functions import SQLITE, SQLITE_CLOCK_AND_CHANCE
from .infra import Clocks, InfraFailure, ThreadClock
from .sqlfuncs import BoundedFunctions, ClockFreeDates
from .sqlshape import MAX_INLINED_TOKENS, too_large

_ALLOWED_ACTIONS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
# The functions an agent may call are SQLite's allow-list (engine_functions.SQLITE); of
# those, what reads the clock or draws at random is refused under ``deterministic=True``.
# The date functions read the clock only when given 'now' or nothing: ClockFreeDates.
_NONDETERMINISTIC_FUNCTIONS = SQLITE_CLOCK_AND_CHANCE
# First keywords of statements that change something: refused before SQLite compiles them.
_WRITING_WORDS = frozenset(
    {
        "insert", "update", "delete", "replace", "upsert", "create", "drop", "alter", "pragma",
        "attach", "detach", "begin", "commit", "end", "rollback", "savepoint", "release",
        "vacuum", "reindex", "analyze",
    }
)  # fmt: skip
READING_ONLY = (
    "only reading queries are allowed: SELECT, WITH ... SELECT, VALUES or EXPLAIN; "
    "statements that write, change the schema or settings (INSERT, UPDATE, DELETE, CREATE, "
    "DROP, ALTER, PRAGMA, ATTACH, transactions, VACUUM ...) are refused"
)
_STEP_GRANULARITY = 1000  # VM instructions between two progress-handler calls
# The memory count is read on the first progress call, which sets the query's
# baseline (after it compiled: a statement taken from the cache compiles nothing), and
# on every call after; most agent queries finish before the first call.


@dataclass(frozen=True, slots=True)
class SqlBudget:
    """How much one agent query may cost and return."""

    max_steps: int = 2_000_000  # VM steps of one query: deterministic, decides what ran
    max_action_steps: int = 8_000_000  # VM steps of every query of one action together
    max_compile_calls: int = 20_000  # authorizer calls while one statement compiles
    max_inlined_tokens: int = MAX_INLINED_TOKENS  # tokens of the statement with its CTEs inlined (sqlshape)
    max_seconds: float = 30.0  # wall clock: a safety net only (SqlSafetyStop, an infrastructure error)
    max_cpu_seconds: float = 2.0  # CPU time of the query's thread: work the step count cannot see
    max_action_cpu_seconds: float = 6.0  # ... and of every query of one action together
    max_value_bytes: int = 20_000
    max_like_pattern: int = 200
    max_columns: int = 64
    max_rows: int = 50
    max_cell_chars: int = 200
    max_blob_bytes: int = 100
    max_query_chars: int = 20_000
    max_memory_bytes: int = 64 << 20  # growth of SQLite's memory allowed during one query (MEMORY_COUNT)


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


def _apply_process_heap_limit(conn: sqlite3.Connection) -> None:
    if not _process_heap["applied"]:
        conn.execute(f"PRAGMA hard_heap_limit={int(PROCESS_HEAP_LIMIT_BYTES)}")
        _process_heap["applied"] = True


@dataclass(frozen=True, slots=True)
class SqlResult:
    columns: list[str]
    rows: list[list[object]]
    truncated: bool
    tables_read: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {"columns": self.columns, "rows": self.rows, "truncated": self.truncated}


class ActionBudget:
    """A per-query budget that one action's queries also share: ``per_query`` each, at most
    ``per_action`` together. Until :meth:`begin` is first called (an episode calls it as each
    action starts), each query has ``per_query`` alone. ``unit`` words an amount (a format)."""

    __slots__ = ("per_action", "per_query", "spent", "unit")

    def __init__(self, per_query: float, per_action: float, unit: str) -> None:
        self.per_query = per_query
        self.per_action = per_action
        self.unit = unit
        self.spent: float | None = None  # spent by this action's earlier queries; None: no action

    def begin(self) -> None:
        self.spent = 0

    def end(self) -> None:
        """No action any more: each query has ``per_query`` alone until the next :meth:`begin`."""
        self.spent = None

    def allowance(self) -> float | None:
        """What the next query may spend (less than ``per_query`` near the action's end); None: nothing."""
        if self.spent is None:
            return self.per_query
        left = self.per_action - self.spent
        return min(self.per_query, left) if left > 0 else None

    def spend(self, amount: float) -> None:
        if self.spent is not None:
            self.spent += amount

    def used_up(self) -> str:
        """The refusal of a query that comes after the action's budget is spent."""
        return f"this action's queries have used their {self.unit.format(self.per_action)}; run the query in a later action"


class SqlRefused(Exception):
    """The query was refused, failed or was interrupted; nothing ran to completion."""


class SqlSafetyStop(InfraFailure):
    """A clock stopped the query: the safety net fired, an infrastructure error, not the agent's."""


def clean_query(query: str) -> str:
    """One statement: surrounding whitespace and trailing semicolons removed."""
    return query.strip().rstrip(";").rstrip()


NOT_UTF8 = "the query is not valid text: it holds a lone surrogate, which no UTF-8 text can carry"


def encodable(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (no lone surrogates), as every engine reads it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
_memory_now: Callable[[], int] = _SQLITE_MEMORY_USED or resident_bytes


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
        "_step_limit",
        "_steps",
        "_stopped_by",
        "_tables",
        "_tables_certain",
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
        if not reuse_statements and _caches_statements(conn):
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
        self._tables: set[str] = set()
        self._tables_certain: set[str] = set()
        self._steps = 0
        self._deadline = 0.0
        self._saw_select = False
        self._memory_ceiling = 0
        self._stopped_by = ""
        self._schema: tuple[int, str] | None = None  # (schema_version, fingerprint) last seen
        conn.set_authorizer(self._authorize)
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self.budget.max_value_bytes)
        conn.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, self.budget.max_like_pattern)
        conn.setlimit(sqlite3.SQLITE_LIMIT_COLUMN, self.budget.max_columns)
        functions = BoundedFunctions(self.budget.max_value_bytes, charge=self._charge)
        functions.install(conn)
        self._dates = ClockFreeDates(functions) if deterministic else None
        if self._dates is not None:
            self._dates.install(conn)
        _apply_process_heap_limit(conn)
        # Sorts and temporary b-trees would otherwise spill to temp files: a hostile
        # query wrote 266 MB to disk in its 2 s. In memory, the memory budget stops it.
        conn.execute("PRAGMA temp_store=MEMORY")

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
        if action not in _ALLOWED_ACTIONS:
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_SELECT:
            self._saw_select = True
        elif action == sqlite3.SQLITE_FUNCTION and arg2:
            name = arg2.lower()
            if not SQLITE.allows(name) or (self._deterministic and name in _NONDETERMINISTIC_FUNCTIONS):
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
            self._memory_ceiling = _memory_now() + self.budget.max_memory_bytes
            return False
        return _memory_now() > self._memory_ceiling

    def run(self, query: str) -> SqlResult:
        """Run one agent query; raise :class:`SqlRefused` with a readable reason, or
        :class:`SqlSafetyStop` if a safety net (a clock) stopped it."""
        sql = self._checked(query)
        budget = self.budget
        steps, cpu = self._action.allowance(), self._action_cpu.allowance()
        if steps is None or cpu is None:
            raise SqlRefused((self._action if steps is None else self._action_cpu).used_up())
        self._step_limit = int(steps)
        conn = self.conn
        # A statement that is a query by its grammar cannot write without asking the
        # authorizer; any other keeps the pragma as its backstop. (Switching the pragma
        # expires every prepared statement, so queries leave it alone.)
        backstop = _first_word(sql) not in _QUERY_WORDS
        if backstop:
            conn.execute("PRAGMA query_only=1")
        self._steps = self._charged = 0
        self._stopped_by = ""
        if self._dates is not None:
            self._dates.refused = ""
        self._active = True
        text = ""  # the statement as run, once it is
        started: Clocks | None = None  # when it started running, once it does
        # The clock of the thread running this query, taken anew for each: a guard passes
        # between threads (a server's worker pool, a world handed on), and a clock kept
        # from an ended thread cannot be read (EINVAL) or, its id reused, would time
        # another thread's work.
        clock = self._clock = ThreadClock()
        try:
            # Compiled under the authorizer as EXPLAIN first (once per text and schema),
            # which runs none of it and says which tables it opens, then for real.
            tables = self._tables_opened(sql)
            text = self._keyed_by_last_schema(sql)
            self._saw_select = self._prepared = False
            self._compile_calls = 0
            started = clock.now()
            self._deadline = started.wall + budget.max_seconds
            self._cpu_deadline = started.cpu + cpu
            conn.set_progress_handler(self._progress, _STEP_GRANULARITY)
            cursor = conn.execute(text)
            fetched = cursor.fetchmany(self.budget.max_rows + 1)
            columns = [_cut(str(d[0]), self.budget.max_cell_chars) for d in cursor.description or ()]
            cursor.close()
        except SqlRefused:
            raise
        except Exception as exc:
            raise self._stopped(exc) from None
        finally:
            self._active = False
            self._action.spend(self._steps + self._charged)
            if started is not None:
                self._action_cpu.spend(clock.cpu() - started.cpu)
            conn.set_progress_handler(None, 0)
            if backstop:
                conn.execute("PRAGMA query_only=0")
            saw_select = bool(text) and self._note_select(text)
        if not saw_select:
            # A statement SQLite never authorized as a SELECT (REINDEX, say) is not a
            # query; query_only kept it from writing, and the agent is told so.
            raise SqlRefused(READING_ONLY)
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
        return SqlRefused(_describe(exc, stopped_by))

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
        sql = self._checked(query)
        self._active = True
        try:
            return self._tables_opened(sql)
        finally:
            self._active = False

    def _checked(self, query: object) -> str:
        if not isinstance(query, str):
            raise SqlRefused("query must be a string")
        if len(query) > self.budget.max_query_chars:
            raise SqlRefused(f"query longer than {self.budget.max_query_chars} characters")
        if not encodable(query):
            raise SqlRefused(NOT_UTF8)
        sql = clean_query(query)
        if not sql:
            raise SqlRefused("empty query")
        if _first_word(sql) in _WRITING_WORDS:
            raise SqlRefused(READING_ONLY)
        oversized = too_large(sql, self.budget.max_inlined_tokens)
        if oversized:
            raise SqlRefused(oversized)
        return sql

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
            self._schema = (version, _digest_of_rows(self.conn))
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
        if _first_word(sql) == "explain":
            self._saw_select = self._prepared = False
            try:
                self.conn.execute(text).close()  # still compiled under the authorizer
            except Exception as exc:
                raise SqlRefused(_describe(exc, self._stopped_by)) from None
            self._note_select(text)  # run() may reuse this very statement
            return ()
        try:
            program = self.conn.execute("EXPLAIN " + text).fetchall()
        except Exception as exc:
            raise SqlRefused(_describe(exc, self._stopped_by)) from None
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


SchemaKey = tuple[int, str]
"""A schema as the guard knows it: its cookie and the digest of its ``sqlite_master``."""


def _caches_statements(conn: sqlite3.Connection) -> bool:
    """Whether ``conn`` keeps prepared statements: a text run twice is compiled (and
    authorized) only once."""
    compiled: list[int] = []

    def count(action: int, *_names: str | None) -> int:
        compiled.append(action)
        return sqlite3.SQLITE_OK

    conn.set_authorizer(count)
    try:
        for _ in range(2):
            conn.execute("SELECT 1 /* statement cache probe */").close()
    finally:
        conn.set_authorizer(None)
    return compiled.count(sqlite3.SQLITE_SELECT) < 2


def keyed_by(fingerprint: str, sql: str) -> str:
    """``sql`` led by a comment naming its schema's digest (a :data:`SchemaKey`'s second
    part): the text a statement is compiled and cached under, so that none compiled over
    one schema runs over another."""
    return f"/* schema {fingerprint} */ {sql}"


def schema_key(conn: sqlite3.Connection) -> SchemaKey:
    """The cookie and digest of ``conn``'s schema now, as a guard over a copy would read them."""
    version: int = conn.execute("PRAGMA schema_version").fetchone()[0]
    return version, schema_digest(conn)


def schema_digest(conn: sqlite3.Connection) -> str:
    """The digest half of :func:`schema_key`, for a builder that stamps its own cookie."""
    return _digest_of_rows(conn)


def _digest_of_rows(conn: sqlite3.Connection) -> str:
    rows = tuple(conn.execute("SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master").fetchall())
    digest = _SCHEMA_DIGESTS.get(rows)
    if digest is None:
        # repr(sorted(rows, key=repr)), each row's repr made once
        digest = hashlib.sha256(("[" + ", ".join(sorted(map(repr, rows))) + "]").encode()).hexdigest()
        if len(_SCHEMA_DIGESTS) >= _SCHEMA_DIGESTS_MAX:
            _SCHEMA_DIGESTS.clear()
        _SCHEMA_DIGESTS[rows] = digest
    return digest


# EXPLAIN rows: addr, opcode, p1, p2 (root page), p3 (database: 0 is main), ...
_OPEN_READ = frozenset({"OpenRead", "ReopenIdx"})
# First keywords of statements that are queries by SQLite's grammar: SELECT and VALUES
# are select statements, and WITH leads a select or a write the authorizer refuses.
_QUERY_WORDS = frozenset({"select", "values", "with"})
# (schema fingerprint, compile limits, statement) -> tables it opens; shared by every
# guard in the process, so a query text is explained once per schema.
_TABLES_OPENED: dict[tuple[str, tuple[int, int, int], str], tuple[str, ...]] = {}
_TABLES_OPENED_MAX = 16_384
# sqlite_master's rows -> their digest, shared by every guard: a restored image's
# schema is digested once per process.
_SCHEMA_DIGESTS: dict[tuple[tuple[object, ...], ...], str] = {}
_SCHEMA_DIGESTS_MAX = 1024
_SELECTS_MAX = 4096  # remembered answers per guard; more expire every cached statement
_LEADING_NOISE = re.compile(r"(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?(?:\*/|\Z))*", re.DOTALL)
_WORD = re.compile(r"[A-Za-z_]+")


def _first_word(sql: str) -> str:
    """The statement's first keyword, lower case, past white space and comments."""
    noise = _LEADING_NOISE.match(sql)  # always matches (every part is optional), maybe empty
    word = _WORD.match(sql, noise.end() if noise else 0)
    return word.group().lower() if word else ""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "...[truncated]"


def _describe(exc: BaseException, stopped_by: str) -> str:
    message = str(exc) or type(exc).__name__
    if stopped_by == "compile":
        return (
            "query refused: compiling it names too many tables and columns "
            "(a chain of CTEs that each read the one before more than once doubles at every level)"
        )
    if message == "interrupted" and stopped_by == "CPU-time":
        return (
            "query interrupted: it exceeded its CPU-time budget (work inside single steps, "
            "a LIKE or GLOB over long text say, that the VM-step count cannot see)"
        )
    if message == "interrupted":
        return f"query interrupted: it exceeded its {stopped_by or 'step'} budget"
    if isinstance(exc, MemoryError):
        return "query ran out of memory"
    if message in ("not authorized", "authorization denied"):
        return READING_ONLY
    if message.startswith("not authorized to use function: "):
        name = message.rpartition(": ")[2]
        if SQLITE.allows(name):
            return f"function {name} is not available here: it reads the clock or draws at random"
        return f"function {name} is not available here: {SQLITE.reason(name)}"
    return f"{type(exc).__name__}: {message}"
