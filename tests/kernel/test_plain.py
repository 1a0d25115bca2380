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
