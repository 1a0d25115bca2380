"""Run a policy through the real text interface and collect exact results.

``evaluate`` drives any policy (an object with ``reset(observation, info)`` and
``act(observation)``, a class of such objects, or a plain callable from
observation to action) through a desk's text environment (the gate's
:class:`BatchGateEnv` unless told otherwise) episode by episode, and
returns per-episode results plus aggregates. Means are exact fractions rounded
only when shown, so the digits do not depend on the Python version; with
``n_jobs > 1`` episodes run in worker processes and the results are identical.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import DEFAULT_DESK
from batchgate_gym.envs.text_env import player_info
from batchgate_gym.kernel.scoring import exact
from batchgate_gym.kernel.text_policy import PolicyLike, as_policy


@dataclass(frozen=True, slots=True)
class EpisodeResult:
    """One episode, of any desk (or of a team): the reward, its terms and the metrics.

    Terms and metrics are also attributes (``result.disposition``,
    ``result.bad_batches_loaded``). ``seed`` is the reset seed; ``index`` the
    episode's place in its run.
    """

    index: int
    case_id: str
    family: str
    reward: float
    terms: dict[str, float]
    metrics: dict[str, Any]
    turns: int
    calls: int
    terminated: bool
    truncated: bool
    seed: int | None = None
    # Fields of the final info a desk names (``case_fields``), copied into its report per case.
    case_fields: dict[str, Any] = field(default_factory=dict)
    # Why the machine stopped the episode (an infrastructure error: no score), or "".
    infra_error: str = ""

    def __getattr__(self, name: str) -> Any:
        if name not in ("terms", "metrics") and not name.startswith("__"):
            for group in (self.terms, self.metrics):
                if name in group:
                    return group[name]
        raise AttributeError(name)


def _exact_mean(values: Iterable[float], n: int) -> Fraction:
    """The exact mean of ``values`` over ``n`` (at least 1): each distinct value converted
    once (a term takes a handful of values over thousands of episodes), then summed over
    one common denominator in plain integers and reduced once, the same fraction a sum of
    ``Fraction``s gives, without a reduction after every operation."""
    parts = [(exact(value), count) for value, count in Counter(values).items()]
    denominator = math.lcm(*(part.denominator for part, _count in parts))
    numerator = sum(part.numerator * (denominator // part.denominator) * count for part, count in parts)
    return Fraction(numerator, denominator * max(n, 1))


def cents(value: float) -> int:
    return round(value * 100)


@dataclass(frozen=True)
class Aggregate:
    """Means (exact) of the reward and terms, and totals of the metrics, over a group of episodes.

    Integer metrics are counts; float metrics are money, totalled exactly in cents.
    Totals are also attributes (``aggregate.bad_batches_loaded``). Episodes the machine
    stopped (infrastructure errors) have no score: they are counted apart
    (``infra_episodes``) and left out of every mean and total.
    """

    episodes: int
    means: dict[str, Fraction]
    counts: dict[str, int]
    cents: dict[str, int]
    infra_episodes: int = 0

    @classmethod
    def of(cls, results: Sequence[EpisodeResult]) -> Aggregate:
        infra = sum(1 for r in results if r.infra_error)
        # Every term has a mean, even when the machine stopped every episode (it reads 0, over none).
        terms = list(dict.fromkeys(name for r in results for name in r.terms))
        results = [r for r in results if not r.infra_error]
        n = len(results)
        means = {"reward": _exact_mean([r.reward for r in results], n)}
        for name in terms:
            means[name] = _exact_mean([r.terms[name] for r in results], n)
        counts: dict[str, int] = {}
        money: dict[str, int] = {}
        for r in results:
            for name, value in r.metrics.items():
                if isinstance(value, float):
                    money[name] = money.get(name, 0) + cents(value)
                else:
                    counts[name] = counts.get(name, 0) + int(value)
        return cls(episodes=n, means=means, counts=counts, cents=money, infra_episodes=infra)

    def mean(self, name: str, digits: int = 4) -> float:
        return round(float(self.means[name]), digits)

    def total(self, name: str) -> int | float:
        """A metric's total: a count, or an amount of money (from its exact cents)."""
        if name in self.cents:
            return self.cents[name] / 100
        return self.counts.get(name, 0)

    def __getattr__(self, name: str) -> Any:
        known = name not in ("counts", "cents") and not name.startswith("__")
        if known and (name in self.counts or name in self.cents):
            return self.total(name)
        raise AttributeError(name)


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

    def to_json(self, desk: registry.DeskSpec | str = DEFAULT_DESK) -> dict[str, Any]:
        """The report's JSON shape for one policy: headline means and totals, then every case."""
        desk = registry.get(desk) if isinstance(desk, str) else desk
        shown = [metric.name for metric in desk.scoring.shown_metrics]
        headline = desk.scoring.terms if desk.scoring.headline_terms is None else desk.scoring.headline_terms
        out: dict[str, Any] = {f"mean_{name}": self.overall.mean(name) for name in ("reward", *headline)}
        out.update({name: self.overall.total(name) for name in shown})
        if self.overall.infra_episodes:
            out["infra_episodes"] = self.overall.infra_episodes
        out["per_case"] = {
            r.case_id: {
                "family": r.family,
                **r.case_fields,
                "reward": r.reward,
                **r.terms,
                **{name: r.metrics[name] for name in shown},
                **({"infra_error": r.infra_error} if r.infra_error else {}),
            }
            for r in self.episodes
        }
        return out

    def rows(self) -> list[dict[str, Any]]:
        return [asdict(r) for r in self.episodes]


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
    desk: str = DEFAULT_DESK


def _run_job(job: _Job, on_episode: Callable[[int], Any] | None = None) -> list[EpisodeResult]:
    """One environment plays the job's episodes in order (in this process or a worker)."""
    desk = registry.get(job.desk)
    env = desk.make_env(**job.env_kwargs)
    policy = as_policy(job.policy)
    out = []
    try:
        for index, reset in job.resets:
            out.append(run_episode(env, policy, index, reset, desk))
            if on_episode is not None:
                on_episode(1)
    finally:
        env.close()
    return out


class PolicyError(RuntimeError):
    """A policy raised while it played: the message names the policy, the case, the turn and
    what it raised (a command says it in one line; ``__cause__`` holds the exception)."""


def _policy_call(policy: Any, case: str, turn: int, call: Callable[[], Any]) -> Any:
    """``call()``, a policy's reset or act; an exception it raises becomes a :class:`PolicyError`."""
    try:
        return call()
    except Exception as exc:
        raise PolicyError(
            f"policy {policy_name(policy)!r} raised {type(exc).__name__}: {exc} (case {case}, turn {turn})"
        ) from exc


def run_episode(
    env: Any, policy: Any, index: int, reset_kwargs: dict[str, Any], desk: registry.DeskSpec | None = None
) -> EpisodeResult:
    observation, info = env.reset(**reset_kwargs)
    case = info.get("case_id", f"of reset {reset_kwargs}")
    _policy_call(policy, case, 0, functools.partial(policy.reset, observation, player_info(info)))
    calls = 0
    while True:
        action = _policy_call(policy, case, info["turn"] + 1, functools.partial(policy.act, observation))
        observation, _reward, terminated, truncated, info = env.step(action)
        calls += info.get("calls", 0)
        if terminated or truncated:
            break
    desk = desk or registry.get(DEFAULT_DESK)
    played = {
        "index": index,
        "turns": info["turn"],
        "calls": calls,
        "terminated": terminated,
        "truncated": truncated,
        "seed": reset_kwargs.get("seed"),
        "case_fields": {name: info[name] for name in desk.case_fields if name in info},
    }
    if "infra_error" in info:
        return EpisodeResult(**played, **unscored_fields(desk, info))
    if desk.policies.after_episode is not None:
        info = desk.policies.after_episode(env, policy, info)
    return EpisodeResult(**played, **desk.scoring.episode_fields(info))


def unscored_fields(desk: registry.DeskSpec, info: dict[str, Any]) -> dict[str, Any]:
    """An episode the machine stopped: no score (zeros, left out of every mean), its error kept."""
    return desk.scoring.unscored_fields(info)


def _plan(
    desk: registry.DeskSpec, cases: Any, split: str | None, seeds: Iterable[int] | None
) -> tuple[list[Any] | None, list[tuple[int, dict[str, Any]]]]:
    given = [arg is not None for arg in (cases, split, seeds)]
    if sum(given) != 1:
        raise ValueError("give exactly one of cases=, split= or seeds=")
    if seeds is not None:
        return None, [(i, {"seed": int(seed)}) for i, seed in enumerate(seeds)]
    fixed = desk.fixed_cases(cases, split)
    return fixed, [(i, {"seed": i, "options": {"case_index": i}}) for i in range(len(fixed))]


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
    desk: str = DEFAULT_DESK,
) -> EvaluationResult:
    """Run ``policy`` over every case (or seed) of a desk (the gate by default) and return exact results.

    Exactly one of ``cases`` (a JSONL path or a list of cases), ``split`` (a named
    split) or ``seeds`` (procedural cases, one per seed) is given. ``n_jobs > 1``
    spreads episodes over worker processes (the policy must pickle); the results
    are the same as with ``n_jobs=1``, in the same order. ``backend="ray"`` runs
    the episodes as Ray tasks (a cluster named by ``RAY_ADDRESS``, else local Ray;
    see :mod:`.ray_backend`), with the same results. ``desk`` names a desk of
    :mod:`.desks`, whose text environment is played.
    """
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', not {backend!r}")
    fixed, resets = _plan(registry.get(desk), cases, split, seeds)
    kwargs = dict(env_kwargs or {})
    if fixed is not None:
        kwargs["cases"] = fixed
    jobs = _chunks(policy, kwargs, resets, max(1, n_jobs), desk)
    episodes: list[EpisodeResult] = []
    with _progress_bar(len(resets), progress, policy_name(policy)) as bar:
        if backend == "ray":
            from .ray_backend import ray_map, task_count

            jobs = _chunks(policy, kwargs, resets, min(len(resets), task_count(n_jobs)) or 1, desk)
            for chunk in ray_map(_run_job, jobs):
                episodes.extend(chunk)
                bar.update(len(chunk))
        elif n_jobs <= 1:
            episodes = _run_job(_Job(policy, kwargs, resets, desk), bar.update)
        else:
            with ProcessPoolExecutor(max_workers=n_jobs, mp_context=_start(desk)) as pool:
                for chunk in pool.map(_run_job, jobs):
                    episodes.extend(chunk)
                    bar.update(len(chunk))
    episodes.sort(key=lambda r: r.index)
    return EvaluationResult(policy_name(policy), episodes)


def _start(desk: str) -> Any:
    """The desk's start method for worker processes, where the platform has it."""
    import multiprocessing

    method = registry.get(desk).start_method
    return multiprocessing.get_context(method if method in multiprocessing.get_all_start_methods() else None)


def _chunks(
    policy: PolicyLike,
    kwargs: dict[str, Any],
    resets: list[tuple[int, dict[str, Any]]],
    n_jobs: int,
    desk: str = DEFAULT_DESK,
) -> list[_Job]:
    per_job = max(1, -(-len(resets) // (n_jobs * 4)))
    return [_Job(policy, kwargs, resets[i : i + per_job], desk) for i in range(0, len(resets), per_job)]


def _progress_bar(total: int, enabled: bool, label: str) -> Any:
    from .progress import bar

    return bar(total, label, enabled=enabled)
