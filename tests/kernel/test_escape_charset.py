"""``escape`` keeps a text inside the observation charset as it is, and only such a text.

The check runs over bytes (ASCII, the charset's bytes deleted) rather than the
pattern's search; both must agree on every text, and the escaped form is unchanged.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from batchgate_gym.kernel.codec import _OUTSIDE_CHARSET, OBSERVATION_CHARSET, _escape_char, escape

_MOSTLY_ASCII = st.text(st.characters(max_codepoint=0x7F) | st.sampled_from("é\u2028\U0001f600\x00"))


@settings(max_examples=400, deadline=None)
@given(st.text(OBSERVATION_CHARSET) | _MOSTLY_ASCII | st.text())
def test_escape_leaves_exactly_the_charset_alone(text: str) -> None:
    inside = all(char in OBSERVATION_CHARSET for char in text)
    assert (escape(text) == text) is inside
    assert escape(text) == (text if inside else _OUTSIDE_CHARSET.sub(_escape_char, text))
    assert all(char in OBSERVATION_CHARSET for char in escape(text))
