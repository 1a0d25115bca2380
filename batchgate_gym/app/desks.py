"""The desks the ``batchgate`` command knows, by name.

A desk is one game of the house (the batch gate today; a refund desk and an
analyst desk later). Each is registered once, with a name, a one-line
description and ``make``, a function that builds its :class:`Desk` record: how
to make its text environment, where its cases come from, its reference policies
and attackers, the terms and metrics its tables show, and its team game and
speed benchmark if it has them. ``make`` runs the first time the desk is asked
for, so registering costs nothing and ``batchgate --help`` imports no desk code.

Every command finds what it plays through :func:`get`; none imports a desk's
modules itself. The gate registers at the end of this module. Any other desk
registers itself from a module named ``app`` in its own package
(``batchgate_gym/desks/<name>/app.py``, one :func:`register` call), which is
imported the first time the registry is read; code outside the package may also
call :func:`register` directly (the tests do).

A desk's text environment takes its cases as its first argument (a list of
cases, or ``None`` for fresh cases drawn from the reset seed), accepts
``reset(seed=..., options={"case_index": i})`` to play the i-th fixed case, and
on its last step puts ``score`` (``reward``, every term, every metric read from
the score), ``case_id`` and optionally ``family`` into ``info``.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Desk", "Metric", "TeamGame", "get", "names", "register", "unregister"]


@dataclass(frozen=True)
class Metric:
    """A figure an episode ends with, besides the reward terms.

    Integers are counts and floats are amounts of money (summed exactly, to the
    cent). ``column`` heads it in per-policy tables, ``row`` labels it in the
    baseline table (``{cases}`` is replaced by the number of cases) and
    ``phrase`` introduces it in a played episode's score. ``out_of`` names the
    metric it is a part of (shown ``k / n``). ``source`` is ``"score"`` (read
    from ``info["score"]``) or ``"info"`` (from ``info`` itself). A hidden
    metric (``shown=False``) is aggregated but not printed on its own (a
    denominator). ``worst`` titles a table of the largest values per policy.
    """

    name: str
    column: str = ""
    row: str = ""
    phrase: str = ""
    money: bool = False
    out_of: str | None = None
    source: str = "score"
    shown: bool = True
    worst: str | None = None

    def read(self, info: Mapping[str, Any]) -> Any:
        return (info["score"] if self.source == "score" else info)[self.name]


@dataclass(frozen=True)
class TeamGame:
    """A desk's multi-agent game, as ``batchgate team`` plays it.

    ``make_env(parallel, **kwargs)`` makes the PettingZoo environment (AEC, or
    parallel when asked); ``policies`` are played one instance per agent;
    ``solo`` names a single-agent reference policy replayed on the very cases
    the team drew, for comparison. ``result(seed, finals)`` turns every agent's
    final info into one episode result; ``mishaps`` are the count metrics it
    adds, with their column labels.
    """

    make_env: Callable[..., Any]
    policies: Callable[[], Mapping[str, Any]]
    solo: str
    result: Callable[[int, Mapping[str, Mapping[str, Any]]], Any]
    mishaps: tuple[tuple[str, str], ...] = ()
    case_of: Callable[[Any], Any] = lambda env: env.unwrapped.game.case


@dataclass(frozen=True)
class Desk:
    """Everything the commands need to know about one desk."""

    name: str
    description: str
    make_env: Callable[..., Any]
    terms: tuple[str, ...]
    weights: Mapping[str, float]
    reference_policies: Mapping[str, Any]
    default_policies: tuple[str, ...]
    env_id: str | None = None
    splits: tuple[str, ...] = ()
    default_split: str | None = None
    split_cases: Callable[[str], list[Any]] | None = None
    load_cases: Callable[[Any], list[Any]] | None = None
    procedural_cases: Callable[[Iterable[int]], list[Any]] | None = None
    metrics: tuple[Metric, ...] = ()
    headline_terms: tuple[str, ...] | None = None  # mean rows of the baseline table; all terms if None
    exact_terms: tuple[tuple[str, str], ...] = ()  # (term, label): episodes where the term is 1
    attackers: Mapping[str, Any] = field(default_factory=dict)  # by name, for --policies
    build_attacks: Callable[[list[Any]], Mapping[str, Any]] | None = None  # cases -> target, then attackers
    attack_target: str | None = None
    attack_kind: Callable[[str], str] = lambda name: "attacker"
    team: TeamGame | None = None
    bench: Callable[[], Any] | None = None  # () -> module with run_benchmark(config, log, clock), markdown

    @property
    def shown_metrics(self) -> tuple[Metric, ...]:
        return tuple(metric for metric in self.metrics if metric.shown)

    def metric(self, name: str) -> Metric:
        return next(metric for metric in self.metrics if metric.name == name)

    def known_policies(self) -> dict[str, Any]:
        """Reference policies, then attackers, by name."""
        return {**self.reference_policies, **self.attackers}

    def fixed_cases(self, cases: Any = None, split: str | None = None) -> list[Any]:
        """The cases of a file (or given list) or of a named split; the default split if neither."""
        if cases is not None:
            if isinstance(cases, str) and cases in self.splits:
                return self.fixed_cases(split=cases)
            if self.load_cases is None:
                raise ValueError(f"desk {self.name!r} reads no case files")
            return self.load_cases(cases)
        split = split or self.default_split
        if split is None or self.split_cases is None:
            raise ValueError(f"desk {self.name!r} has no named splits")
        if split not in self.splits:
            raise ValueError(f"desk {self.name!r} has no split {split!r}; splits: {', '.join(self.splits)}")
        return self.split_cases(split)

    def episode_fields(self, info: Mapping[str, Any]) -> dict[str, Any]:
        """The desk-specific part of an episode's result, from its final info."""
        score = info["score"]
        return {
            "case_id": info["case_id"],
            "family": info.get("family", ""),
            "reward": score["reward"],
            "terms": {term: score[term] for term in self.terms},
            "metrics": {
                metric.name: float(metric.read(info)) if metric.money else int(metric.read(info))
                for metric in self.metrics
            },
        }


@dataclass
class _Entry:
    description: str
    make: Callable[[], Desk]
    built: Desk | None = field(default=None)


_REGISTRY: dict[str, _Entry] = {}
_DISCOVERED = False


def register(name: str, description: str, make: Callable[[], Desk], *, replace: bool = False) -> None:
    """Make ``name`` known; ``make()`` builds its :class:`Desk` when it is first asked for."""
    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"a desk name is letters, digits, '-' and '_', not {name!r}")
    if name in _REGISTRY and not replace:
        raise ValueError(f"desk {name!r} is already registered")
    _REGISTRY[name] = _Entry(description, make)


def unregister(name: str) -> None:
    """Forget ``name`` (tests that register a desk of their own clean up with this)."""
    _REGISTRY.pop(name, None)


def names() -> list[str]:
    """Every registered desk, in registration order."""
    _discover()
    return list(_REGISTRY)


def descriptions() -> dict[str, str]:
    _discover()
    return {name: entry.description for name, entry in _REGISTRY.items()}


def get(name: str) -> Desk:
    """The desk registered as ``name`` (built on first use); ``KeyError`` naming the known ones."""
    _discover()
    entry = _REGISTRY.get(name)
    if entry is None:
        raise KeyError(f"unknown desk {name!r}; known: {', '.join(_REGISTRY)}")
    if entry.built is None:
        desk = entry.make()
        if desk.name != name:
            raise ValueError(f"desk registered as {name!r} calls itself {desk.name!r}")
        entry.built = desk
    return entry.built


def _discover() -> None:
    """Import ``batchgate_gym.desks.<name>.app`` for every desk package that has one."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    import batchgate_gym.desks as package

    for module in pkgutil.iter_modules(package.__path__):
        if not module.ispkg:
            continue
        hook = f"{package.__name__}.{module.name}.app"
        if importlib.util.find_spec(hook) is not None:
            importlib.import_module(hook)


# -- the gate ------------------------------------------------------------------------------------
# Everything below imports the gate's modules inside functions: naming the desk is free.


def _gate_env(cases: Any = None, **kwargs: Any) -> Any:
    from batchgate_gym.envs import BatchGateEnv

    return BatchGateEnv(cases, **kwargs)


def _gate_load_cases(source: Any) -> list[Any]:
    from batchgate_gym.desks.gate.sources import FixedCases, case_source

    found = case_source(source)
    if not isinstance(found, FixedCases):
        raise ValueError("cases= must name a fixed set of cases; use seeds= for procedural ones")
    return found.cases


def _gate_split_cases(name: str) -> list[Any]:
    from batchgate_gym.desks.gate.sources import split_cases

    return split_cases(name)


def _gate_procedural(seeds: Iterable[int]) -> list[Any]:
    """The cases ``reset(seed=s)`` draws by default, read back from the world."""
    env = _gate_env()
    try:
        found = []
        for seed in seeds:
            env.reset(seed=seed)
            found.append(env.unwrapped.world.case)
        return found
    finally:
        env.close()


def _gate_attackers(cases: list[Any]) -> dict[str, Any]:
    """careful first, then every attacker, oracles given the truth of ``cases``."""
    from batchgate_gym.policies import CarefulPolicy
    from batchgate_gym.policies.attackers import ATTACKERS, Truth, build_attacker

    truth = Truth.from_cases(cases)
    return {"careful": CarefulPolicy(), **{name: build_attacker(name, truth) for name in ATTACKERS}}


def _gate_kind(name: str) -> str:
    from batchgate_gym.policies.attackers import BASELINES, ORACLES

    if name == "careful":
        return "target"
    return "oracle" if name in ORACLES else "baseline" if name in BASELINES else "attacker"


def _gate_team_env(parallel: bool = False, **kwargs: Any) -> Any:
    from batchgate_gym.envs import team

    return team.parallel_env(**kwargs) if parallel else team.env(**kwargs)


def _gate_team_policies() -> dict[str, Any]:
    from batchgate_gym.policies.team import TEAM_POLICIES

    return dict(TEAM_POLICIES)


def _gate_team_result(seed: int, finals: Mapping[str, Mapping[str, Any]]) -> Any:
    """One team episode's result from every agent's final info (the score is the same in each)."""
    from .evaluate import EpisodeResult

    info = next(iter(finals.values()))
    parts = [final["contribution"] for final in finals.values()]

    def cited(defect_type: str) -> int:
        return sum(part["wrong_citations"].count(defect_type) for part in parts)

    desk = get("gate")
    fields = desk.episode_fields({**info, "family": ""})
    fields["metrics"].update(
        repeat_loads=sum(part["repeat_loads"] for part in parts),
        orphan_loads=sum(part["orphan_loads"] for part in parts),
        miscited_duplicate=cited("duplicate_key"),  # quarantines citing it that earn no evidence
        miscited_orphan=cited("orphan_reference"),
    )
    reported = all(part["reported"] for part in parts)
    return EpisodeResult(
        index=seed,
        seed=seed,
        turns=max(final["turn"] for final in finals.values()),
        calls=0,  # not counted for team episodes
        terminated=reported,
        truncated=not reported,
        **fields,
    )


def _gate_bench() -> Any:
    from . import bench

    return bench


def _make_gate() -> Desk:
    from batchgate_gym.desks.gate.grader import TERMS, WEIGHTS
    from batchgate_gym.desks.gate.sources import SPLITS
    from batchgate_gym.policies import ATTACKERS, REFERENCE_POLICIES
    from batchgate_gym.registration import ENV_ID

    return Desk(
        name="gate",
        description=_GATE_DESCRIPTION,
        env_id=ENV_ID,
        make_env=_gate_env,
        terms=tuple(TERMS),
        weights=dict(WEIGHTS),
        reference_policies=dict(REFERENCE_POLICIES),
        default_policies=("naive", "careful", "refuse-all"),
        splits=tuple(SPLITS),
        default_split="eval",
        split_cases=_gate_split_cases,
        load_cases=_gate_load_cases,
        procedural_cases=_gate_procedural,
        metrics=(
            Metric(
                "bad_batches_loaded",
                column="bad loaded",
                row="defective batches loaded",
                phrase="defective batches loaded",
                out_of="defective_batches",
            ),
            Metric(
                "revenue_error_usd",
                column="revenue error",
                row="revenue error, all {cases} cases",
                phrase="revenue error",
                money=True,
                worst="Largest revenue errors",
            ),
            Metric("defective_batches", source="info", shown=False),
        ),
        headline_terms=("disposition",),
        exact_terms=(("report", "reports that match what happened"),),
        attackers=dict(ATTACKERS),
        build_attacks=_gate_attackers,
        attack_target="careful",
        attack_kind=_gate_kind,
        team=TeamGame(
            make_env=_gate_team_env,
            policies=_gate_team_policies,
            solo="naive",
            result=_gate_team_result,
            mishaps=(
                ("repeat_loads", "repeat loads"),
                ("orphan_loads", "orphan loads"),
                ("miscited_duplicate", "wrongly cited duplicate"),
                ("miscited_orphan", "wrongly cited orphan"),
            ),
        ),
        bench=_gate_bench,
    )


_GATE_DESCRIPTION = "BadBatchGate: gate a nightly warehouse load"
register("gate", _GATE_DESCRIPTION, _make_gate)
