"""What every store shares: its result, its two refusals, its caps and how its budgets scale.

Every store answers ``tables()``, ``describe(table)`` and ``run(query)`` with the
same caps as the kernel's SQL guard (one statement of at most 20,000 characters and
20,000 tokens with its CTEs inlined, valid UTF-8, at most 50 rows back, cells cut
to 200 characters, a work budget and a memory budget) and says which of its tables
a query read (``tables_read``), the record the grader checks evidence against.

A query the agent got wrong raises :class:`StoreRefused`; a store that fails on
its own (files gone, an internal error) raises :class:`StoreFailure`, which the
grader counts as an infrastructure error, never as a wrong answer.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from batchgate_gym.kernel.infra import ThreadClock
from batchgate_gym.kernel.sqlguard import NOT_UTF8, ActionBudget, clean_query, encodable
from batchgate_gym.kernel.sqlshape import MAX_INLINED_TOKENS, too_large

from ..datasets.market import DataSpec

MAX_ROWS = 50
MAX_CELL_CHARS = 200
MAX_COLUMNS = 64
MAX_QUERY_CHARS = 20_000
DUCK_CPU_SECONDS = 2.0  # CPU time of one query: the DuckDB and PostgreSQL stores' work budget
DUCK_ACTION_CPU_SECONDS = 6.0  # ... and of every query of one action together
SAFETY_NET_SECONDS = 60.0  # wall clock: only a safety net, far above any honest query
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


def cpu_budget(spec: DataSpec, seconds: float | None = None) -> tuple[float, float, ActionBudget]:
    """A store timed in CPU seconds (DuckDB's, PostgreSQL's) over ``spec``: one query's budget
    (``seconds``, or :data:`DUCK_CPU_SECONDS` times :func:`budget_scale`), the wall-clock safety
    net, and the budget its queries of one action share (the CPU of three queries, whatever one
    query's budget)."""
    scale = budget_scale(spec)
    one = DUCK_CPU_SECONDS * scale if seconds is None else seconds
    action = ActionBudget(one, DUCK_ACTION_CPU_SECONDS * one / DUCK_CPU_SECONDS, "{:g} s of CPU")
    return one, SAFETY_NET_SECONDS * scale, action


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


class ListedTables:
    """``tables()`` and ``describe(table)`` over a store's fixed tables (``_tables``): the
    engine reads one table's columns and row count (:meth:`_columns_and_count`)."""

    _tables: tuple[str, ...]

    def tables(self) -> list[str]:
        return list(self._tables)

    def describe(self, table: str) -> dict[str, Any]:
        if table not in self._tables:
            raise StoreRefused(f"no table {table!r}")
        columns, count = self._columns_and_count(table)
        return {"table": table, "columns": columns, "rows": count}

    def _columns_and_count(self, table: str) -> tuple[list[list[Any]], int]:
        """``[[name, type], ...]`` and the row count of one of the store's tables;
        :class:`StoreFailure` if the engine cannot tell."""
        raise NotImplementedError


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


__all__ = [
    "BUDGET_SF",
    "MAX_ROWS",
    "ListedTables",
    "Store",
    "StoreFailure",
    "StoreRefused",
    "StoreResult",
    "Watchdog",
    "budget_scale",
    "cpu_budget",
    "first_line",
    "plain_cell",
    "query_text",
    "shaped_result",
]
