"""A hash-chained, append-only log of tool calls.

Graders read the log, never the agent's own account of what it did, so the log
must be tamper-evident: each entry carries the SHA-256 of its canonical JSON form
(sorted keys, compact separators, ASCII) including the previous entry's hash.
Editing, deleting or reordering an entry breaks the chain, and a final ``seal``
entry records how many entries the episode produced, so cutting entries off the end
is detected too.
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


def verify_chain(entries: Iterable[Mapping[str, Any]], *, require_seal: bool = True) -> None:
    """Recompute every hash and link; raise :class:`LogIntegrityError` on any break.

    With ``require_seal`` the last entry must be a seal that counts every entry
    before it, so a log cut short does not pass as complete.
    """
    prev = GENESIS
    items = list(entries)
    for position, entry in enumerate(items):
        if entry.get("seq") != position:
            raise LogIntegrityError(f"entry {position}: seq is {entry.get('seq')!r}")
        if entry.get("prev_hash") != prev:
            raise LogIntegrityError(f"entry {position}: prev_hash does not link to entry {position - 1}")
        if entry_hash(entry) != entry.get("hash"):
            raise LogIntegrityError(f"entry {position}: hash does not match its contents")
        if entry.get("action") == SEAL_ACTION and position != len(items) - 1:
            raise LogIntegrityError(f"entry {position}: a seal that is not the last entry")
        prev = entry["hash"]
    if not require_seal:
        return
    if not items or items[-1].get("action") != SEAL_ACTION:
        raise LogIntegrityError("the log has no seal: it may have been cut short")
    if items[-1].get("args", {}).get("entries") != len(items) - 1:
        raise LogIntegrityError("the seal's entry count does not match the log")
