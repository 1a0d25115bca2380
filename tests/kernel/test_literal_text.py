"""A string argument renders in call syntax as ``json.dumps`` writes it (ASCII escapes)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from batchgate_gym.kernel.codec import literal


class Word(str):
    """A str subclass renders as its text does."""


@settings(max_examples=300, deadline=None)
@given(st.text() | st.text().map(Word))
def test_a_string_renders_as_json_dumps_writes_it(text: str) -> None:
    assert literal(text) == json.dumps(text)
    assert literal([text, None, True]) == f"[{json.dumps(text)}, None, True]"
