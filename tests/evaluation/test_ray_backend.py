"""evaluate(..., backend="ray") returns exactly the local results."""

from __future__ import annotations

import pytest

from batchgate_gym.evaluation import evaluate
from batchgate_gym.policies.gate.learned import random_macro_policy
from batchgate_gym.policies.gate.reference import CarefulPolicy, NaivePolicy


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'batchgate_gym[ray]'")
    from batchgate_gym.evaluation.ray_backend import ensure_ray

    started_here = not ray.is_initialized()
    try:
        ensure_ray()
    except Exception as error:  # Ray present but unable to start (sandbox, no shared memory, ...)
        pytest.skip(f"Ray cannot start on this machine: {type(error).__name__}: {error}")
    yield
    if started_here:
        ray.shutdown()


@pytest.mark.slow  # starting a local Ray instance takes several seconds
@pytest.mark.parametrize(
    "policy", [NaivePolicy, CarefulPolicy, random_macro_policy(3)], ids=["naive", "careful", "random-macro"]
)
def test_ray_backend_gives_the_local_results_on_the_eval_split(local_ray, policy) -> None:
    local = evaluate(policy, split="eval", progress=False)
    on_ray = evaluate(policy, split="eval", progress=False, backend="ray", n_jobs=3)
    assert on_ray.episodes == local.episodes
    assert on_ray.overall == local.overall
    assert [r.index for r in on_ray.episodes] == list(range(len(local.episodes)))


@pytest.mark.slow
def test_ray_backend_gives_the_local_results_on_procedural_seeds(local_ray) -> None:
    seeds = [11, 12, 13, 14, 15]
    local = evaluate(CarefulPolicy, seeds=seeds, progress=False)
    on_ray = evaluate(CarefulPolicy, seeds=seeds, progress=False, backend="ray", n_jobs=2)
    assert on_ray.episodes == local.episodes


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="backend"):
        evaluate(NaivePolicy, split="eval", progress=False, backend="dask")
