"""A JSON action's calls bound from its decoded list are the calls its text gives.

:func:`~batchgate_gym.kernel.codec.bind_calls` is how a program that chooses moves (a
macro env) skips writing and parsing text; ``parse_action`` hands it a JSON action's
list. Whatever the list holds, well formed or not, both must give the same calls or
the same error.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from batchgate_gym.kernel.codec import ActionError, Param, ToolSpec, bind_calls, parse_action

TOOLS = {
    spec.name: spec
    for spec in (
        ToolSpec("none", "no parameters"),
        ToolSpec("two", "strings", (Param("a", str, "a"), Param("b", str, "b"))),
        ToolSpec(
            "typed", "typed", (Param("n", int, "n"), Param("f", float, "f"), Param("x", list, "x", str))
        ),
        ToolSpec("optional", "a default", (Param("a", str, "a"), Param("o", bool, "o", default=False))),
    )
}
MAX_CALLS = 3
_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4)
)
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
_NAME = st.sampled_from([*TOOLS, "unknown"])
_ARGUMENTS = st.dictionaries(st.sampled_from(["a", "b", "n", "f", "x", "o", "z"]), _VALUE, max_size=4)
_CALL = (
    st.fixed_dictionaries({"name": _NAME, "arguments": _ARGUMENTS})
    | st.fixed_dictionaries({"tool": _NAME, "args": _ARGUMENTS})
    | st.fixed_dictionaries(
        {
            "type": st.just("function"),
            "function": st.fixed_dictionaries({"name": _NAME, "arguments": _ARGUMENTS.map(json.dumps)}),
        }
    )
    | _VALUE
)


def _outcome(read: Any) -> Any:
    try:
        return read()
    except ActionError as exc:
        return f"error: {exc}"


@settings(max_examples=200, deadline=None)
@given(items=st.lists(_CALL, max_size=MAX_CALLS + 1))
def test_bound_from_the_list_as_from_its_text(items: list[Any]) -> None:
    text = json.dumps(items)
    direct = _outcome(lambda: bind_calls(items, TOOLS, MAX_CALLS))
    assert direct == _outcome(lambda: parse_action(text, TOOLS, MAX_CALLS))
