"""Reading ints and reprs safely for error messages."""

from __future__ import annotations

import numpy as np
import pytest

from batchgate_gym.kernel.plain import as_int, short_repr


@pytest.mark.parametrize(
    ("value", "expected"),
    [(3, 3), (np.int64(4), 4), (True, None), (np.bool_(True), None), (2.0, None), ("5", None), (None, None)],
)
def test_as_int_takes_ints_and_integer_scalars_never_bools(value, expected):
    assert as_int(value) == expected


class _NoRepr:
    def __repr__(self) -> str:
        raise RuntimeError


def test_short_repr_is_at_most_sixty_characters_and_never_raises():
    assert short_repr("x") == "'x'"
    assert short_repr("y" * 100) == repr("y" * 100)[:57] + "..."
    assert len(short_repr(list(range(100)))) == 60
    assert short_repr(_NoRepr()) == "a _NoRepr"


def test_frozen_shared_freezes_each_distinct_value_once():
    from batchgate_gym.kernel.plain import FrozenDict, frozen, frozen_shared

    contract = {"rules": [{"column": "amount", "max": 1}], "currency": "USD"}
    shared = frozen_shared(contract)
    assert isinstance(shared, FrozenDict) and shared == frozen(contract)
    assert frozen_shared({"rules": [{"column": "amount", "max": 1}], "currency": "USD"}) is shared
    # values == would call equal but JSON writes apart are never shared
    for twin in (
        {"rules": [{"column": "amount", "max": 1.0}], "currency": "USD"},
        {"rules": [{"column": "amount", "max": True}], "currency": "USD"},
        {"currency": "USD", "rules": [{"column": "amount", "max": 1}]},  # another key order
    ):
        assert frozen_shared(twin) is not shared and list(frozen_shared(twin)) == list(twin)
    assert repr(frozen_shared({"x": -0.0})["x"]) == "-0.0" and repr(frozen_shared({"x": 0.0})["x"]) == "0.0"

    class Odd:
        pass

    odd = {"x": Odd()}
    assert frozen_shared(odd) is not frozen_shared(odd) and frozen_shared(odd)["x"] is odd["x"]
