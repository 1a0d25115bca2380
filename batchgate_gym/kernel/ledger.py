"""A hash-chained, append-only log of tool calls.

Graders read the log, never the agent's own account of what it did, so the log
must be tamper-evident: each entry carries the SHA-256 of its canonical JSON form
(sorted keys, compact separators, ASCII) including the previous entry's hash.
Editing, deleting or reordering an entry breaks the chain, and a final ``seal``
entry records how many entries the episode produced, so cutting entries off the end
is detected too.

The first entry, ``begin``, binds the log to what it is about: the digest of the
case the episode was played on and the settings a replay needs to re-derive what
the episode decided (its SQL budget, say). A log replayed under another case, or
with other settings, fails at entry 0. Entry 0 also carries the episode's *nonce*,
derived from the environment's seeded generator at reset (:class:`EpisodeNonces`), so
that two episodes of one case played alike still write different chains: a log can
be pinned to the one episode it was written in.

A chain without a secret proves consistency, not authorship: whoever holds a log
can edit it and recompute every hash after the edit. Two things stop such a
forger, and a verifier must use at least one. The episode records the chain's
*head* (the last entry's hash) outside the log; verifying against a head pinned by
whoever ran the episode detects any change at all, re-chained or not. And a ledger
given a secret ``key`` chains with HMAC-SHA256 instead of SHA-256, so that nobody
without the key can produce a chain that verifies. A key alone says the log came
from some episode of whoever holds the key, not from which: a verifier that has the
key but no head checks the nonce the episode gave out instead, so that the log of
another episode of the same case (the same play, even) never passes for this one's.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii as _STRING
from typing import TYPE_CHECKING, Any

from .codec import json_encoder
from .plain import KeptByForm

if TYPE_CHECKING:
    import numpy as np

GENESIS = "genesis"
SEAL_ACTION = "seal"
BEGIN_ACTION = "begin"
MAX_ARGS_DEPTH = 16  # genuine arguments nest three deep at most
NONCE_BYTES = 16


class EpisodeNonces:
    """One environment's episode nonces, for its logs' entry 0: one per reset (32 hex digits).

    A nonce is a digest of the environment's seeded generator's seed sequence (entropy,
    spawn key, pool size) and of how many nonces that generator gave before: the same
    seed gives the same nonces in any process, each later reset of the generator's
    stream a new one, and nothing is drawn from the generator, so every case and deal
    drawn from it is what it would be without nonces. A new generator (a reset with a
    seed) starts its count at zero. A generator built without a seed sequence has no
    identity to digest: its nonce is drawn from its stream instead.
    """

    __slots__ = ("_count", "_rng", "_stream")

    def __init__(self) -> None:
        self._rng: np.random.Generator | None = None
        self._stream = b""  # the current generator's seed sequence, written out
        self._count = 0  # nonces it gave

    def seeded(self, seed: int) -> None:
        """A reset seeded with ``seed`` (an int, at least 0) whose generator is not made yet:
        the nonces from here on are those of the generator ``gymnasium.utils.seeding.np_random(seed)``
        makes (its seed sequence holds the one number, no spawn key and numpy's default
        pool), counted from zero, and ``next(None)`` gives them; :meth:`adopt` names that
        generator once it is made."""
        self._rng, self._count = None, 0
        self._stream = _stream_text((seed,), (), _DEFAULT_POOL_SIZE)

    def adopt(self, rng: np.random.Generator) -> None:
        """``rng`` is the generator made from the seed :meth:`seeded` was given: its nonces go on."""
        self._rng = rng

    def next(self, rng: np.random.Generator | None) -> str:
        """The nonce of the episode starting now, from ``rng``, the environment's generator
        (``None``: the one :meth:`seeded` stands for, not made yet)."""
        if rng is not None and rng is not self._rng:
            seeds: Any = getattr(rng.bit_generator, "seed_seq", None)
            if not hasattr(seeds, "spawn_key"):
                return rng.bytes(NONCE_BYTES).hex()
            try:
                words = tuple(map(int, seeds.entropy))
            except TypeError:  # one number
                words = (int(seeds.entropy),)
            self._rng, self._count = rng, 0
            self._stream = _stream_text(words, tuple(seeds.spawn_key), seeds.pool_size)
        self._count += 1
        message = self._stream + b"#" + str(self._count).encode()
        return hashlib.blake2b(message, digest_size=NONCE_BYTES).hexdigest()


_DEFAULT_POOL_SIZE = 4  # numpy's SeedSequence pool, in words (a test holds it to numpy's)


def _stream_text(words: tuple[int, ...], spawn_key: tuple[int, ...], pool_size: int) -> bytes:
    """A seed sequence written out: what a generator's nonces are digests of."""
    return repr((words, spawn_key, pool_size)).encode()


class LogIntegrityError(ValueError):
    """The log's chain, order or seal does not hold."""


# Built once: json.dumps with options constructs a new encoder on every call.
_CANONICAL = json_encoder(sort_keys=True, allow_nan=True)


def canonical_json(value: Any) -> str:
    """The one serialisation that hashes are computed over."""
    return _CANONICAL(value)


def _body_hash(body: Mapping[str, Any], key: bytes | None = None) -> str:
    return _message_hash(_CANONICAL(body), key)


def _message_hash(text: str, key: bytes | None) -> str:
    message = text.encode("ascii")
    if key is None:
        return hashlib.sha256(message).hexdigest()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _fields_hash(
    seq: int,
    action: str,
    args: dict[str, Any],
    executed: bool,
    note: str,
    prev_hash: str,
    key: bytes | None,
    args_text: str | None = None,
) -> str:
    """:func:`_body_hash` of the body these six fields make, its canonical text written
    out field by field (the keys in sorted order) when each field is exactly of its type;
    any other value goes through the encoder with the body, so the text is the same.
    ``args_text``, if given, is ``canonical_json(args)`` already written."""
    exact = type(seq) is int and type(executed) is bool and type(args) is dict
    if exact and type(action) is str and type(note) is str and type(prev_hash) is str:
        return _message_hash(
            f'{{"action":{_STRING(action)},"args":{_CANONICAL(args) if args_text is None else args_text},'
            f'"executed":{"true" if executed else "false"},"note":{_STRING(note)},'
            f'"prev_hash":{_STRING(prev_hash)},"seq":{int.__repr__(seq)}}}',
            key,
        )
    body = {
        "seq": seq,
        "action": action,
        "args": args,
        "executed": executed,
        "note": note,
        "prev_hash": prev_hash,
    }
    return _body_hash(body, key)


def _begin_args_text(
    case_digest: object, settings: Mapping[str, Any], nonce: str | None, settings_text: str | None = None
) -> str | None:
    """``canonical_json`` of entry 0's arguments, written out key by key (sorted), with the
    settings' text as the caller keeps it or made once per distinct value
    (:class:`~.plain.KeptByForm`); ``None`` (the encoder writes it) when the digest is not
    exactly a string or the settings are not a plain dict."""
    if type(case_digest) is not str or type(settings) is not dict:
        return None
    if settings_text is None:
        settings_text = _settings_text(settings)
    nonce_text = "" if nonce is None else f',"nonce":{_STRING(nonce)}'
    return f'{{"case_digest":{_STRING(case_digest)}{nonce_text},"settings":{settings_text}}}'


# Entry 0's canonical body around its arguments' text: action ``begin``, executed, no note,
# after the genesis, number 0 (keys sorted, as :func:`_fields_hash` writes them).
_BEGIN_BODY_HEAD = f'{{"action":{_STRING(BEGIN_ACTION)},"args":'
_BEGIN_BODY_TAIL = f',"executed":true,"note":"","prev_hash":{_STRING(GENESIS)},"seq":0}}'


# ``canonical_json`` of a log's settings, kept by value: every reset of every world of one
# SQL budget writes the same settings into its entry 0, and encoding them cost more than
# the rest of the entry's hash.
_settings_text = KeptByForm(_CANONICAL, 64)


def settings_json(settings: Mapping[str, Any]) -> str:
    """The canonical JSON of a log's settings, as entry 0's hash writes them."""
    text: str = _settings_text(settings)
    return text


def entry_hash(entry: Mapping[str, Any], key: bytes | None = None) -> str:
    """SHA-256 (HMAC-SHA256 with ``key``) hex of an entry's canonical JSON, its own ``hash`` left out."""
    return _body_hash({name: value for name, value in entry.items() if name != "hash"}, key)


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


def entry_parts(entry: LogEntry | Mapping[str, Any]) -> tuple[Any, Mapping[str, Any], bool]:
    """``(action, args, executed)`` of a live entry or an exported one, read alike.

    An exported entry is read leniently, for graders that run before or without a
    chain check: missing ``args`` read as ``{}``, and only ``executed is True`` counts
    as executed.
    """
    if isinstance(entry, LogEntry):
        return entry.action, entry.args, entry.executed
    return entry.get("action"), entry.get("args") or {}, entry.get("executed") is True


class Ledger:
    """The live log of one episode. Entries are appended, never changed."""

    __slots__ = ("_entries", "_key", "_sealed")

    def __init__(self, key: bytes | None = None) -> None:
        if key is not None and (not isinstance(key, bytes) or not key):
            raise ValueError("a log key must be non-empty bytes")
        self._entries: list[LogEntry] = []
        self._sealed = False
        self._key = key

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
        return self._append(action, args, executed, note)

    def _append(
        self, action: str, args: dict[str, Any], executed: bool, note: str, args_text: str | None = None
    ) -> LogEntry:
        if self._sealed:
            raise LogIntegrityError("the log is sealed; nothing more can be appended")
        prev = self._entries[-1].hash if self._entries else GENESIS
        seq = len(self._entries)
        digest = _fields_hash(seq, action, args, executed, note, prev, self._key, args_text)
        entry = LogEntry(seq, action, args, executed, note, prev, digest)
        self._entries.append(entry)
        return entry

    def begin(
        self,
        case_digest: str,
        settings: Mapping[str, Any],
        nonce: str | None = None,
        settings_text: str | None = None,
    ) -> LogEntry:
        """Entry 0: the case this log is about, the settings its replay needs and the
        episode's nonce (left out when ``None``, as a replay's rebuilt desk does).

        ``settings_text``, if given, is :func:`settings_json` of ``settings`` as the caller
        keeps it (a world whose settings never change across its resets), so that it is not
        written again; the log's checks (:meth:`intact`, an export) hash entry 0 again from
        its arguments, so a text that is not the settings' fails them."""
        if self._entries:
            raise LogIntegrityError("a log begins once, before any other entry")
        args: dict[str, Any] = {"case_digest": case_digest, "settings": dict(settings)}
        if nonce is not None:
            if not isinstance(nonce, str) or not nonce:
                raise ValueError(f"a log nonce is a non-empty string, not {nonce!r}")
            args["nonce"] = nonce
        args_text = _begin_args_text(case_digest, settings, nonce, settings_text)
        if args_text is None:
            return self._append(BEGIN_ACTION, args, True, "", None)
        # Entry 0's body is its arguments between fields it always has (:func:`_fields_hash`'s
        # text of them): written once.
        digest = _message_hash(f"{_BEGIN_BODY_HEAD}{args_text}{_BEGIN_BODY_TAIL}", self._key)
        entry = LogEntry(0, BEGIN_ACTION, args, True, "", GENESIS, digest)
        self._entries.append(entry)
        return entry

    @property
    def nonce(self) -> str | None:
        """The nonce entry 0 recorded, if any."""
        return log_nonce(self._entries[0].args) if self._entries else None

    def seal(self, reason: str) -> LogEntry:
        """Close the log: the seal names how many entries came before it."""
        entry = self.append(SEAL_ACTION, {"entries": len(self._entries), "reason": reason}, True)
        self._sealed = True
        return entry

    def intact(self) -> bool:
        """Recompute the chain over the live entries (and the seal, once sealed).

        What :func:`verify_chain` checks of a log, read straight from the entries (the
        arguments, written here from checked calls, are not checked for plain JSON):
        every field of its type, every link, every hash, the begin first, the seal last
        and counting the entries before it. :meth:`export` runs it; an episode's end
        does not (:meth:`linked`).
        """
        return self._holds(rehash=True)

    def linked(self) -> bool:
        """The chain's shape without recomputing a hash: every field of its type, each
        entry numbered in order and linked to the one before, the begin first, the seal
        last and counting the entries before it.

        What an episode states in its last info. Every hash was computed by :meth:`append`
        from the entry it sits in, so recomputing them there would find what was just
        written; the hashes are checked where a log leaves the ledger (:meth:`export`)
        and wherever an exported log comes back (replay, results files).
        """
        return self._holds(rehash=False)

    def _holds(self, rehash: bool) -> bool:
        prev, last = GENESIS, len(self._entries) - 1
        for position, entry in enumerate(self._entries):
            if not _live_entry_holds(entry, position, prev, last, self._key, rehash):
                return False
            prev = entry.hash
        if not self._sealed:
            return True
        return (
            last >= 0
            and self._entries[-1].action == SEAL_ACTION
            and self._entries[-1].args.get("entries") == last
        )

    def export(self) -> list[dict[str, Any]]:
        """Plain dicts, ready for JSON; a deep copy, so callers cannot edit the log.

        The log leaves the ledger here, so its chain is recomputed first: a live entry
        edited in place after it was written raises :class:`LogIntegrityError` instead
        of being handed out.
        """
        if not self.intact():
            raise LogIntegrityError("the live log was edited after it was written: its chain does not hold")
        exported: list[dict[str, Any]] = json.loads(json.dumps([entry.as_dict() for entry in self._entries]))
        return exported


def _live_entry_holds(
    entry: LogEntry, position: int, prev: str, last: int, key: bytes | None, rehash: bool
) -> bool:
    """One live entry as :func:`verify_chain` would judge its exported form (its hash
    recomputed only with ``rehash``)."""
    if not (
        isinstance(entry.seq, int)
        and not isinstance(entry.seq, bool)
        and isinstance(entry.action, str)
        and isinstance(entry.args, dict)
        and isinstance(entry.executed, bool)
        and isinstance(entry.note, str)
        and isinstance(entry.prev_hash, str)
        and isinstance(entry.hash, str)
    ):
        return False
    if entry.seq != position or entry.prev_hash != prev:
        return False
    if (entry.action == SEAL_ACTION and position != last) or (entry.action == BEGIN_ACTION and position != 0):
        return False
    if not rehash:
        return True
    digest = _fields_hash(
        entry.seq, entry.action, entry.args, entry.executed, entry.note, entry.prev_hash, key
    )
    return digest == entry.hash


ENTRY_FIELDS = {
    "seq": int,
    "action": str,
    "args": dict,
    "executed": bool,
    "note": str,
    "prev_hash": str,
    "hash": str,
}


def check_entry_shape(entry: object, position: int, check_args: bool = True) -> Mapping[str, Any]:
    """An entry is a mapping of exactly the seven fields, each of its type, args plain JSON."""
    if not isinstance(entry, Mapping):
        raise LogIntegrityError(f"entry {position}: not an object")
    if set(entry) != set(ENTRY_FIELDS):
        raise LogIntegrityError(
            f"entry {position}: fields are {sorted(map(str, entry))}, not {sorted(ENTRY_FIELDS)}"
        )
    for name, kind in ENTRY_FIELDS.items():
        value = entry[name]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise LogIntegrityError(f"entry {position}: {name} is not a {kind.__name__}")
    if check_args and not _plain(entry["args"], MAX_ARGS_DEPTH):
        raise LogIntegrityError(
            f"entry {position}: args are not plain JSON of at most {MAX_ARGS_DEPTH} levels"
        )
    return entry


def _plain(value: object, depth: int) -> bool:
    """JSON as :func:`json.loads` gives it: no other types, finite numbers, bounded nesting."""
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if depth <= 0:
        return False
    if isinstance(value, list):
        return all(_plain(item, depth - 1) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, depth - 1) for k, v in value.items())
    return False


def verify_chain(
    entries: Iterable[Mapping[str, Any]],
    *,
    require_seal: bool = True,
    head: str | None = None,
    key: bytes | None = None,
    case_digest: str | None = None,
    nonce: str | None = None,
    check_args: bool = True,
) -> None:
    """Recompute every hash and link; raise :class:`LogIntegrityError` on any break.

    With ``require_seal`` the last entry must be a seal that counts every entry
    before it, so a log cut short does not pass as complete. With ``head`` (the
    hash the episode recorded for its last entry) the log must end on exactly
    that entry, so even an edit followed by re-hashing the rest is caught. With
    ``key`` every hash must be the HMAC the keyed ledger wrote. With
    ``case_digest`` the log must begin by naming that case; with ``nonce`` (the
    ``log_nonce`` the episode gave out) entry 0 must carry that nonce, so that a log
    of another episode fails even where the key alone would pass it. ``check_args=False``
    skips the plain-JSON check of arguments, for entries a live ledger wrote itself.
    """
    if not isinstance(entries, (list, tuple)):
        try:
            entries = list(entries)
        except TypeError:
            raise LogIntegrityError("a log is a list of entries") from None
    prev = GENESIS
    for position, raw in enumerate(entries):
        entry = check_entry_shape(raw, position, check_args)
        if entry["seq"] != position:
            raise LogIntegrityError(f"entry {position}: seq is {entry['seq']!r}")
        if entry["prev_hash"] != prev:
            raise LogIntegrityError(f"entry {position}: prev_hash does not link to entry {position - 1}")
        if entry_hash(entry, key) != entry["hash"]:
            raise LogIntegrityError(f"entry {position}: hash does not match its contents")
        if entry["action"] == SEAL_ACTION and position != len(entries) - 1:
            raise LogIntegrityError(f"entry {position}: a seal that is not the last entry")
        if entry["action"] == BEGIN_ACTION and position != 0:
            raise LogIntegrityError(f"entry {position}: a begin entry that is not the first")
        prev = entry["hash"]
    if head is not None and prev != head:
        raise LogIntegrityError("the log does not end on the head the episode recorded")
    if case_digest is not None and (
        not entries
        or entries[0]["action"] != BEGIN_ACTION
        or entries[0]["args"].get("case_digest") != case_digest
    ):
        raise LogIntegrityError("entry 0: the log does not begin by naming this case")
    if nonce is not None and (
        not entries or entries[0]["action"] != BEGIN_ACTION or log_nonce(entries[0]["args"]) != nonce
    ):
        raise LogIntegrityError("entry 0: the log is not this episode's (its nonce differs)")
    if not require_seal:
        return
    if not entries or entries[-1]["action"] != SEAL_ACTION:
        raise LogIntegrityError("the log has no seal: it may have been cut short")
    if entries[-1]["args"].get("entries") != len(entries) - 1:
        raise LogIntegrityError("the seal's entry count does not match the log")


def rechain(entries: list[dict[str, Any]], key: bytes | None = None) -> list[dict[str, Any]]:
    """Renumber ``entries`` in place and recompute every link and hash (with ``key``, as HMACs).

    What a verifier must be able to refuse: a forger's re-chained log verifies on its own,
    and only the pinned head or the key tells it from the genuine one.
    """
    prev = GENESIS
    for position, entry in enumerate(entries):
        entry["seq"] = position
        entry["prev_hash"] = prev
        entry["hash"] = prev = entry_hash(entry, key)
    return entries


def log_nonce(begin_args: Mapping[str, Any]) -> str | None:
    """The nonce in the arguments of an entry 0, or ``None`` if it has none."""
    nonce = begin_args.get("nonce")
    return nonce if isinstance(nonce, str) else None


def log_settings(entries: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The settings entry 0 recorded (call after :func:`verify_chain`)."""
    settings = entries[0]["args"].get("settings") if entries else None
    if not isinstance(settings, Mapping):
        raise LogIntegrityError("entry 0: no settings recorded")
    return settings
