"""``codec.json_value`` reads a text as ``json.loads`` does: the same value, or the same error.

It reads a text that is one JSON value from end to end with the decoder's scanner alone
(an action, a result line); every other text goes through ``json.loads``. Both ways must
agree on any text: JSON written compactly or with spaces, cut short, padded, with extra
data, a byte-order mark, lone surrogates, ``NaN``.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from batchgate_gym.kernel.codec import json_value

_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


def _texts(value: Any) -> st.SearchStrategy[str]:
    compact = json.dumps(value, separators=(",", ":"))
    spaced = json.dumps(value, ensure_ascii=False)
    return st.sampled_from([compact, spaced, " " + compact, compact + "\n", compact + "x", compact[:-1]])


def _read(read: Any, text: str) -> tuple[str, Any]:
    try:
        return "value", read(text)
    except json.JSONDecodeError as exc:
        return "error", (exc.msg, exc.pos)
    except (RecursionError, ValueError, TypeError) as exc:
        return "error", type(exc).__name__


def _same(text: str) -> None:
    mine, theirs = _read(json_value, text), _read(json.loads, text)
    # json.dumps of a value and of the one read back agree, NaN included (NaN != NaN).
    assert mine[0] == theirs[0] and json.dumps(mine[1]) == json.dumps(theirs[1]), text


@settings(max_examples=400, deadline=None)
@given(_VALUE.flatmap(_texts))
def test_json_texts_read_as_json_loads_reads_them(text: str) -> None:
    _same(text)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from('{}[]",:0123456789.eE-+ \n\ufeffanulltrfsNI\\\ud800'), max_size=20))
def test_any_text_reads_as_json_loads_reads_it(text: str) -> None:
    _same(text)


def test_the_scanner_path_keeps_json_loads_errors_and_values():
    for text in (
        '{"a":1}',
        "[1, 2]",
        '"\\ud800"',
        "NaN",
        "-Infinity",
        "1e400",
        "\ufeff{}",
        "",
        " ",
        "{}{}",
        "[" * 5000,
    ):
        _same(text)
    assert json_value('{"a":[1,{"b":null}]}') == {"a": [1, {"b": None}]}
