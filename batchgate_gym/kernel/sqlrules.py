"""What agent SQL may do, and how each refusal is worded.

The lists the guard (:mod:`.sqlguard`) holds a statement to, in one place: the
authorizer actions it allows, the functions refused under ``deterministic=True``
(those that read the clock or draw at random), the first keywords refused before
SQLite compiles anything, and those of statements that are queries by SQLite's
grammar; the checks a query's text passes before any engine sees it
(:func:`checked_query`); and the words of every refusal (:func:`refusal`).
"""

from __future__ import annotations

import re
import sqlite3

from .engine_functions import SQLITE, SQLITE_CLOCK_AND_CHANCE
from .sqlbudget import SqlBudget
from .sqlshape import too_large

ALLOWED_ACTIONS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
"""The authorizer actions agent SQL may take; every other is denied."""
# The functions an agent may call are SQLite's allow-list (engine_functions.SQLITE); of
# those, what reads the clock or draws at random is refused under ``deterministic=True``.
# The date functions read the clock only when given 'now' or nothing: ClockFreeDates.
NONDETERMINISTIC_FUNCTIONS = SQLITE_CLOCK_AND_CHANCE
# First keywords of statements that change something: refused before SQLite compiles them.
WRITING_WORDS = frozenset(
    {
        "insert", "update", "delete", "replace", "upsert", "create", "drop", "alter", "pragma",
        "attach", "detach", "begin", "commit", "end", "rollback", "savepoint", "release",
        "vacuum", "reindex", "analyze",
    }
)  # fmt: skip
# First keywords of statements that are queries by SQLite's grammar: SELECT and VALUES
# are select statements, and WITH leads a select or a write the authorizer refuses.
QUERY_WORDS = frozenset({"select", "values", "with"})
READING_ONLY = (
    "only reading queries are allowed: SELECT, WITH ... SELECT, VALUES or EXPLAIN; "
    "statements that write, change the schema or settings (INSERT, UPDATE, DELETE, CREATE, "
    "DROP, ALTER, PRAGMA, ATTACH, transactions, VACUUM ...) are refused"
)
NOT_UTF8 = "the query is not valid text: it holds a lone surrogate, which no UTF-8 text can carry"
_LEADING_NOISE = re.compile(r"(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?(?:\*/|\Z))*", re.DOTALL)
_WORD = re.compile(r"[A-Za-z_]+")


class SqlRefused(Exception):
    """The query was refused, failed or was interrupted; nothing ran to completion."""


def clean_query(query: str) -> str:
    """One statement: surrounding whitespace and trailing semicolons removed."""
    return query.strip().rstrip(";").rstrip()


def encodable(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (no lone surrogates), as every engine reads it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def first_word(sql: str) -> str:
    """The statement's first keyword, lower case, past white space and comments."""
    noise = _LEADING_NOISE.match(sql)  # always matches (every part is optional), maybe empty
    word = _WORD.match(sql, noise.end() if noise else 0)
    return word.group().lower() if word else ""


def checked_query(query: object, budget: SqlBudget) -> str:
    """``query`` as the one statement to compile, or :class:`SqlRefused` for a text no
    engine should see: not a string, too long, not UTF-8, empty, led by a writing
    keyword, or too large with its CTEs inlined."""
    if not isinstance(query, str):
        raise SqlRefused("query must be a string")
    if len(query) > budget.max_query_chars:
        raise SqlRefused(f"query longer than {budget.max_query_chars} characters")
    if not encodable(query):
        raise SqlRefused(NOT_UTF8)
    sql = clean_query(query)
    if not sql:
        raise SqlRefused("empty query")
    if first_word(sql) in WRITING_WORDS:
        raise SqlRefused(READING_ONLY)
    oversized = too_large(sql, budget.max_inlined_tokens)
    if oversized:
        raise SqlRefused(oversized)
    return sql


def refusal(exc: BaseException, stopped_by: str) -> str:
    """The agent's reason for a query SQLite failed or a budget stopped (``stopped_by``:
    which one, or empty)."""
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
