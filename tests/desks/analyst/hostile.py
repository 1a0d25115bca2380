"""What every store's hostile suite checks: a hostile query refused at once; a huge one stopped, or cut to size, within its budget.

Shared by the DuckDB/SQLite suite and the chdb suite, which import it from this package.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from batchgate_gym.desks.analyst.stores import MAX_ROWS, StoreRefused
from batchgate_gym.kernel.infra import InfraFailure

MARGIN = 1.5  # seconds past the budget a stopped query may take to return


def run_bounded(store: Any, query: str, budget: float) -> None:
    """The query is answered within the caps or stopped, within ``budget`` seconds of this
    thread's CPU time (the stores' budget; the wall clock moves with the machine's load)."""
    start = time.thread_time()
    try:
        result = store.run(query)
    except (StoreRefused, InfraFailure):  # stopped by its budget, or by the safety net
        pass
    else:
        assert len(result.rows) <= MAX_ROWS
        assert all(len(str(cell)) <= 210 for row in result.rows for cell in row)
    assert time.thread_time() - start < budget + MARGIN, query


def refuse_all(store: Any, queries: list[str]) -> None:
    for query in queries:
        # CPU time of this process (every thread of the store's engine, nothing of other
        # processes): a refusal does no real work, and the wall clock moves with the load.
        start = time.process_time()
        with pytest.raises(StoreRefused):
            store.run(query)
        assert time.process_time() - start < 1.0, query
