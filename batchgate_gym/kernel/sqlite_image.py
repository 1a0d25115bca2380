"""SQLite databases held as images: open, fill in one transaction, serialize, restore.

A desk's world lives in one in-memory SQLite database per episode. Building it
from rows is slow next to restoring a serialized image, so a desk builds each
image once and every reset deserializes it into the world's long-lived
connection. The connection an agent's queries run on is opened here, with the
settings :class:`~.sqlguard.SqlGuard` relies on.
"""

from __future__ import annotations

import functools
import itertools
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from .sqlguard import SchemaKey, SqlGuard


def open_connection(cached_statements: int = 0) -> sqlite3.Connection:
    """An in-memory database in autocommit mode, by default with no statement cache.

    No statement cache unless asked for: the guard's authorizer must see every agent
    query it has not compiled over the same schema before, and a guard reuses cached
    statements only when built with ``reuse_statements=True``, which keys each one
    by its schema (:mod:`.sqlguard`). Autocommit: writes are grouped explicitly with
    :func:`transaction`.
    """
    return sqlite3.connect(
        ":memory:", isolation_level=None, cached_statements=cached_statements, check_same_thread=False
    )


_COOKIES = itertools.count(1)


def stamped_image(conn: sqlite3.Connection) -> bytes:
    """The connection's database as an image whose schema cookie no earlier image has.

    SQLite recompiles a cached statement when the schema cookie it was compiled under
    differs from the database's; a replaced database with the same cookie and another
    schema would keep the old program. Each image this process stamps gets a cookie of
    its own (beyond any an unstamped schema reaches), so a statement cached over one
    image is recompiled, under the authorizer, before it runs over another.
    """
    stamp(conn)
    return conn.serialize()


def stamp(conn: sqlite3.Connection) -> int:
    """Give the connection's database a schema cookie no earlier image of this process
    has (:func:`stamped_image`), and return it. Inside a transaction the cookie is
    written with the transaction's rows, so the image needs no write of its own."""
    cookie = _COOKIE_BASE + next(_COOKIES) % _COOKIE_SPAN
    conn.execute(f"PRAGMA schema_version={cookie}")
    return cookie


_COOKIE_BASE = 1 << 20  # above the cookie of any schema built statement by statement
_COOKIE_SPAN = (1 << 31) - _COOKIE_BASE


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


def restore(guard: SqlGuard, image: bytes, schema: SchemaKey | None = None) -> None:
    """Replace the guarded connection's database by a copy of ``image``; the guard,
    told its schema may differ, looks at it afresh (or takes ``schema``, the image's
    :func:`~.sqlguard.schema_key` read when it was made)."""
    guard.conn.deserialize(image)
    guard.schema_changed(schema)


__all__ = [
    "connection_from",
    "open_connection",
    "restore",
    "schema_image",
    "stamp",
    "stamped_image",
    "transaction",
]
