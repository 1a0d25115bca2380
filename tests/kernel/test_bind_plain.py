"""Calls whose every argument is a plain string, int or list of strings bind without the
general checks; the result, or the error, must be exactly what the checks give."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchgate_gym.kernel import codec
from batchgate_gym.kernel.codec import ActionError, Param, ToolSpec

TOOLS = {
    spec.name: spec
    for spec in (
        ToolSpec("none", "no parameters"),
        ToolSpec("one", "a string", (Param("a", str, "a"),)),
        ToolSpec("two", "strings", (Param("a", str, "a"), Param("b", str, "b"))),
        ToolSpec("lists", "lists of strings", (Param("x", list, "x", str), Param("y", list, "y", str))),
        ToolSpec("number", "a float", (Param("f", float, "f"),)),
        ToolSpec("count", "an int and a string", (Param("n", int, "n"), Param("a", str, "a"))),
        ToolSpec("optional", "a default", (Param("a", str, "a"), Param("o", str, "o", default=None))),
    )
}
_VALUE = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**300)
    | st.floats()
    | st.text(max_size=4)
)
_VALUE = _VALUE | st.lists(_VALUE, max_size=3) | st.lists(st.text(max_size=3), max_size=3)


def _outcome(name: str, kwargs: dict[str, Any]) -> Any:
    try:
        return codec._bind(name, [], kwargs, TOOLS)
    except ActionError as exc:
        return f"error: {exc}"


@settings(max_examples=500, deadline=None)
@given(name=st.sampled_from(sorted(TOOLS)), data=st.data())
def test_plain_calls_bind_as_the_checks_bind_them(name: str, data: st.DataObject) -> None:
    keys = [param.name for param in TOOLS[name].params] + ["z"]
    kwargs = data.draw(st.dictionaries(st.sampled_from(keys), _VALUE, max_size=len(keys)))
    fast = _outcome(name, kwargs)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(codec, "_plainly_given", lambda spec, given: False)
        checked = _outcome(name, kwargs)
    assert fast == checked
    if codec._plainly_given(TOOLS[name], kwargs):
        assert all(fast.args[key] is kwargs[key] for key in kwargs)  # values kept, not copied


def test_an_int_where_an_int_is_wanted_is_plain_and_a_bool_is_not() -> None:
    count = TOOLS["count"]
    assert codec._plainly_given(count, {"n": 7, "a": "x"})
    assert codec._plainly_given(count, {"n": -(10**400), "a": "x"})  # kept as it is, as the checks keep it
    assert not codec._plainly_given(count, {"n": True, "a": "x"})
    assert not codec._plainly_given(count, {"n": 7.0, "a": "x"})
    assert (
        _outcome("count", {"n": True, "a": "x"})
        == "error: count(n: integer, a: string): n must be an integer, not a bool"
    )
