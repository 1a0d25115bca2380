"""What every store's hostile suite checks: a hostile query refused at once; a huge one stopped, or cut to size, within its budget."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from batchgate_gym.desks.analyst.stores import MAX_ROWS, StoreRefused

MARGIN = 1.5  # seconds past the budget a stopped query may take to return


def _run_bounded(store: Any, query: str, budget: float) -> None:
    start = time.perf_counter()
    try:
        result = store.run(query)
    except StoreRefused:
        pass
    else:
        assert len(result.rows) <= MAX_ROWS
        assert all(len(str(cell)) <= 210 for row in result.rows for cell in row)
    assert time.perf_counter() - start < budget + MARGIN, query


def _refuse_all(store: Any, queries: list[str]) -> None:
    for query in queries:
        start = time.perf_counter()
        with pytest.raises(StoreRefused):
            store.run(query)
        assert time.perf_counter() - start < 1.0, query


@pytest.fixture
def refuse_all() -> Callable[[Any, list[str]], None]:
    return _refuse_all


@pytest.fixture
def run_bounded() -> Callable[[Any, str, float], None]:
    return _run_bounded
