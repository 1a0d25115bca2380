"""The schema a guarded statement is compiled against, named in its text.

A guard that reuses prepared statements (``reuse_statements=True``) keys every
statement it runs for an agent by the digest of the schema as SQLite holds it
(names, root pages, definitions): over a database replaced with the same schema
cookie, a statement compiled against the old tables' pages would read whatever
table now lives on them. A statement is reused only over an identical schema.
"""

from __future__ import annotations

import hashlib
import sqlite3

SchemaKey = tuple[int, str]
"""A schema as the guard knows it: its cookie and the digest of its ``sqlite_master``."""


def caches_statements(conn: sqlite3.Connection) -> bool:
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
    rows = tuple(conn.execute("SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master").fetchall())
    digest = _SCHEMA_DIGESTS.get(rows)
    if digest is None:
        # repr(sorted(rows, key=repr)), each row's repr made once
        digest = hashlib.sha256(("[" + ", ".join(sorted(map(repr, rows))) + "]").encode()).hexdigest()
        if len(_SCHEMA_DIGESTS) >= _SCHEMA_DIGESTS_MAX:
            _SCHEMA_DIGESTS.clear()
        _SCHEMA_DIGESTS[rows] = digest
    return digest


# sqlite_master's rows -> their digest, shared by every guard: a restored image's
# schema is digested once per process.
_SCHEMA_DIGESTS: dict[tuple[tuple[object, ...], ...], str] = {}
_SCHEMA_DIGESTS_MAX = 1024
