"""What every store's hostile suite checks: a hostile query refused at once; a huge one stopped, or cut to size, within its budget.

Shared by the DuckDB/SQLite suite and the chdb and postgres suites, which import it from
this package, with the check each store's own split gets: careful perfect, every log replayed.
"""

from __future__ import annotations

import builtins
import time
from typing import Any

import pytest

from batchgate_gym.desks.analyst.engines.base import MAX_ROWS, StoreRefused
from batchgate_gym.desks.analyst.replay import replay
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


def careful_is_perfect(cases: list[Any]) -> None:
    """careful scores 1.0 on every case, with no infrastructure error, and each log replays to its score."""
    from batchgate_gym.envs.analyst.text import AnalystDeskEnv
    from batchgate_gym.policies.analyst.reference import CarefulAnalyst

    env = AnalystDeskEnv(cases)
    policy = CarefulAnalyst()
    for index, case in enumerate(cases):
        observation, info = env.reset(seed=index, options={"case_index": index})
        policy.reset(observation, info)
        done = False
        while not done:
            observation, reward, terminated, truncated, info = env.step(policy.act(observation))
            done = terminated or truncated
        assert reward == 1.0, (case.case_id, info["score"])
        assert info["score"]["infra_errors"] == 0
        assert replay(case, env.export_log(), head=info["log_head"]).as_dict() == info["score"]
    env.close()


def hide_module(monkeypatch: pytest.MonkeyPatch, top: str) -> None:
    """Make ``import top`` (and its submodules) fail, as on an install without its extra."""
    real_import = builtins.__import__

    def without(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == top or name.startswith(top + "."):
            raise ImportError(f"No module named {top!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without)
