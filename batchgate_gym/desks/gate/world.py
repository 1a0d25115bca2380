"""The warehouse world of one episode and the tools that act on it.

Each episode runs on its own in-memory SQLite database: ``wh_customers`` and
``wh_orders`` (the warehouse), one all-TEXT ``stg_*`` table per batch (staging),
and the revenue mart, a plain join-and-sum with no dedup. The loader is the point
of the exercise: it accepts anything and always answers ``errors: 0``.

Building a database from rows is slow next to restoring one, so each case is
prepared once (its database image, insert rows, listing and profiles) and every
reset only deserializes the image into the world's long-lived connection.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import operator
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from batchgate_gym.kernel.codec import ToolCall, ToolSpec
from batchgate_gym.kernel.ledger import Ledger, LogIntegrityError, settings_json
from batchgate_gym.kernel.plain import FrozenDict, frozen
from batchgate_gym.kernel.sqlguard import (
    SchemaKey,
    SqlBudget,
    SqlGuard,
    SqlRefused,
    keyed_by,
    schema_digest,
)
from batchgate_gym.kernel.sqlite_image import (
    open_connection,
    restore,
    schema_image,
    stamp,
    transaction,
)

from .cases import Case, StagingBatch
from .contract import DEFECT_TYPES, ORDER_COLUMNS, TABLE_COLUMNS
from .profile import profile_rows
from .tools import GATE_TOOLS

_SCHEMA = (
    "CREATE TABLE wh_customers (customer_id TEXT, email TEXT, country TEXT, signup_date TEXT)",
    "CREATE TABLE wh_orders (order_id TEXT, customer_id TEXT, amount REAL, currency TEXT,"
    " status TEXT, order_date TEXT)",
    # Lookups by key (the mart's join, duplicate and orphan checks) would otherwise scan
    # the warehouse once per staged row; non-unique, so loading a duplicate still works.
    "CREATE INDEX wh_orders_order_id ON wh_orders (order_id)",
    "CREATE INDEX wh_customers_customer_id ON wh_customers (customer_id)",
)
_INSERT = {
    "customers": "INSERT INTO wh_customers VALUES (?, ?, ?, ?)",
    "orders": "INSERT INTO wh_orders VALUES (?, ?, ?, ?, ?, ?)",
}
MART_SQL = (
    "SELECT COALESCE(SUM(o.amount), 0) FROM wh_orders o JOIN wh_customers c ON o.customer_id = c.customer_id"
)
if len(ORDER_COLUMNS) != 6 or ORDER_COLUMNS.index("amount") != 2:
    raise ImportError("warehouse_rows reads an order's six cells, the amount third")
# Statements one world keeps compiled: an eval split's worth (32 cases) of checks,
# orphan counts, loads and marts, each keyed by its case's schema (a compiled contract
# check holds about 22 KB; a load or a mart a few KB). Cycling through more keyed
# statements than this would miss on every one.
_CACHED_STATEMENTS = 256
_SMALL_CASE_ROWS = 2_000  # rows in the warehouse and staging together, for 1 KB pages
_WIDEST_TABLE = max(len(columns) for columns in TABLE_COLUMNS.values())


def loader_amount(text: str) -> float:
    """What the loader stores for an amount: the number, or 0.0 if it is not one."""
    try:
        return float(text)
    except ValueError:
        return 0.0


def loaded_amounts(amounts: Sequence[str]) -> list[float]:
    """Each amount as :func:`loader_amount` reads it: ``float``, in one pass while every
    amount is a number."""
    try:
        return list(map(float, amounts))
    except ValueError:
        return list(map(loader_amount, amounts))


def warehouse_rows(table: str, rows: tuple[tuple[str, ...], ...]) -> list[tuple[Any, ...]]:
    """The rows the loader writes for a batch of ``table``: an order's amount as
    :func:`loaded_amounts` reads it."""
    if table == "customers":
        return list(rows)
    amounts = loaded_amounts([row[2] for row in rows])
    return [
        (o, c, amount, cur, st, day) for (o, c, _, cur, st, day), amount in zip(rows, amounts, strict=True)
    ]


@dataclass(eq=False)
class PreparedCase:
    """Everything about a case that does not change during an episode."""

    case: Case
    image: bytes
    listing: Mapping[str, Any]  # read-only: every world of this case hands it out
    reference_mart: float  # the mart had every clean batch been loaded once, customers first
    schema: SchemaKey | None = None  # the image's schema as a guard reads it, read once
    digest: str = field(init=False)  # the case's, which every log of it begins by naming
    _profiles: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    _inserts: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.digest = self.case.digest

    def inserts(self, batch: StagingBatch) -> list[tuple[Any, ...]]:
        """The rows the loader writes for ``batch`` (amounts as it stores them), made on
        its first load: a batch never loaded is never converted."""
        rows = self._inserts.get(batch.batch_id)
        if rows is None:
            rows = self._inserts[batch.batch_id] = warehouse_rows(batch.table, batch.rows)
        return rows

    def profile(self, batch: StagingBatch) -> Mapping[str, Any]:
        """The batch's column profile, made on first use; read-only, as every world shares it."""
        cached = self._profiles.get(batch.batch_id)
        if cached is None:
            columns = profile_rows(batch.columns, batch.rows)
            cached = frozen(
                {
                    "batch_id": batch.batch_id,
                    "table": batch.table,
                    "rows": len(batch.rows),
                    "columns": columns,
                }
            )
            self._profiles[batch.batch_id] = cached
        return cached


def prepare(case: Case) -> PreparedCase:
    """The case's prepared world data, built on first use and shared by every world."""
    return case.derived("prepared", lambda: _build(case))


def _small(case: Case) -> bool:
    """Whether the case's rows, in the warehouse and staging together, make a small image."""
    rows = len(case.customers) + len(case.orders) + sum(len(batch.rows) for batch in case.batches)
    return rows <= _SMALL_CASE_ROWS


def _page_size(case: Case) -> str:
    """Small pages for a small case: every live world holds a copy of its image, and one
    of the default 4 KB pages per table would be mostly empty; big batches keep 4 KB."""
    return f"PRAGMA page_size={1024 if _small(case) else 4096}"


def _build(case: Case) -> PreparedCase:
    conn = _builder()
    try:
        return _build_on(conn, case)
    finally:
        if not _small(case):  # let go of a big case's rows now; a small one waits for the next build
            conn.deserialize(schema_image(_SCHEMA))


def _builder() -> sqlite3.Connection:
    """This thread's connection for building images (opening one costs more than a
    small case's whole image), keeping its fixed statements compiled (:func:`_build_on`)."""
    held = getattr(_BUILDERS, "held", None)
    if held is None or held[0] != os.getpid():  # a forked child opens its own
        held = _BUILDERS.held = (os.getpid(), open_connection(cached_statements=_BUILD_STATEMENTS))
    return held[1]


_BUILDERS = threading.local()


# -- connections kept warm between worlds ------------------------------------------------
# A world's connection holds every statement it compiled, keyed by its case's schema: an
# evaluation that makes a new environment per run over the same cases would compile them
# all again. A closed world leaves its connection (and the guard set up on it) for the
# next world of the same budget in this process; a forked child starts with none.
_CONNECTIONS_KEPT = 4
_KEPT_LOCK = threading.Lock()
_kept: dict[SqlBudget, list[tuple[sqlite3.Connection, SqlGuard]]] = {}
_kept_pid = os.getpid()


def _kept_here() -> dict[SqlBudget, list[tuple[sqlite3.Connection, SqlGuard]]]:
    """The connections kept in this process (call with the lock held)."""
    global _kept_pid
    if _kept_pid != os.getpid():  # a forked child: its parent's connections are not its own
        _kept.clear()
        _kept_pid = os.getpid()
    return _kept


def _take_connection(budget: SqlBudget | None) -> tuple[sqlite3.Connection, SqlGuard]:
    """A guarded connection for a new world: one a closed world left, or a new one."""
    with _KEPT_LOCK:
        kept = _kept_here().get(budget or SqlBudget())
        if kept:
            return kept.pop()
    conn = open_connection(cached_statements=_CACHED_STATEMENTS)
    return conn, SqlGuard(conn, budget, reuse_statements=True)


def _keep_connection(conn: sqlite3.Connection, guard: SqlGuard) -> None:
    """Keep a closed world's connection for the next world, or close it if enough are kept."""
    with _KEPT_LOCK:
        kept = _kept_here()
        if sum(map(len, kept.values())) < _CONNECTIONS_KEPT:
            kept.setdefault(guard.budget, []).append((conn, guard))
            return
    conn.close()


@functools.cache
def _closed_connection() -> SqlGuard:
    """What a closed world holds: a guard over a connection that is closed."""
    guard = SqlGuard(open_connection())
    guard.conn.close()
    return guard


def _build_on(conn: sqlite3.Connection, case: Case) -> PreparedCase:
    """The case's image in one transaction: the warehouse's rows, then (on a savepoint
    rolled back) the reference mart, then the staging tables and the stamp.

    Until the first staging table is made, the schema is the empty image's, the same for
    every case: the statements run there (the warehouse's inserts, the reference's, the
    mart) and those naming no table stay compiled on the builder from case to case. A
    rollback after a schema change would make SQLite drop every compiled statement and
    read the schema again, so the reference comes first. A statement naming a staging
    table is compiled against this image's schema only: its text names the image
    (``/* image N */``), so no later image's build finds it among the kept statements.
    SQLite reads the schema once, when the first staging table is made; the stamp comes
    last, as a stamp written before other statements would make it read it again.
    """
    conn.deserialize(schema_image((_page_size(case), *_SCHEMA)))
    with transaction(conn):
        _insert_rows(conn, "customers", _loader_cells("customers", [case.customers]), whole=True)
        _insert_rows(conn, "orders", _loader_cells("orders", [case.orders]), whole=True)
        conn.execute("SAVEPOINT reference")
        reference = _reference_mart(conn, case)
        conn.execute("ROLLBACK TO reference")  # the image holds what the case stages, no more
        image_number = next(_IMAGE_NUMBERS)
        for batch in case.batches:
            columns = ", ".join(f"{name} TEXT" for name in batch.columns)
            conn.execute(f'/* image {image_number} */ CREATE TABLE "{batch.staging_table}" ({columns})')
            marks = ", ".join("?" * len(batch.columns))
            insert = f'/* image {image_number} */ INSERT INTO "{batch.staging_table}" VALUES ({marks})'
            conn.executemany(insert, batch.rows)
        digest = schema_digest(conn)  # the stamp moves the cookie only
        schema = (stamp(conn), digest)
    image = conn.serialize()
    listing = FrozenDict(  # frozen() of the same dicts and list, made read-only as it is built
        batches=tuple(
            FrozenDict(
                batch_id=b.batch_id,
                table=b.table,
                rows=len(b.rows),
                staging_table=b.staging_table,
                source=b.source,
            )
            for b in case.batches
        )
    )
    return PreparedCase(case, image, listing, reference, schema)


# Statements the builder keeps compiled: the transaction's, the mart, and the warehouse's
# inserts of each chunk size (``_insert_rows``), with room for an image's own statements.
_BUILD_STATEMENTS = 96
_IMAGE_NUMBERS = itertools.count(1)  # each image's own statements name it (``_build_on``)
_MOST_ROWS_A_STATEMENT = 256  # 1,536 parameters for an order's six columns


def _loader_cells(
    table: str, row_lists: Iterable[Sequence[tuple[str, ...]]], columns: tuple[str, ...] | None = None
) -> list[Any]:
    """The cells the loader writes for these rows of ``table``, in ``columns`` (all by
    default), row after row in one list: as :func:`warehouse_rows` makes them (an order's
    amount as :func:`loaded_amounts` reads it), converted in place, a column at a time."""
    rows = itertools.chain.from_iterable(row_lists)
    if columns is None or columns == TABLE_COLUMNS[table]:
        cells: list[Any] = list(itertools.chain.from_iterable(rows))
        if table == "orders":  # the amount, third of an order's six cells (ImportError above)
            cells[2::6] = loaded_amounts(cells[2::6])
        return cells
    pick = operator.itemgetter(*(TABLE_COLUMNS[table].index(name) for name in columns))
    width = len(columns)
    cells = list(itertools.chain.from_iterable(map(pick, rows))) if width > 1 else list(map(pick, rows))
    if table == "orders" and "amount" in columns:
        at = columns.index("amount")
        cells[at::width] = loaded_amounts(cells[at::width])
    return cells


def _insert_rows(
    conn: sqlite3.Connection,
    table: str,
    cells: list[Any],
    whole: bool = False,
    columns: tuple[str, ...] | None = None,
) -> None:
    """Rows into the warehouse's ``table`` (their ``cells``, row after row) by multi-row
    INSERTs, whose texts stay compiled on the builder: a statement a row would pay its own
    run, from Python and in SQLite. ``whole``: the rows in one statement (the warehouse,
    as many rows in every generated case); otherwise, and past the most rows a statement
    takes, in chunks of a power of two rows, so that a handful of texts serves any count.
    ``columns``: the cells fill these columns of each row (the rest NULL); all by default."""
    columns = TABLE_COLUMNS[table] if columns is None else columns
    width = len(columns)
    start, left = 0, len(cells) // width
    while left:
        if whole and left <= _MOST_ROWS_A_STATEMENT:
            count = left
        else:
            count = 1 << min(left.bit_length() - 1, _MOST_ROWS_A_STATEMENT.bit_length() - 1)
        conn.execute(_multi_row_insert(table, count, columns), cells[start : start + count * width])
        start += count * width
        left -= count


@functools.cache
def _multi_row_insert(table: str, count: int, columns: tuple[str, ...]) -> str:
    row = "(" + ", ".join("?" * len(columns)) + ")"
    named = "" if columns == TABLE_COLUMNS[table] else " (" + ", ".join(columns) + ")"
    return f"INSERT INTO wh_{table}{named} VALUES " + ", ".join([row] * count)


def _reference_mart(conn: sqlite3.Connection, case: Case) -> float:
    """The grader's reference, on the build connection: every clean batch loaded once,
    customers first, and the mart read.

    Each batch's rows go in as :meth:`GateWorld.insert` puts them there (orders with their
    amounts as :func:`loader_amount` reads them), in the staged order, each row's cells in
    the columns the mart reads (:func:`mart_columns`; the others stay NULL, as nothing
    reads them before the rollback), so the mart sees what the live loader would leave.
    """
    for table in ("customers", "orders"):
        clean = [batch.rows for batch in case.batches if batch.table == table and not batch.truth.defective]
        columns = mart_columns()[table]
        _insert_rows(conn, table, _loader_cells(table, clean, columns), columns=columns)
    return mart_usd(conn)


@functools.cache
def mart_columns() -> Mapping[str, tuple[str, ...]]:
    """The warehouse columns :data:`MART_SQL` reads, per table, in the table's order.

    Asked of SQLite, whose authorizer is told of every column a statement reads when it
    compiles, so the reference binds what the mart reads however its query changes; a
    table of which it reads no column keeps them all (its rows may still count).
    """
    conn = sqlite3.connect(":memory:")
    conn.deserialize(schema_image(_SCHEMA))  # the empty warehouse every image starts from
    read: set[tuple[str, str]] = set()

    def note(action: int, table: str | None, column: str | None, _db: str | None, _by: str | None) -> int:
        if action == sqlite3.SQLITE_READ and table and column:
            read.add((table, column))
        return sqlite3.SQLITE_OK

    try:
        conn.set_authorizer(note)
        conn.execute("EXPLAIN " + MART_SQL).fetchall()  # compiled, nothing read
    finally:
        conn.close()
    columns = {
        table: tuple(name for name in names if (f"wh_{table}", name) in read)
        for table, names in TABLE_COLUMNS.items()
    }
    return FrozenDict({table: found or TABLE_COLUMNS[table] for table, found in columns.items()})


# A customers batch loaded by the live loader: copied by SQLite from its staging table, in
# staged order, cell for cell (the warehouse's customers are all TEXT, as staged).
_COPY_CUSTOMERS = 'INSERT INTO wh_customers SELECT {columns} FROM "{{staging}}" ORDER BY rowid'.format(
    columns=", ".join(TABLE_COLUMNS["customers"])
)


def mart_usd(conn: sqlite3.Connection) -> float:
    usd: float = conn.execute(MART_SQL).fetchone()[0]
    return round(usd, 2)


class GateWorld:
    """One episode's warehouse and the seven tools (the kernel's *desk*).

    The connection lives as long as the world; ``reset`` restores a case's image
    into it, so a reset costs a deserialize, not a database build. Each reset starts
    a new log whose first entry binds it to the case (its digest) and records the
    settings a replay needs (the SQL budget); ``log_key`` chains it with HMAC.

    The world's own statements (loads, orphan counts, the mart) are keyed by the
    schema, as the guard keys an agent's (:meth:`SqlGuard.keyed`): each is reused
    over its own case's image and never runs compiled over another schema. When
    every statement of an episode is cached, SQLite never parses the restored schema.
    """

    def __init__(self, budget: SqlBudget | None = None, log_key: bytes | None = None) -> None:
        if budget is not None and budget.max_columns < _WIDEST_TABLE:
            # SQLite refuses to read a schema with a table wider than its column limit.
            raise ValueError(f"sql_budget.max_columns must be at least {_WIDEST_TABLE}, the widest table")
        # Prepared statements are reused (a careful agent's check costs two thirds as much
        # once compiled); the guard keys each agent statement by the schema it reads.
        self.conn, self.guard = _take_connection(budget)
        self.log_key = log_key
        self._settings: dict[str, Any] | None = None
        self._settings_text = ""  # settings_json(self._settings), made with it
        self.ledger = self.new_ledger()
        self.prepared: PreparedCase | None = None
        self._handlers: dict[str, Callable[..., Mapping[str, Any]]] = {
            "read_contract": self.read_contract,
            "list_batches": self.list_batches,
            "profile_batch": self.profile_batch,
            "run_sql": self.run_sql,
            "load_batch": self.load_batch,
            "quarantine_batch": self.quarantine_batch,
            "submit_report": self.submit_report,
        }
        self._reset_state()

    def new_ledger(self) -> Ledger:
        """The log each reset begins (a team world's names the agent of each entry)."""
        return Ledger(self.log_key)

    def close(self) -> None:
        """Done with this world: its connection, with every statement it compiled, goes to
        the next world made with the same SQL budget in this process (a few are kept, any
        more closed). The world is closed as a closed connection is: using it raises
        ``sqlite3.ProgrammingError``; closing it again does nothing."""
        closed = _closed_connection()
        if self.guard is closed:
            return
        conn, guard = self.conn, self.guard
        self.conn, self.guard = closed.conn, closed
        _keep_connection(conn, guard)

    def log_settings(self) -> dict[str, Any]:
        """What entry 0 records for replay: every limit that decides what a query did."""
        if self._settings is None:
            self._settings = {"sql_budget": dataclasses.asdict(self.guard.budget)}
            self._settings_text = settings_json(self._settings)
        return self._settings

    def _reset_state(self, nonce: str | None = None) -> None:
        ledger = self.ledger = self.new_ledger()
        prepared = self.prepared
        if prepared is None:
            return
        # Entry 0 is hashed afresh on every reset: its nonce is new unless the seed repeats,
        # so kept entries would serve a benchmark's repeated seeds, not a user's play.
        settings = self.log_settings()  # made once, with its text
        ledger.begin(prepared.digest, settings, nonce, self._settings_text)
        self.load_counts: dict[str, int] = {}
        self.quarantined: dict[str, tuple[str, str]] = {}
        self.report: tuple[list[str], list[str]] | None = None

    def reset(self, case: Case, nonce: str | None = None) -> None:
        """Start an episode of ``case``; ``nonce`` is the episode's, for the log's entry 0."""
        prepared = self.prepared = prepare(case)
        restore(self.guard, prepared.image, prepared.schema)
        self.guard.end_actions()  # the guard may come from an earlier world, mid-action
        self._reset_state(nonce)

    @property
    def prepared_case(self) -> PreparedCase:
        """The prepared data of the case of the last reset."""
        if self.prepared is None:
            raise RuntimeError("reset the world with a case first")
        return self.prepared

    @property
    def case(self) -> Case:
        return self.prepared_case.case

    # -- the kernel's World protocol -----------------------------------------------
    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        return GATE_TOOLS

    @property
    def finished(self) -> bool:
        return self.report is not None

    def call(self, call: ToolCall) -> Mapping[str, Any]:
        return self._handlers[call.name](**call.args)

    def begin_action(self) -> None:
        """An action starts: its queries share one VM-step budget (the guard's)."""
        self.guard.begin_action()

    def _keyed(self, sql: str) -> str:
        """``sql`` keyed by the schema of the image restored, as :meth:`SqlGuard.keyed`
        keys it: nothing changes the schema during an episode (the world's statements
        write rows only, and the guard refuses an agent's DDL), so it is not read again."""
        schema = self.prepared_case.schema
        return self.guard.keyed(sql) if schema is None else keyed_by(schema[1], sql)

    def mart_usd(self) -> float:
        usd: float = self.conn.execute(self._keyed(MART_SQL)).fetchone()[0]
        return round(usd, 2)

    # -- replay ------------------------------------------------------------------------
    def reapply(self, entry: Mapping[str, Any]) -> None:
        """Replay one verified log entry: re-run an executed load, checking its orphan
        count against the warehouse now, and check an executed query's ``tables_read``."""
        if entry["executed"] is not True:
            return
        if entry["action"] == "run_sql":
            self._check_tables_read(entry)
        elif entry["action"] == "load_batch":
            batch = self.case.batch(entry["args"]["batch_id"])
            if batch is None:
                raise LogIntegrityError(f"entry {entry['seq']}: loads a batch the case does not have")
            if self.orphans_now(batch) != entry["args"]["orphan_rows"]:
                raise LogIntegrityError(f"entry {entry['seq']}: orphan count disagrees with the warehouse")
            self.insert(batch)

    def _check_tables_read(self, entry: Mapping[str, Any]) -> None:
        """A logged ``tables_read`` must be what the query reads, by the guard's one definition."""
        query, logged = entry["args"].get("query"), entry["args"].get("tables_read")
        try:
            real = self.guard.tables_read(query)
        except SqlRefused:
            real = None  # a query that cannot be compiled was not executed
        if real is None or not isinstance(logged, list) or real != tuple(logged):
            raise LogIntegrityError(f"entry {entry['seq']}: tables_read disagrees with the query")

    # -- tools -----------------------------------------------------------------------
    def _refuse(self, action: str, args: dict[str, Any], reason: str) -> dict[str, Any]:
        self.ledger.append(action, args, False, reason)
        return {"error": reason}

    def _unknown(self, action: str, args: dict[str, Any], batch_id: str) -> dict[str, Any] | None:
        if self.case.batch(batch_id) is None:
            return self._refuse(action, args, f"unknown batch {batch_id!r}; list_batches gives the ids")
        return None

    def read_contract(self) -> Mapping[str, Any]:
        self.ledger.append("read_contract", {}, True)
        return self.case.contract

    def list_batches(self) -> Mapping[str, Any]:
        self.ledger.append("list_batches", {}, True)
        return self.prepared_case.listing

    def profile_batch(self, batch_id: str) -> Mapping[str, Any]:
        args = {"batch_id": batch_id}
        refused = self._unknown("profile_batch", args, batch_id)
        if refused:
            return refused
        self.ledger.append("profile_batch", args, True)
        return self.prepared_case.profile(self.case.batch_index[batch_id])

    def run_sql(self, query: str) -> dict[str, Any]:
        try:
            result = self.guard.run(query)
        except SqlRefused as exc:
            return self._refuse("run_sql", {"query": query}, str(exc))
        self.ledger.append("run_sql", {"query": query, "tables_read": list(result.tables_read)}, True)
        return result.as_dict()

    def load_batch(self, batch_id: str) -> dict[str, Any]:
        args = {"batch_id": batch_id}
        refused = self._unknown("load_batch", args, batch_id)
        if refused:
            return refused
        if batch_id in self.quarantined:
            return self._refuse("load_batch", args, f"batch {batch_id!r} is quarantined and cannot be loaded")
        batch = self.case.batch_index[batch_id]
        orphans = self.orphans_now(batch)
        rows = len(batch.rows)
        # Logged before it takes effect: the warehouse never holds rows the log does not show.
        self.ledger.append("load_batch", {"batch_id": batch_id, "rows": rows, "orphan_rows": orphans}, True)
        self.insert(batch)
        return {"status": "loaded", "rows_loaded": rows, "errors": 0}

    def insert(self, batch: StagingBatch) -> None:
        """The loader itself: every row goes in, whatever it holds.

        A customers batch is stored cell for cell as staged, so SQLite copies it from
        its staging table, in staged order; an orders batch's amounts are converted in
        Python (:func:`loader_amount`) and bound. The reference mart binds the same rows
        in the same order (:func:`_reference_mart`).
        """
        with transaction(self.conn):
            if batch.table == "customers":
                copy = _COPY_CUSTOMERS.format(staging=batch.staging_table)
                self.conn.execute(self._keyed(copy))
            else:
                insert = self._keyed(_INSERT[batch.table])
                self.conn.executemany(insert, self.prepared_case.inserts(batch))
        self.load_counts[batch.batch_id] = self.load_counts.get(batch.batch_id, 0) + 1

    def orphans_now(self, batch: StagingBatch) -> int:
        """Rows of an orders batch whose customer is not in the warehouse right now."""
        if batch.table != "orders":
            return 0
        query = (
            f'SELECT COUNT(*) FROM "{batch.staging_table}" WHERE customer_id NOT IN'
            " (SELECT customer_id FROM wh_customers)"
        )
        count: int = self.conn.execute(self._keyed(query)).fetchone()[0]
        return count

    def quarantine_batch(self, batch_id: str, column: str, defect_type: str) -> dict[str, Any]:
        args = {"batch_id": batch_id, "column": column, "defect_type": defect_type}
        refused = self._unknown("quarantine_batch", args, batch_id)
        if refused:
            return refused
        table = self.case.batch_index[batch_id].table
        if defect_type not in DEFECT_TYPES:
            return self._refuse(
                "quarantine_batch", args, f"{defect_type!r} is not a defect type; read_contract lists them"
            )
        if column not in TABLE_COLUMNS[table]:
            return self._refuse("quarantine_batch", args, f"{column!r} is not a column of {table}")
        if batch_id in self.quarantined:
            return self._refuse(
                "quarantine_batch",
                args,
                f"batch {batch_id!r} is already quarantined; the first citation stands",
            )
        self.ledger.append("quarantine_batch", args, True)
        self.quarantined[batch_id] = (column, defect_type)
        result: dict[str, Any] = {"status": "quarantined", "batch_id": batch_id}
        if self.load_counts.get(batch_id):
            result["warning"] = "this batch was already loaded; its rows stay in the warehouse"
        return result

    def submit_report(self, loaded: list[str], quarantined: list[str]) -> dict[str, Any]:
        args = {"loaded": sorted(loaded), "quarantined": sorted(quarantined)}
        if self.report is not None:
            return self._refuse("submit_report", args, "a report was already submitted")
        self.ledger.append("submit_report", args, True)
        self.report = (args["loaded"], args["quarantined"])
        return {"status": "received"}


__all__ = [
    "GateWorld",
    "PreparedCase",
    "loader_amount",
    "mart_usd",
    "open_connection",
    "prepare",
    "transaction",
]
