"""The replay driver: verify the log, rebuild the world from it, grade.

A replay recomputes a score from a case and an exported log alone, in three steps
every desk shares (:func:`replay_log`):

1. verify: the chain against the head the episode gave out or the ledger's key
   (one of the two is required: without either, a forger who re-chains an edited
   log cannot be told apart), and that entry 0 names the case being replayed; a
   key without a head needs the episode's nonce too (``log_nonce``), which entry 0
   must carry: the key says who wrote a log, the nonce which episode it is;
2. rebuild: a fresh world from the settings entry 0 recorded (the desk's
   ``make_world``), then every entry handed to the world's ``reapply``
   (:class:`Reapplying`), in log order: the world re-runs what changed it and
   checks what the entry claims against its state at that moment;
3. grade the rebuilt world and the log (the desk's ``grade``).

The driver knows no tool: which entries change a world, and how, is the world's
business. Every way a malformed log can break a step surfaces as
:class:`LogIntegrityError`, so that a caller sees that one error and no other. A
genuine log of an episode the machine stopped (sealed as an infrastructure error)
has no score: its replay raises :class:`~.infra.InfraFailure` after the chain
verifies, and so does a replay during which a safety net fires.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from .infra import check_scorable
from .ledger import LogIntegrityError, log_settings, verify_chain

T = TypeVar("T")
W = TypeVar("W", bound="Reapplying")


class Reapplying(Protocol):
    """A world a log can be replayed into."""

    def reapply(self, entry: Mapping[str, Any]) -> None:
        """Re-do what a verified entry did to the world, if anything; raise
        :class:`LogIntegrityError` where the entry disagrees with the world."""
        ...


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
    nonce: str | None = None,
    require_seal: bool = True,
) -> T:
    """Verify ``entries`` (against ``head``, or ``key`` and ``nonce``, bound to
    ``case_digest``), then return ``rederive(entries, settings)``; any failure is a
    :class:`LogIntegrityError`."""
    if head is None and key is None:
        raise TypeError(
            "replay needs head= (the log_head the episode gave out) or key= (the log key): "
            "without either, a log edited and re-chained cannot be told from a genuine one"
        )
    if head is None and nonce is None:
        raise TypeError(
            "a replay by key alone needs nonce= (the log_nonce the episode gave out): "
            "the key proves who wrote a log, not which episode it is"
        )
    try:
        if not isinstance(entries, Sequence) or isinstance(entries, (str, bytes)):
            raise LogIntegrityError("a log is a list of entries")
        verify_chain(
            entries, require_seal=require_seal, head=head, key=key, case_digest=case_digest, nonce=nonce
        )
        check_scorable(entries)
        return rederive(entries, log_settings(entries))
    except LogIntegrityError:
        raise
    except MALFORMED as exc:
        raise LogIntegrityError(f"the log cannot be replayed: {type(exc).__name__}: {exc}") from exc


def reapply_all(world: W, entries: Sequence[Mapping[str, Any]]) -> W:
    """Hand every entry, in order, to ``world.reapply``; return the world."""
    for entry in entries:
        world.reapply(entry)
    return world


def replay_log(
    entries: object,
    case_digest: str,
    *,
    make_world: Callable[[Mapping[str, Any]], W],
    grade: Callable[[W, Sequence[Mapping[str, Any]]], T],
    head: str | None,
    key: bytes | None,
    nonce: str | None = None,
    require_seal: bool = True,
) -> T:
    """Verify ``entries``, rebuild a world from them and grade it (see the module text).

    ``make_world(settings)`` is a fresh world of the case under the settings entry 0
    recorded; ``grade(world, entries)`` the score of the rebuilt world and the log.
    """

    def rederive(log: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]) -> T:
        return grade(reapply_all(make_world(settings), log), log)

    return replay_verified(
        entries, case_digest, rederive, head=head, key=key, nonce=nonce, require_seal=require_seal
    )
