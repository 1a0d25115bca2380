"""The log's hash text written field by field is the canonical encoder's text, exactly.

Appending and checking a live entry write the body's canonical JSON out field by field
(it is what every hash is computed over); an exported entry is hashed through the
encoder. Any value, of its type or not, must give the same text and hash both ways.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from batchgate_gym.kernel.ledger import Ledger, _body_hash, _fields_hash, entry_hash
from batchgate_gym.kernel.plain import FrozenDict

_TEXT = st.text(max_size=12)  # any code point: escapes and surrogates too
_LEAF = st.none() | st.booleans() | st.integers() | st.floats() | _TEXT
_ARGS = st.dictionaries(_TEXT, st.recursive(_LEAF, lambda inner: st.lists(inner, max_size=3), max_leaves=6))


class Word(str):
    """A str subclass: not exactly a str, so it takes the encoder's path."""


@settings(max_examples=300, deadline=None)
@given(
    seq=st.integers() | st.booleans(),
    action=_TEXT | _TEXT.map(Word),
    args=_ARGS,
    executed=st.booleans() | st.integers(-1, 2),
    note=_TEXT,
    prev_hash=_TEXT,
    key=st.none() | st.binary(min_size=1, max_size=8),
)
def test_field_by_field_text_hashes_as_the_encoder_does(
    seq: Any, action: Any, args: Any, executed: Any, note: Any, prev_hash: Any, key: Any
) -> None:
    fields = (seq, action, args, executed, note, prev_hash)
    body = dict(zip(("seq", "action", "args", "executed", "note", "prev_hash"), fields, strict=True))
    assert _fields_hash(*fields, key) == _body_hash(body, key)


_SETTINGS = st.dictionaries(
    _TEXT | _TEXT.map(Word),
    st.recursive(
        _LEAF | st.sampled_from([0, 0.0, -0.0, 1, 1.0, True]),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
        max_leaves=6,
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    digest=_TEXT | _TEXT.map(Word),
    settings_value=_SETTINGS,
    nonce=st.none() | _TEXT.filter(bool),
    key=st.none() | st.binary(min_size=1, max_size=8),
)
def test_entry_zero_written_key_by_key_hashes_as_the_encoder_does(
    digest: Any, settings_value: Any, nonce: Any, key: Any
) -> None:
    """Entry 0's arguments are written out with the settings' text kept by value: the same
    hash as the encoder's, the first time and again (``1``, ``1.0``, ``True`` and ``-0.0``
    are equal keys of a dict but not the same text)."""
    for _ in range(2):
        entry = Ledger(key).begin(digest, settings_value, nonce)
        assert entry.hash == entry_hash(entry.as_dict(), key)
    for other in ({"v": 1}, {"v": 1.0}, {"v": True}, {"v": 0.0}, {"v": -0.0}, FrozenDict({"v": 1})):
        entry = Ledger(key).begin("d", other, nonce)
        assert entry.hash == entry_hash(entry.as_dict(), key)


def test_entry_0_with_the_settings_text_kept_is_the_entry_the_encoder_writes() -> None:
    from batchgate_gym.kernel.ledger import settings_json

    settings = {"sql_budget": {"max_rows": 50, "max_seconds": 2.0, "strict": True}, "rules": "default"}
    written = Ledger().begin("d" * 64, settings, "n" * 32)
    kept = Ledger().begin("d" * 64, settings, "n" * 32, settings_json(settings))
    assert kept == written and kept.hash == entry_hash(
        {field: getattr(kept, field) for field in ("seq", "action", "args", "executed", "note", "prev_hash")}
    )


def test_a_kept_settings_text_that_is_not_the_settings_fails_the_log_check() -> None:
    from batchgate_gym.kernel.ledger import settings_json

    ledger = Ledger()
    ledger.begin("d" * 64, {"rules": "default"}, "n" * 32, settings_json({"rules": "original"}))
    assert not ledger.intact()
