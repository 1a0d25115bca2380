"""A process forked after the analyst desk started its engines fails at once, with a way out.

polars' thread pool (and chDB's engine) do not survive ``fork``: without the guard
the forked child below waits forever on its first polars call. With it, the child's
reset raises :class:`ForkedAfterStartError` naming ``spawn``; a ``spawn`` worker
plays the same case to the same score.
"""

from __future__ import annotations

import multiprocessing
from typing import Any

import pytest

from batchgate_gym.desks.analyst.engines.forking import ForkedAfterStartError
from batchgate_gym.envs.analyst.text import AnalystDeskEnv
from batchgate_gym.policies.analyst.reference import CarefulAnalyst

KNOBS: dict[str, Any] = {"scale": 80, "store": "sqlite", "level": 1}


def _play(seed: int) -> float:
    env = AnalystDeskEnv(**KNOBS)
    observation, info = env.reset(seed=seed)
    policy = CarefulAnalyst()
    policy.reset(observation, info)
    while True:
        observation, reward, terminated, truncated, info = env.step(policy.act(observation))
        if terminated or truncated:
            env.close()
            return float(reward)


def _child(seed: int, out: Any) -> None:
    try:
        out.put(("reward", _play(seed)))
    except ForkedAfterStartError as exc:
        out.put(("refused", str(exc)))


def _in_child(context: str, seed: int) -> tuple[str, Any]:
    ctx = multiprocessing.get_context(context)
    out = ctx.Queue()
    child = ctx.Process(target=_child, args=(seed, out))
    child.start()
    try:
        return out.get(timeout=120)
    finally:
        child.join(timeout=10)
        if child.is_alive():
            child.kill()


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork here")
def test_a_late_fork_is_refused_and_spawn_works() -> None:
    assert _play(7) == 1.0  # the parent has started polars
    kind, detail = _in_child("fork", 8)
    assert kind == "refused" and "spawn" in detail
    assert _in_child("spawn", 8) == ("reward", 1.0)


def test_jobs_after_the_parent_played_give_the_same_results() -> None:
    from batchgate_gym.evaluation import evaluate

    assert _play(7) == 1.0  # the parent has started polars: forked workers would be refused
    serial = evaluate(CarefulAnalyst, seeds=range(4), desk="analyst", env_kwargs=KNOBS, progress=False)
    parallel = evaluate(
        CarefulAnalyst, seeds=range(4), desk="analyst", env_kwargs=KNOBS, progress=False, n_jobs=2
    )
    assert [e.reward for e in parallel.episodes] == [e.reward for e in serial.episodes] == [1.0] * 4
    assert [e.case_id for e in parallel.episodes] == [e.case_id for e in serial.episodes]
