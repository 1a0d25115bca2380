"""Built-in SQL functions whose work a number sets stay inside the query budget.

One scalar call is one VM instruction, so the progress handler cannot interrupt
it: a function told by a number to do a billion steps (``printf('%.1000000000c',
'x')``) held the environment for seconds against a 2 s budget. The class test
calls every scalar function SQLite lists, at every arity it takes, with huge
numbers, long strings and small values through the guard and holds each call to
the budget; the property test holds the checked ``printf`` to SQLite's own.
"""

from __future__ import annotations

import gc
import itertools
import sqlite3
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchgate_gym.kernel.sqlfuncs import PRINTF_NAMES
from batchgate_gym.kernel.sqlguard import SqlBudget, SqlGuard, SqlRefused, SqlSafetyStop

TIME_MARGIN_S = 0.75  # the hostile-SQL suite's bound: the budget plus this


def guarded(budget: SqlBudget | None = None) -> SqlGuard:
    return SqlGuard(sqlite3.connect(":memory:", isolation_level=None, cached_statements=0), budget)


def timed(guard: SqlGuard, query: str) -> tuple[float, object]:
    """The CPU time the query held this thread (what the machine's load does not change) and its outcome."""
    started = time.thread_time()
    try:
        outcome: object = guard.run(query).rows
    except (SqlRefused, SqlSafetyStop) as stopped:
        outcome = stopped
    return time.thread_time() - started, outcome


@pytest.mark.parametrize(
    "query",
    [
        "SELECT length(printf('%.1000000000c', 'x'))",
        "SELECT printf('%.*c', 1000000000, 'x')",
        "SELECT format('%.*c', -2147483647, 'x')",
        "SELECT printf('%.2147483647c%d', 'x', 1)",
        "SELECT printf('%' || '.1000000000' || 'c', 'x')",
        "SELECT printf(CAST('%.1000000000c' AS BLOB), 'x')",
        "SELECT printf('%.*c', '1000000000 characters', 'x')",
        "SELECT printf('%.*c', 1e9, 'x')",
    ],
)
def test_a_huge_printf_repeat_answers_as_sqlite_does_within_the_budget(query: str) -> None:
    guard = guarded()
    seconds, rows = timed(guard, query)
    assert seconds <= guard.budget.max_cpu_seconds + TIME_MARGIN_S
    assert rows == [[None]]  # SQLite's own answer: longer than the value limit, so NULL


# -- the class: every scalar function SQLite offers --------------------------------------
HUGE = ["1000000000", "-1000000000", "2147483647"]
# Small values, some of them text a function reads a number from: '%.*c' makes a huge
# number a printf precision, then a JSON path and a date modifier with huge numbers.
SMALL = ["1", "'a'", "NULL", "'%.*c'", "'$[1000000000]'", "'+1000000000 days'"]
# A string, a JSON array and a blob just under the value limit (20,000 bytes here),
# built by the guard's own bounded printf.
LONG = [
    "printf('%.*c', 19990, 'x')",
    "('[' || printf('%.*c', 19980, '1') || ']')",
    "CAST(printf('%.*c', 19990, 'x') AS BLOB)",
]
POOL = HUGE + LONG + SMALL
CORE = ["1000000000", "2147483647", LONG[0], "'a'", "'%.*c'"]  # for three and four arguments
# Not called as plain scalar functions, with the reason.
SKIPPED = {
    "fts3_tokenizer": "registers or returns an FTS3 tokenizer by pointer, not a value function",
}


def arities(narg: int) -> list[int]:
    return [narg] if narg >= 0 else [1, 2, 3, 4]


def argument_tuples(arity: int) -> list[tuple[str, ...]]:
    pool = POOL if arity <= 2 else CORE
    return list(itertools.product(pool, repeat=arity))


@pytest.mark.slow  # hostile SQL: every function, every argument position
def test_every_scalar_function_with_huge_or_long_arguments_stays_within_the_budget() -> None:
    budget = SqlBudget(max_cpu_seconds=0.25)
    guard = guarded(budget)
    listed = guard.conn.execute("SELECT DISTINCT name, narg FROM pragma_function_list WHERE type = 's'")
    functions = sorted(listed.fetchall())
    assert {"printf", "format", "substr", "char", "round", "strftime", "json_insert"} <= {
        n for n, _ in functions
    }
    bound = budget.max_cpu_seconds + TIME_MARGIN_S
    calls = 0
    started = time.process_time()
    # What is bounded is SQLite's work: Python's collector, run when this worker's heap
    # (every earlier test's objects) calls for it, once put a 1 s pause inside one call.
    gc.disable()
    try:
        for name, narg in functions:
            if name in SKIPPED:
                continue
            for arity in arities(narg):
                for args in argument_tuples(arity):
                    query = f'SELECT "{name}"({", ".join(args)})'
                    seconds, _outcome = timed(guard, query)
                    calls += 1
                    assert seconds <= bound, f"{query} held the guard {seconds:.2f} s"
    finally:
        gc.enable()
    assert calls > 5000
    assert time.process_time() - started < 60  # a few seconds of CPU


# -- the checked printf computes SQLite's own result ----------------------------------------
LIMIT = 1000  # a small value limit, so SQLite's own printf past it is quick too


def _number_text() -> st.SearchStrategy[str]:
    near = st.integers(0, 3 * LIMIT)
    wrapped = st.builds(lambda k, m: (m << 31) + k, st.integers(0, 3 * LIMIT), st.integers(1, 4))
    return st.one_of(near, wrapped, st.just(LIMIT), st.just(LIMIT + 1)).map(str)


def _spec() -> st.SearchStrategy[str]:
    flags = st.text(alphabet="-+ #!0,", max_size=3)
    width = st.one_of(st.just(""), st.just("*"), _number_text())
    precision = st.one_of(st.just(""), st.just("."), st.just(".*"), _number_text().map(lambda s: "." + s))
    length = st.sampled_from(["", "", "l", "ll"])
    conversion = st.sampled_from(list("dsgzqQwcouxXfeEGiprn%") + ["T", "y", ""])
    return st.builds(lambda *parts: "%" + "".join(parts), flags, width, precision, length, conversion)


formats = st.lists(st.one_of(_spec(), st.text(max_size=4)), max_size=5).map("".join)
star_numbers = st.one_of(
    st.integers(-3 * LIMIT, 3 * LIMIT),
    st.builds(lambda k, m: (m << 32) + k, st.integers(-3 * LIMIT, 3 * LIMIT), st.integers(-3, 3)),
    st.sampled_from([-(1 << 31), (1 << 31) + 5, -(1 << 63), (1 << 63) - 1]),
)
arguments = st.one_of(
    star_numbers,
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.sampled_from(["1500 wide", "  2000", "-1200", "1e9", "0x10"]),
    st.binary(max_size=4),
    st.none(),
)


def _printf(conn: sqlite3.Connection, name: str, args: tuple[object, ...]) -> object:
    marks = ", ".join("?" * len(args))
    try:
        return conn.execute(f"SELECT {name}({marks})", args).fetchone()[0]
    except sqlite3.Error as exc:
        return type(exc), str(exc)


def assert_same(checked: object, own: object) -> None:
    """Equal results, or the same error; a result that is not UTF-8 fails both ways.

    SQLite's own printf can build text that is not UTF-8 (from a blob argument);
    Python cannot read it back, so neither can the checked printf, which fails.
    """
    if isinstance(own, tuple) and own[1].startswith("Could not decode to UTF-8"):
        assert checked == (sqlite3.OperationalError, "user-defined function raised exception")
    else:
        assert checked == own


@pytest.fixture(scope="module")
def pair() -> tuple[sqlite3.Connection, sqlite3.Connection]:
    own = sqlite3.connect(":memory:")
    own.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, LIMIT)
    return own, guarded(SqlBudget(max_value_bytes=LIMIT)).conn


@settings(max_examples=400)
@given(
    name=st.sampled_from(PRINTF_NAMES),
    fmt=st.one_of(formats, formats.map(str.encode)),
    rest=st.lists(arguments, max_size=6),
)
@pytest.mark.slow  # hypothesis against SQLite's own printf
def test_the_checked_printf_returns_what_sqlite_returns(
    pair: tuple[sqlite3.Connection, sqlite3.Connection], name: str, fmt: object, rest: list[object]
) -> None:
    own, checked = pair
    args = (fmt, *rest)
    assert_same(_printf(checked, name, args), _printf(own, name, args))


@pytest.mark.parametrize(
    "args",
    [
        (),
        (None,),
        (12,),
        ("plain text",),
        (
            "%d|%5.2f|%-8s|%q|%Q|%w|%c|%x|%o|%e|%g|%%",
            42,
            3.14159,
            "left",
            "it's",
            None,
            'a"b',
            "yes",
            255,
            8,
            1e-7,
            1e20,
        ),
        ("%,d %r %!.3f %p", 1234567, 3, 2.0, 16),
        ("%.*c|%*d|%-*d|%.*s", 5, "z", 7, 3, -7, 3, 2, "abcdef"),
        ("%.1001c", "x"),  # one past the limit: NULL
        ("%.*s", 10**9, "short"),  # a precision that only caps the string
        ("%1000000000n%d", 5),
        ("%.3000000000d", 7),  # 3,000,000,000 keeps its low 31 bits: 852,516,352
        ("%.4294967297d", 7),  # ... and 4,294,967,297 is 1
        ("%.*d", (1 << 32) + 9, 7),
        ("%.*d", -(1 << 31), 7),
        ("%.*d", "12abc", 7),
        ("%.*d", 2.9, 7),
        ("%.*d", b"12", 7),
        ("a\x00%.1000000000c", "x"),  # formatting stops at the NUL
        ("%T%.*c", 10**9, "x"),  # and at a conversion SQLite does not know
        (b"%.1500c|%.1000000000d|", "x", 5),
        ("caf\u00e9 %s \u2603", "\U0001f600"),
    ],
)
def test_chosen_printf_calls_match_sqlite(
    pair: tuple[sqlite3.Connection, sqlite3.Connection], args: tuple[object, ...]
) -> None:
    own, checked = pair
    for name in PRINTF_NAMES:
        assert_same(_printf(checked, name, args), _printf(own, name, args))
