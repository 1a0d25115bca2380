"""A hash-chained, append-only log of tool calls.

Graders read the log, never the agent's own account of what it did, so the log
must be tamper-evident: each entry carries the SHA-256 of its canonical JSON form
(sorted keys, compact separators, ASCII) including the previous entry's hash.
Editing, deleting or reordering an entry breaks the chain, and a final ``seal``
entry records how many entries the episode produced, so cutting entries off the end
is detected too.

A chain without a secret proves consistency, not authorship: whoever holds a log
can edit it and recompute every hash after the edit. So the episode also records
the chain's *head* (the last entry's hash) outside the log; verifying against that
head detects any change at all, re-chained or not.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

GENESIS = "genesis"
SEAL_ACTION = "seal"


class LogIntegrityError(ValueError):
    """The log's chain, order or seal does not hold."""


# Built once: json.dumps with options constructs a new encoder on every call.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def canonical_json(value: Any) -> str:
    """The one serialisation that hashes are computed over."""
    return _CANONICAL.encode(value)


def _body_hash(body: Mapping[str, Any]) -> str:
    return hashlib.sha256(_CANONICAL.encode(body).encode("ascii")).hexdigest()


def entry_hash(entry: Mapping[str, Any]) -> str:
    """SHA-256 hex of an entry's canonical JSON, leaving its own ``hash`` out."""
    return _body_hash({key: value for key, value in entry.items() if key != "hash"})


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One logged call. ``executed`` is False for every refused or failed call."""

    seq: int
    action: str
    args: dict[str, Any]
    executed: bool
    note: str
    prev_hash: str
    hash: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "action": self.action,
            "args": self.args,
            "executed": self.executed,
            "note": self.note,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }


class Ledger:
    """The live log of one episode. Entries are appended, never changed."""

    __slots__ = ("_entries", "_sealed")

    def __init__(self) -> None:
        self._entries: list[LogEntry] = []
        self._sealed = False

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def entries(self) -> tuple[LogEntry, ...]:
        return tuple(self._entries)

    @property
    def sealed(self) -> bool:
        return self._sealed

    @property
    def head(self) -> str:
        """The last entry's hash: record it apart from the log to pin the whole chain."""
        return self._entries[-1].hash if self._entries else GENESIS

    def append(self, action: str, args: dict[str, Any], executed: bool, note: str = "") -> LogEntry:
        if self._sealed:
            raise LogIntegrityError("the log is sealed; nothing more can be appended")
        prev = self._entries[-1].hash if self._entries else GENESIS
        body = {
            "seq": len(self._entries),
            "action": action,
            "args": args,
            "executed": executed,
            "note": note,
            "prev_hash": prev,
        }
        entry = LogEntry(hash=_body_hash(body), **body)  # body has no "hash" key yet
        self._entries.append(entry)
        return entry

    def seal(self, reason: str) -> LogEntry:
        """Close the log: the seal names how many entries came before it."""
        entry = self.append(SEAL_ACTION, {"entries": len(self._entries), "reason": reason}, True)
        self._sealed = True
        return entry

    def intact(self) -> bool:
        """Recompute the chain over the live entries (and the seal, once sealed)."""
        try:
            verify_chain((entry.as_dict() for entry in self._entries), require_seal=self._sealed)
        except LogIntegrityError:
            return False
        return True

    def export(self) -> list[dict[str, Any]]:
        """Plain dicts, ready for JSON; a deep copy, so callers cannot edit the log."""
        return json.loads(json.dumps([entry.as_dict() for entry in self._entries]))


ENTRY_FIELDS = {
    "seq": int,
    "action": str,
    "args": dict,
    "executed": bool,
    "note": str,
    "prev_hash": str,
    "hash": str,
}


def check_entry_shape(entry: object, position: int) -> Mapping[str, Any]:
    """An entry is a mapping of exactly the seven fields, each of its type."""
    if not isinstance(entry, Mapping):
        raise LogIntegrityError(f"entry {position}: not an object")
    if set(entry) != set(ENTRY_FIELDS):
        raise LogIntegrityError(f"entry {position}: fields are {sorted(entry)}, not {sorted(ENTRY_FIELDS)}")
    for name, kind in ENTRY_FIELDS.items():
        value = entry[name]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise LogIntegrityError(f"entry {position}: {name} is not a {kind.__name__}")
    return entry


def verify_chain(
    entries: Iterable[Mapping[str, Any]], *, require_seal: bool = True, head: str | None = None
) -> None:
    """Recompute every hash and link; raise :class:`LogIntegrityError` on any break.

    With ``require_seal`` the last entry must be a seal that counts every entry
    before it, so a log cut short does not pass as complete. With ``head`` (the
    hash the episode recorded for its last entry) the log must end on exactly
    that entry, so even an edit followed by re-hashing the rest is caught.
    """
    prev = GENESIS
    items = list(entries)
    for position, raw in enumerate(items):
        entry = check_entry_shape(raw, position)
        if entry["seq"] != position:
            raise LogIntegrityError(f"entry {position}: seq is {entry['seq']!r}")
        if entry["prev_hash"] != prev:
            raise LogIntegrityError(f"entry {position}: prev_hash does not link to entry {position - 1}")
        if entry_hash(entry) != entry["hash"]:
            raise LogIntegrityError(f"entry {position}: hash does not match its contents")
        if entry["action"] == SEAL_ACTION and position != len(items) - 1:
            raise LogIntegrityError(f"entry {position}: a seal that is not the last entry")
        prev = entry["hash"]
    if head is not None and prev != head:
        raise LogIntegrityError("the log does not end on the head the episode recorded")
    if not require_seal:
        return
    if not items or items[-1]["action"] != SEAL_ACTION:
        raise LogIntegrityError("the log has no seal: it may have been cut short")
    if items[-1]["args"].get("entries") != len(items) - 1:
        raise LogIntegrityError("the seal's entry count does not match the log")
