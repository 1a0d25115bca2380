"""Several policies over the same cases, and the JSON ``batchgate report --json`` prints of them."""

from __future__ import annotations

from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import DEFAULT_DESK

from .loop import EvaluationResult, evaluate


def run_policies(
    policies: dict[str, Any],
    *,
    cases: Any = None,
    split: str | None = None,
    jobs: int = 1,
    progress: bool = True,
    desk: str = DEFAULT_DESK,
    env_kwargs: dict[str, Any] | None = None,
    backend: str = "local",
) -> dict[str, EvaluationResult]:
    """Every policy over the same cases (the desk's default split when none is named), on
    this machine or on Ray (``backend``)."""
    if cases is None and split is None:
        split = registry.get(desk).cases.default_split
    return {
        name: evaluate(
            policy,
            cases=cases,
            split=split,
            n_jobs=jobs,
            progress=progress,
            desk=desk,
            env_kwargs=env_kwargs,
            backend=backend,
        )
        for name, policy in policies.items()
    }


def report_json(results: dict[str, EvaluationResult], desk: str = DEFAULT_DESK) -> dict[str, Any]:
    return {"policies": {name: result.to_json(desk) for name, result in results.items()}}


__all__ = ["report_json", "run_policies"]
