"""SQLite databases held as images: open, fill in one transaction, serialize, restore.

A desk's world lives in one in-memory SQLite database per episode. Building it
from rows is slow next to restoring a serialized image, so a desk builds each
image once and every reset deserializes it into the world's long-lived
connection. The connection an agent's queries run on is opened here, with the
settings :class:`~.sqlguard.SqlGuard` relies on.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from .sqlguard import SqlGuard


def open_connection() -> sqlite3.Connection:
    """An in-memory database in autocommit mode with no statement cache.

    No statement cache: the guard's authorizer must see every agent query prepared
    afresh, or a repeated query would seem to read no table. Autocommit: writes
    are grouped explicitly with :func:`transaction`.
    """
    return sqlite3.connect(":memory:", isolation_level=None, cached_statements=0, check_same_thread=False)


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One transaction around many writes (autocommit would commit row by row);
    rolled back if the block raises."""
    conn.execute("BEGIN")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def schema_image(statements: Iterable[str]) -> bytes:
    """The image of an empty database made by ``statements``, built once per process."""
    return _schema_image(tuple(statements))


@functools.cache
def _schema_image(statements: tuple[str, ...]) -> bytes:
    conn = open_connection()
    try:
        for statement in statements:
            conn.execute(statement)
        return conn.serialize()
    finally:
        conn.close()


def connection_from(image: bytes) -> sqlite3.Connection:
    """A new connection (as :func:`open_connection` opens) holding a copy of ``image``."""
    conn = open_connection()
    conn.deserialize(image)
    return conn


def restore(guard: SqlGuard, image: bytes) -> None:
    """Replace the guarded connection's database by a copy of ``image``; the guard,
    told its schema may differ, looks at it afresh."""
    guard.conn.deserialize(image)
    guard.schema_changed()


__all__ = ["connection_from", "open_connection", "restore", "schema_image", "transaction"]
