"""Run a policy through the real text interface and collect exact results.

``evaluate`` drives any policy (an object with ``reset(observation, info)`` and
``act(observation)``, a class of such objects, or a plain callable from
observation to action) through :class:`BatchGateEnv` episode by episode, and
returns per-episode results plus aggregates. Means are exact fractions rounded
only when shown, so the digits do not depend on the Python version; with
``n_jobs > 1`` episodes run in worker processes and the results are identical.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

from batchgate_gym.desks.gate.grader import TERMS

PolicyLike = Any  # Policy object, Policy class, or callable(observation) -> action
_DENOMINATOR_LIMIT = 1_000_000  # terms are k/n with small n: recovered exactly from floats


@dataclass(frozen=True, slots=True)
class EpisodeResult:
    index: int
    case_id: str
    family: str
    reward: float
    disposition: float
    report: float
    evidence: float
    inspected: float
    bad_batches_loaded: int
    revenue_error_usd: float
    defective_batches: int
    turns: int
    calls: int
    terminated: bool
    truncated: bool


def exact(value: float) -> Fraction:
    return Fraction(value).limit_denominator(_DENOMINATOR_LIMIT)


def cents(value: float) -> int:
    return round(value * 100)


@dataclass(frozen=True)
class Aggregate:
    """Means (exact) and totals over a group of episodes."""

    episodes: int
    means: dict[str, Fraction]
    bad_batches_loaded: int
    revenue_error_cents: int
    defective_batches: int

    @classmethod
    def of(cls, results: Sequence[EpisodeResult]) -> Aggregate:
        n = len(results)
        means = {
            name: sum((exact(getattr(r, name)) for r in results), Fraction(0)) / max(n, 1)
            for name in ("reward", *TERMS)
        }
        return cls(
            episodes=n,
            means=means,
            bad_batches_loaded=sum(r.bad_batches_loaded for r in results),
            revenue_error_cents=sum(cents(r.revenue_error_usd) for r in results),
            defective_batches=sum(r.defective_batches for r in results),
        )

    def mean(self, name: str, digits: int = 4) -> float:
        return round(float(self.means[name]), digits)

    @property
    def revenue_error_usd(self) -> float:
        return self.revenue_error_cents / 100


@dataclass
class EvaluationResult:
    policy: str
    episodes: list[EpisodeResult]
    overall: Aggregate = field(init=False)
    per_family: dict[str, Aggregate] = field(init=False)

    def __post_init__(self) -> None:
        self.overall = Aggregate.of(self.episodes)
        families: dict[str, list[EpisodeResult]] = {}
        for result in self.episodes:
            families.setdefault(result.family, []).append(result)
        self.per_family = {name: Aggregate.of(group) for name, group in families.items()}

    def to_json(self) -> dict[str, Any]:
        """The report's JSON shape for one policy."""
        return {
            "mean_reward": self.overall.mean("reward"),
            "mean_disposition": self.overall.mean("disposition"),
            "bad_batches_loaded": self.overall.bad_batches_loaded,
            "revenue_error_usd": self.overall.revenue_error_usd,
            "per_case": {
                r.case_id: {
                    "family": r.family,
                    "reward": r.reward,
                    "disposition": r.disposition,
                    "report": r.report,
                    "evidence": r.evidence,
                    "inspected": r.inspected,
                    "bad_batches_loaded": r.bad_batches_loaded,
                    "revenue_error_usd": r.revenue_error_usd,
                }
                for r in self.episodes
            },
        }

    def rows(self) -> list[dict[str, Any]]:
        return [asdict(r) for r in self.episodes]


class _CallablePolicy:
    """Adapts a plain ``observation -> action`` callable to the policy interface."""

    def __init__(self, function: Callable[[str], str]) -> None:
        self.function = function

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        return None

    def act(self, observation: str) -> str:
        return self.function(observation)


def as_policy(policy: PolicyLike) -> Any:
    if isinstance(policy, type):
        policy = policy()
    if hasattr(policy, "act") and hasattr(policy, "reset"):
        return policy
    if callable(policy):
        return _CallablePolicy(policy)
    raise TypeError("a policy needs reset(observation, info) and act(observation), or must be callable")


def policy_name(policy: PolicyLike) -> str:
    name = getattr(policy, "name", None)
    if isinstance(name, str):
        return name
    return getattr(policy, "__name__", type(policy).__name__)


@dataclass(frozen=True)
class _Job:
    policy: PolicyLike
    env_kwargs: dict[str, Any]
    resets: list[tuple[int, dict[str, Any]]]  # (index, reset kwargs)


def _run_job(job: _Job, on_episode: Callable[[int], Any] | None = None) -> list[EpisodeResult]:
    """One environment plays the job's episodes in order (in this process or a worker)."""
    from batchgate_gym.envs import BatchGateEnv

    env = BatchGateEnv(**job.env_kwargs)
    policy = as_policy(job.policy)
    out = []
    try:
        for index, reset in job.resets:
            out.append(run_episode(env, policy, index, reset))
            if on_episode is not None:
                on_episode(1)
    finally:
        env.close()
    return out


def run_episode(env: Any, policy: Any, index: int, reset_kwargs: dict[str, Any]) -> EpisodeResult:
    observation, info = env.reset(**reset_kwargs)
    policy.reset(observation, info)
    calls = 0
    while True:
        observation, _reward, terminated, truncated, info = env.step(policy.act(observation))
        calls += info["calls"]
        if terminated or truncated:
            break
    score = info["score"]
    return EpisodeResult(
        index=index,
        case_id=info["case_id"],
        family=info["family"],
        reward=score["reward"],
        disposition=score["disposition"],
        report=score["report"],
        evidence=score["evidence"],
        inspected=score["inspected"],
        bad_batches_loaded=score["bad_batches_loaded"],
        revenue_error_usd=score["revenue_error_usd"],
        defective_batches=info["defective_batches"],
        turns=info["turn"],
        calls=calls,
        terminated=terminated,
        truncated=truncated,
    )


def _plan(
    cases: Any, split: str | None, seeds: Iterable[int] | None
) -> tuple[Any, list[tuple[int, dict[str, Any]]]]:
    from batchgate_gym.desks.gate.sources import FixedCases, case_source

    given = [arg is not None for arg in (cases, split, seeds)]
    if sum(given) != 1:
        raise ValueError("give exactly one of cases=, split= or seeds=")
    if seeds is not None:
        return None, [(i, {"seed": int(seed)}) for i, seed in enumerate(seeds)]
    source = case_source(cases if cases is not None else split)
    if not isinstance(source, FixedCases):
        raise ValueError("cases= must name a fixed set of cases; use seeds= for procedural ones")
    return source, [(i, {"seed": i, "options": {"case_index": i}}) for i in range(len(source))]


def evaluate(
    policy: PolicyLike,
    *,
    cases: Any = None,
    split: str | None = None,
    seeds: Iterable[int] | None = None,
    n_jobs: int = 1,
    progress: bool = True,
    env_kwargs: dict[str, Any] | None = None,
    backend: str = "local",
) -> EvaluationResult:
    """Run ``policy`` over every case (or seed) and return exact results.

    Exactly one of ``cases`` (a JSONL path or a list of cases), ``split`` (a named
    split) or ``seeds`` (procedural cases, one per seed) is given. ``n_jobs > 1``
    spreads episodes over worker processes (the policy must pickle); the results
    are the same as with ``n_jobs=1``, in the same order. ``backend="ray"`` runs
    the episodes as Ray tasks (a cluster named by ``RAY_ADDRESS``, else local Ray;
    see :mod:`.ray_backend`), with the same results.
    """
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', not {backend!r}")
    source, resets = _plan(cases, split, seeds)
    kwargs = dict(env_kwargs or {})
    if source is not None:
        kwargs["cases"] = source.cases
    jobs = _chunks(policy, kwargs, resets, max(1, n_jobs))
    episodes: list[EpisodeResult] = []
    with _progress_bar(len(resets), progress, policy_name(policy)) as bar:
        if backend == "ray":
            from .ray_backend import ray_map

            for chunk in ray_map(_run_job, jobs):
                episodes.extend(chunk)
                bar.update(len(chunk))
        elif n_jobs <= 1:
            episodes = _run_job(_Job(policy, kwargs, resets), bar.update)
        else:
            with ProcessPoolExecutor(max_workers=n_jobs) as pool:
                for chunk in pool.map(_run_job, jobs):
                    episodes.extend(chunk)
                    bar.update(len(chunk))
    episodes.sort(key=lambda r: r.index)
    return EvaluationResult(policy_name(policy), episodes)


def _chunks(
    policy: PolicyLike, kwargs: dict[str, Any], resets: list[tuple[int, dict[str, Any]]], n_jobs: int
) -> list[_Job]:
    per_job = max(1, -(-len(resets) // (n_jobs * 4)))
    return [_Job(policy, kwargs, resets[i : i + per_job]) for i in range(0, len(resets), per_job)]


def _progress_bar(total: int, enabled: bool, label: str) -> Any:
    from tqdm.auto import tqdm

    disable = not enabled or total < 50 or os.environ.get("BATCHGATE_NO_PROGRESS") == "1"
    return tqdm(total=total, desc=label, unit="ep", disable=disable, leave=False)
