"""The desk-independent half of a replay: verify the log, then let the desk re-derive.

A replay recomputes a score from a case and an exported log alone. This module
does what every desk's replay does first and last: it checks the chain against
the head the episode gave out or the ledger's key (one of the two is required:
without either, a forger who re-chains an edited log cannot be told apart), checks
that entry 0 names the case being replayed, hands the desk the settings entry 0
recorded, and turns every way a malformed log can break the desk's re-derivation
into :class:`LogIntegrityError`, so that a caller sees that one error and no other.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from .ledger import LogIntegrityError, log_settings, verify_chain

T = TypeVar("T")

# What a desk's re-derivation raises on arguments of the wrong shape or content:
# a missing key, a list where a string belongs, a string SQLite cannot encode,
# arguments nested past the interpreter's recursion limit.
MALFORMED = (
    KeyError,
    IndexError,
    TypeError,
    ValueError,
    AttributeError,
    RecursionError,
    UnicodeError,
    OverflowError,
    sqlite3.Error,
)


def replay_verified(
    entries: object,
    case_digest: str,
    rederive: Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]], T],
    *,
    head: str | None,
    key: bytes | None,
    require_seal: bool = True,
) -> T:
    """Verify ``entries`` (against ``head`` and/or ``key``, bound to ``case_digest``),
    then return ``rederive(entries, settings)``; any failure is a :class:`LogIntegrityError`."""
    if head is None and key is None:
        raise TypeError(
            "replay needs head= (the log_head the episode gave out) or key= (the log key): "
            "without either, a log edited and re-chained cannot be told from a genuine one"
        )
    try:
        if not isinstance(entries, Sequence) or isinstance(entries, (str, bytes)):
            raise LogIntegrityError("a log is a list of entries")
        verify_chain(entries, require_seal=require_seal, head=head, key=key, case_digest=case_digest)
        return rederive(entries, log_settings(entries))
    except LogIntegrityError:
        raise
    except MALFORMED as exc:
        raise LogIntegrityError(f"the log cannot be replayed: {type(exc).__name__}: {exc}") from exc
