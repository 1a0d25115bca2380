"""The desks the ``batchgate`` command knows, by name.

A desk is one game of the house (the batch gate today; a refund desk and an
analyst desk later). Each is registered once, with a name, a one-line
description and ``make``, a function that builds its :class:`Desk` record: how
to make its text environment, where its cases come from, its reference policies
and attackers, the terms and metrics its tables show, and its team game and
speed benchmark if it has them. ``make`` runs the first time the desk is asked
for, so registering costs nothing and ``batchgate --help`` imports no desk code.

Every command finds what it plays through :func:`get`; none imports a desk's
modules itself. Each desk registers itself from a module named ``app`` in its own
package (``batchgate_gym/desks/<name>/app.py``, one :func:`register` call; the
gate's is the example), which is imported the first time the registry is read;
code outside the package may also call :func:`register` directly (the tests do).

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
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from .tables import money

if TYPE_CHECKING:
    from .evaluate import EpisodeResult  # evaluate imports this module

__all__ = ["CaseSourceError", "Desk", "Metric", "TeamGame", "get", "names", "register", "unregister"]


@dataclass(frozen=True)
class Metric:
    """A figure an episode ends with, besides the reward terms.

    Integers are counts and floats are amounts of money (summed exactly, to the
    cent); a ``cents`` metric is an int number of cents, summed as a count and
    shown in dollars. ``column`` heads it in per-policy tables, ``row`` labels it in the
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
    cents: bool = False
    out_of: str | None = None
    source: str = "score"
    shown: bool = True
    worst: str | None = None

    def read(self, info: Mapping[str, Any]) -> Any:
        return (info["score"] if self.source == "score" else info)[self.name]

    def text(self, value: Any) -> str:
        """A value of this metric as tables print it: money as dollars, else as it is."""
        if self.money:
            return money(value)
        if self.cents:
            return money(value / 100)
        return str(value)


@dataclass(frozen=True)
class TeamGame:
    """A desk's multi-agent game, as ``batchgate team`` plays it.

    ``make_env(parallel, **kwargs)`` makes the PettingZoo environment (AEC, or
    parallel when asked); ``policies`` are played one instance per agent;
    ``solo`` names a single-agent reference policy replayed on the very cases
    the team drew, for comparison. ``result(seed, finals)`` turns every agent's
    final info into one episode result; ``mishaps`` are the count metrics it
    adds, with their column labels. ``options`` names the desk options (of
    ``Desk.options``) the team environment takes too; ``attackers(**options)``
    gives the attackers to play after the policies under those options, each
    measured against the policy ``target``.
    """

    make_env: Callable[..., Any]
    policies: Callable[[], Mapping[str, Any]]
    solo: str
    result: Callable[[int, Mapping[str, Mapping[str, Any]]], EpisodeResult]
    mishaps: tuple[tuple[str, str], ...] = ()
    case_of: Callable[[Any], Any] = lambda env: env.unwrapped.game.case
    overlap: bool = True  # the environment takes ``overlap`` (the gate's lists do; not every game deals so)
    options: tuple[str, ...] = ()
    attackers: Callable[..., Mapping[str, Any]] = lambda **options: {}
    target: str | None = None


def cases_drawn(make_env: Callable[..., Any]) -> Callable[..., list[Any]]:
    """``procedural_cases`` for a desk whose env draws a fresh case per seed: the cases
    ``reset(seed=s)`` draws by default (or under the drawing options given, such as the
    refund desk's ``tickets``), read back from the env's world."""

    def draw(seeds: Iterable[int], **options: Any) -> list[Any]:
        env = make_env(**options)
        try:
            found = []
            for seed in seeds:
                env.reset(seed=seed)
                found.append(env.unwrapped.world.case)
            return found
        finally:
            env.close()

    return draw


# What each kind of policy is, as legends explain the kinds (Desk.kind_of, attack_kind).
KIND_MEANINGS = {
    "target": "the honest policy the attackers are measured against",
    "reference": "a reference policy of the desk",
    "baseline": "a simpler honest strategy, measured but held to no margin",
    "attacker": "the cheapest cheat at one term; it should land at least 0.05 below the target",
    "oracle": "an attacker told the truth of the cases played",
    "yours": "a policy given with --policy",
}


class CaseSourceError(ValueError):
    """The cases a command or :func:`~.evaluate.evaluate` was pointed at cannot be had."""


@dataclass(frozen=True)
class DeskOption:
    """A keyword of the desk's environment that the commands playing it (report, attacks,
    play, run-model) expose as ``--NAME``; ``parse`` turns the chosen text into the
    keyword's value (``"on"`` into ``True``)."""

    name: str
    choices: tuple[str, ...]
    default: str
    help: str = ""
    parse: Callable[[str], Any] = str
    # Shapes the procedural cases drawn (a property of the case, as a refund queue's length):
    # given when cases are drawn, never with fixed cases, which already hold their shape.
    draws: bool = False


@dataclass(frozen=True)
class Desk:
    """Everything the commands need to know about one desk."""

    name: str
    description: str
    make_env: Callable[..., Any]
    terms: tuple[str, ...]
    weights: Mapping[str, Fraction]
    reference_policies: Mapping[str, Any]
    default_policies: tuple[str, ...]
    env_id: str | None = None
    splits: tuple[str, ...] = ()
    default_split: str | None = None
    split_cases: Callable[[str], list[Any]] | None = None
    load_cases: Callable[[Any], list[Any]] | None = None
    procedural_cases: Callable[..., list[Any]] | None = None  # (seeds, **drawing options) -> cases
    metrics: tuple[Metric, ...] = ()
    term_notes: Mapping[str, str] = field(default_factory=dict)  # term -> what it asks, for legends
    reward_span: str = "from 0 to 1"  # what values an episode's reward takes, for legends
    headline_terms: tuple[str, ...] | None = None  # mean rows of the baseline table; all terms if None
    exact_terms: tuple[tuple[str, str], ...] = ()  # (term, label): episodes where the term is 1
    attackers: Mapping[str, Any] = field(default_factory=dict)  # by name, for --policies
    build_attacks: Callable[[list[Any]], Mapping[str, Any]] | None = None  # cases -> target, then attackers
    attack_target: str | None = None
    attack_kind: Callable[[str], str] = lambda name: "attacker"
    team: TeamGame | None = None
    bench: Callable[[], Any] | None = None  # () -> module with run_benchmark(config, log, clock), markdown
    # (env, policy, final info) -> final info: how the desk grades a policy that hands
    # in something after its episode (the refund desk's log-editing attackers).
    after_episode: Callable[[Any, Any, dict[str, Any]], dict[str, Any]] | None = None
    options: tuple[DeskOption, ...] = ()  # environment keywords the commands take as --NAME
    # The action an assistant message without tool calls becomes in a chat (None: a
    # refused turn with a nudge); a desk whose episodes end on a plain reply maps it.
    chat_no_tool_call: Callable[[str], str] | None = None
    # Fields of an episode's final info that its row of a JSON report carries (the analyst
    # desk's level and store), beside the family.
    case_fields: tuple[str, ...] = ()
    # How ``--jobs`` worker processes start: "fork" is cheapest; a desk whose libraries keep
    # thread pools that do not survive fork (the analyst desk's polars and chDB) asks "spawn".
    start_method: str = "fork"

    @property
    def shown_metrics(self) -> tuple[Metric, ...]:
        return tuple(metric for metric in self.metrics if metric.shown)

    def kind_of(self, name: str) -> str:
        """What a policy of a comparison is: the attack target, one of the desk's attackers
        (of the kind the desk says), a reference policy, or one of the user's own."""
        if name == self.attack_target:
            return "target"
        if name in self.attackers:
            return self.attack_kind(name)
        return "reference" if name in self.reference_policies else "yours"

    def term_legend(self) -> list[tuple[str, str]]:
        """Every term with its weight and what it asks, as table legends give them."""
        return [
            (
                term,
                f"{float(self.weights[term]):.2f} of the reward; {self.term_notes.get(term, 'a term of the score')}",
            )
            for term in self.terms
        ]

    def metric(self, name: str) -> Metric:
        return next(metric for metric in self.metrics if metric.name == name)

    def known_policies(self) -> dict[str, Any]:
        """Reference policies, then attackers, by name."""
        return {**self.reference_policies, **self.attackers}

    def fixed_cases(self, cases: Any = None, split: str | None = None) -> list[Any]:
        """The cases of a file (or given list) or of a named split; the default split if neither.

        Cases that cannot be had (an unknown split, a case file missing or broken: the
        desk's message names the line and field) raise :class:`CaseSourceError`.
        """
        if cases is not None:
            if isinstance(cases, str) and cases in self.splits:
                return self.fixed_cases(split=cases)
            if self.load_cases is None:
                raise CaseSourceError(f"desk {self.name!r} reads no case files")
            try:
                return self.load_cases(cases)
            except OSError as exc:
                raise CaseSourceError(
                    f"cannot read the case file {str(cases)!r}: {exc.strerror or exc}"
                ) from exc
            except ValueError as exc:  # the desk's CaseFormatError
                raise CaseSourceError(str(exc)) from exc
        split = split or self.default_split
        if split is None or self.split_cases is None:
            raise CaseSourceError(f"desk {self.name!r} has no named splits")
        if split not in self.splits:
            raise CaseSourceError(
                f"desk {self.name!r} has no split {split!r}; splits: {', '.join(self.splits)}"
            )
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
    options: tuple[DeskOption, ...] = ()
    extra: str | None = None
    built: Desk | None = field(default=None)


_REGISTRY: dict[str, _Entry] = {}
_DISCOVERED = False


def register(
    name: str,
    description: str,
    make: Callable[[], Desk],
    *,
    options: tuple[DeskOption, ...] = (),
    extra: str | None = None,
    replace: bool = False,
) -> None:
    """Make ``name`` known; ``make()`` builds its :class:`Desk` when it is first asked for.

    ``options`` are the desk's environment options (the very tuple its :class:`Desk`
    holds): the command line declares them without building any desk. ``extra`` names
    the extra of ``setup.cfg`` that brings the desk's libraries when the base install
    lacks them (``make()`` then raises :class:`~batchgate_gym.kernel.extras.MissingExtra`).
    """
    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"a desk name is letters, digits, '-' and '_', not {name!r}")
    if name in _REGISTRY and not replace:
        raise ValueError(f"desk {name!r} is already registered")
    _REGISTRY[name] = _Entry(description, make, options, extra)


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


def extra_of(name: str) -> str | None:
    """The extra a desk's libraries come with (None: the base install has them)."""
    _discover()
    return _REGISTRY[name].extra


def having_option(option: str) -> list[str]:
    """The registered desks that take the environment option ``option``."""
    _discover()
    return [name for name, entry in _REGISTRY.items() if any(o.name == option for o in entry.options)]


def all_options() -> dict[str, DeskOption]:
    """Every registered desk's environment options by name (the first desk naming one
    describes it), read from the registrations: no desk is built."""
    _discover()
    found: dict[str, DeskOption] = {}
    for entry in _REGISTRY.values():
        for option in entry.options:
            found.setdefault(option.name, option)
    return found


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
        if desk.options != entry.options:
            raise ValueError(f"desk {name!r} has options its registration does not name")
        entry.built = desk
    return entry.built


def _discover() -> None:
    """Import ``batchgate_gym.desks.<name>.app`` for every desk package that has one."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    import batchgate_gym.desks as package

    # The gate, the default desk, first; then the others by name.
    for module in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: (m.name != "gate", m.name)):
        if not module.ispkg:
            continue
        hook = f"{package.__name__}.{module.name}.app"
        if importlib.util.find_spec(hook) is not None:
            importlib.import_module(hook)
