"""The desks by name: what each one is, for everything that plays them.

A desk is one game of the house. Each declares itself in its own package
(``batchgate_gym/desks/<name>/spec.py``) with one :class:`DeskEntry`: a name, a
one-line description, the environment options the commands expose, the extra its
libraries come with, and ``build``, a function that makes its :class:`DeskSpec`.
The entry costs nothing to read, so ``batchgate --help`` builds no desk; ``build``
runs the first time :func:`get` asks for the desk.

A :class:`DeskSpec` names its environment, case loaders, policies, team game and
speed benchmark by string entry point (``"module:attribute"``, as Gymnasium ids
do), loaded when first used: the registry imports no environment or policy code,
and nothing here imports the command line (:mod:`batchgate_gym.app`), which sits
above the desks. Code outside the packages may also call :func:`register` (the
tests do).

A desk's text environment takes its cases as its first argument (a list of
cases, or ``None`` for fresh cases drawn from the reset seed), accepts
``reset(seed=..., options={"case_index": i})`` to play the i-th fixed case, and
on its last step puts ``score`` (``reward``, every term, every metric read from
the score), ``case_id`` and optionally ``family`` into ``info``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from batchgate_gym.tables import money

__all__ = [
    "DEFAULT_DESK",
    "KIND_MEANINGS",
    "CaseSourceError",
    "CaseSupply",
    "DeskEntry",
    "DeskOption",
    "DeskSpec",
    "Metric",
    "PolicySet",
    "Scoring",
    "TeamSpec",
    "get",
    "load",
    "names",
    "register",
    "unregister",
]

DEFAULT_DESK = "gate"
"""The desk a command plays when not told ``--desk``."""

FinalInfo = Mapping[str, Any]


def load(entry_point: str) -> Any:
    """The object an entry point names: ``"package.module:attribute"``, or a module."""
    module, _, attribute = entry_point.partition(":")
    found = importlib.import_module(module)
    return getattr(found, attribute) if attribute else found


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

    def read(self, info: FinalInfo) -> Any:
        return (info["score"] if self.source == "score" else info)[self.name]

    def text(self, value: Any) -> str:
        """A value of this metric as tables print it: money as dollars, else as it is."""
        if self.money:
            return money(value)
        if self.cents:
            return money(value / 100)
        return str(value)


@dataclass(frozen=True)
class Scoring:
    """What an episode's score holds and how the tables show it.

    ``weights`` name the terms, in the order the tables show them; ``term_notes`` say what each term asks (for legends); ``reward_span`` what values
    the reward takes; ``headline_terms`` are the mean rows of the baseline table (all
    terms if None); ``exact_terms`` are ``(term, label)`` pairs counted where the term is 1.
    """

    weights: Mapping[str, Fraction]
    term_notes: Mapping[str, str] = field(default_factory=dict)
    reward_span: str = "from 0 to 1"
    lowest_reward: Fraction = Fraction(0)  # the least the desk pays: a missing rollout scored as a failure
    headline_terms: tuple[str, ...] | None = None
    exact_terms: tuple[tuple[str, str], ...] = ()
    metrics: tuple[Metric, ...] = ()

    @property
    def terms(self) -> tuple[str, ...]:
        return tuple(self.weights)

    @property
    def shown_metrics(self) -> tuple[Metric, ...]:
        return tuple(metric for metric in self.metrics if metric.shown)

    def metric(self, name: str) -> Metric:
        return next(metric for metric in self.metrics if metric.name == name)

    def term_legend(self) -> list[tuple[str, str]]:
        """Every term with its weight and what it asks, as table legends give them."""
        return [
            (
                term,
                f"{float(self.weights[term]):.2f} of the reward; {self.term_notes.get(term, 'a term of the score')}",
            )
            for term in self.terms
        ]

    def episode_fields(self, info: FinalInfo) -> dict[str, Any]:
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

    def unscored_fields(self, info: FinalInfo) -> dict[str, Any]:
        """The result fields of an episode the machine stopped (``info["infra_error"]``): no
        score, so every term and metric 0 (left out of every mean), and the error kept."""
        return {
            "case_id": info["case_id"],
            "family": info.get("family", ""),
            "reward": 0.0,
            "terms": {term: 0.0 for term in self.terms},
            "metrics": {metric.name: 0.0 if metric.money else 0 for metric in self.metrics},
            "infra_error": str(info["infra_error"]),
        }


@dataclass(frozen=True)
class CaseSupply:
    """Where a desk's fixed cases come from: named ``splits`` (``split_cases`` is the
    entry point of a function from a split's name to its cases) and case files
    (``load_cases``: from a path or file to cases, raising ``ValueError`` on a bad one)."""

    splits: tuple[str, ...] = ()
    default_split: str | None = None
    split_cases: str | None = None
    load_cases: str | None = None

    @classmethod
    def of_package(
        cls, package: str, splits: Iterable[str], load_cases: str = "cases:load_cases"
    ) -> CaseSupply:
        """A desk package's cases as the house lays them out: ``sources.split_cases`` by
        split name, the ``eval`` split by default, and case files read by ``load_cases``
        (an entry point inside the package)."""
        return cls(
            splits=tuple(splits),
            default_split="eval",
            split_cases=f"{package}.sources:split_cases",
            load_cases=f"{package}.{load_cases}",
        )


# What each kind of policy is, as legends explain the kinds (DeskSpec.kind_of, PolicySet.kind).
KIND_MEANINGS = {
    "target": "the honest policy the attackers are measured against",
    "reference": "a reference policy of the desk",
    "baseline": "a simpler honest strategy, measured but held to no margin",
    "attacker": "the cheapest cheat at one term; it should land at least 0.05 below the target",
    "oracle": "an attacker told the truth of the cases played",
    "yours": "a policy given with --policy",
}

PolicyLineup = Callable[[list[Any]], Mapping[str, Any]]
"""The cases an attack table plays -> the target policy, then every attacker, by name."""

AfterEpisode = Callable[[Any, Any, dict[str, Any]], dict[str, Any]]
"""(env, policy, final info) -> final info: how a desk grades what a policy hands in
after its episode (the refund desk's log-editing attackers)."""


@dataclass(frozen=True)
class PolicySet:
    """A desk's policies, by entry point of a mapping from name to policy (class or object).

    ``reference`` mappings are merged in order; ``defaults`` are what ``report`` compares
    unless told otherwise. ``lineup`` is the entry point of the function (a
    :data:`PolicyLineup`, or the function itself) that builds the attack table's
    policies for the cases played (:meth:`line_up`), and ``target`` names the honest one
    the attackers are measured against;
    ``oracles`` and ``baselines`` are entry points of the names of the line-up that are
    oracles (told the truth of the cases) and honest baselines, the rest being attackers.
    ``compared`` names the honest policy and its naive counterpart, which a served episode
    is checked against the report with (:mod:`batchgate_gym.serving.checking`).
    """

    reference: tuple[str, ...]
    defaults: tuple[str, ...]
    attackers: str | None = None
    lineup: str | PolicyLineup | None = None
    target: str | None = None
    oracles: str | None = None
    baselines: str | None = None
    after_episode: AfterEpisode | None = None
    compared: tuple[str, ...] = ()

    @functools.cached_property
    def reference_policies(self) -> dict[str, Any]:
        return {name: policy for entry in self.reference for name, policy in load(entry).items()}

    @functools.cached_property
    def attacker_policies(self) -> dict[str, Any]:
        return {} if self.attackers is None else dict(load(self.attackers))

    def line_up(self, cases: list[Any]) -> dict[str, Any]:
        """The attack table's policies for ``cases``: the target first, then every attacker."""
        if self.lineup is None:
            raise ValueError("this desk has no attack line-up")
        build: PolicyLineup = load(self.lineup) if isinstance(self.lineup, str) else self.lineup
        return dict(build(cases))

    def known(self) -> dict[str, Any]:
        """Reference policies, then attackers, by name."""
        return {**self.reference_policies, **self.attacker_policies}

    def kind(self, name: str) -> str:
        """What a policy of the attack line-up is (a key of :data:`KIND_MEANINGS`)."""
        if name == self.target:
            return "target"
        if self.oracles is not None and name in load(self.oracles):
            return "oracle"
        if self.baselines is not None and name in load(self.baselines):
            return "baseline"
        return "attacker"


TeamOutcome = Callable[[Scoring, Mapping[str, FinalInfo]], tuple[dict[str, Any], bool]]
"""Every agent's final info -> the episode's result fields (as
:meth:`Scoring.episode_fields` gives them, the team's own counts added) and whether
every agent finished its work."""


@dataclass(frozen=True)
class TeamSpec:
    """A desk's multi-agent game, as ``batchgate team`` plays it.

    ``env`` is the entry point of a module with ``env(**kwargs)`` (AEC) and
    ``parallel_env(**kwargs)``; ``policies`` of a mapping of team policies, played one
    instance per agent; ``solo`` names a single-agent reference policy replayed on the
    very cases the team drew, for comparison. ``outcome`` reads a played episode;
    ``mishaps`` are the count metrics it adds, with their column labels. ``overlap``:
    the environment takes ``overlap`` (the gate's lists do; not every game deals so).
    ``options`` names the desk options (of :attr:`DeskSpec.options`) the team
    environment takes too; ``attackers(**options)`` gives the attackers to play after
    the policies under those options, each measured against the policy ``target``.
    """

    env: str
    policies: str
    solo: str
    outcome: TeamOutcome
    mishaps: tuple[tuple[str, str], ...] = ()
    overlap: bool = True
    options: tuple[str, ...] = ()
    attackers: Callable[..., Mapping[str, Any]] | None = None
    target: str | None = None

    def make_env(self, parallel: bool = False, **kwargs: Any) -> Any:
        module = load(self.env)
        return module.parallel_env(**kwargs) if parallel else module.env(**kwargs)

    def team_policies(self) -> dict[str, Any]:
        return dict(load(self.policies))

    def team_attackers(self, **options: Any) -> dict[str, Any]:
        return {} if self.attackers is None else dict(self.attackers(**options))

    @staticmethod
    def case_of(env: Any) -> Any:
        return env.unwrapped.game.case


class CaseSourceError(ValueError):
    """The cases a command or ``evaluate`` was pointed at cannot be had."""


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
class DeskSpec:
    """Everything the commands need to know about one desk (its one-line description is
    its :class:`DeskEntry`'s: :func:`descriptions`).

    ``env`` is the entry point of its text environment class, ``trl_env`` of its class
    for TRL's ``environment_factory`` (one method per tool: :mod:`batchgate_gym.llm.trl_env`),
    ``audit`` of its :class:`~batchgate_gym.evaluation.audit.DeskAudit` (what ``batchgate
    audit`` plays and switches off) and ``bench`` of its speed benchmark module
    (``run_benchmark(config, log, clock)`` and ``markdown(result)``).
    ``chat_no_tool_call`` is the action an assistant message without tool calls becomes
    in a chat (None: a refused turn with a nudge; a desk whose episodes end on a plain
    reply maps it). ``case_fields`` are fields of an episode's final info that its row
    of a JSON report carries, beside the family. ``start_method`` is how ``--jobs``
    worker processes start: "fork" is cheapest; a desk whose libraries keep thread
    pools that do not survive fork asks "spawn".
    """

    name: str
    env: str
    scoring: Scoring
    policies: PolicySet
    cases: CaseSupply = CaseSupply()
    env_id: str | None = None
    team: TeamSpec | None = None
    bench: str | None = None
    trl_env: str | None = None
    audit: str | None = None
    options: tuple[DeskOption, ...] = ()
    chat_no_tool_call: Callable[[str], str] | None = None
    case_fields: tuple[str, ...] = ()
    start_method: str = "fork"

    def make_env(self, cases: Any = None, **kwargs: Any) -> Any:
        return load(self.env)(cases, **kwargs)

    def procedural_cases(self, seeds: Iterable[int], **options: Any) -> list[Any]:
        """The cases ``reset(seed=s)`` draws by default (or under the drawing options
        given, such as the refund desk's ``tickets``), read back from the env's world."""
        env = self.make_env(**options)
        try:
            found = []
            for seed in seeds:
                env.reset(seed=seed)
                found.append(env.unwrapped.world.case)
            return found
        finally:
            env.close()

    def kind_of(self, name: str) -> str:
        """What a policy of a comparison is: the attack target, one of the desk's attackers
        (of the kind the desk says), a reference policy, or one of the user's own."""
        if name == self.policies.target:
            return "target"
        if name in self.policies.attacker_policies:
            return self.policies.kind(name)
        return "reference" if name in self.policies.reference_policies else "yours"

    def fixed_cases(self, cases: Any = None, split: str | None = None) -> list[Any]:
        """The cases of a file (or given list) or of a named split; the default split if neither.

        Cases that cannot be had (an unknown split, a case file missing or broken: the
        desk's message names the line and field) raise :class:`CaseSourceError`.
        """
        supply = self.cases
        if cases is not None:
            if isinstance(cases, str) and cases in supply.splits:
                return self.fixed_cases(split=cases)
            if supply.load_cases is None:
                raise CaseSourceError(f"desk {self.name!r} reads no case files")
            try:
                found: list[Any] = load(supply.load_cases)(cases)
                return found
            except OSError as exc:
                raise CaseSourceError(
                    f"cannot read the case file {str(cases)!r}: {exc.strerror or exc}"
                ) from exc
            except ValueError as exc:  # the desk's CaseFormatError
                raise CaseSourceError(str(exc)) from exc
        split = split or supply.default_split
        if split is None or supply.split_cases is None:
            raise CaseSourceError(f"desk {self.name!r} has no named splits")
        if split not in supply.splits:
            raise CaseSourceError(
                f"desk {self.name!r} has no split {split!r}; splits: {', '.join(supply.splits)}"
            )
        named: list[Any] = load(supply.split_cases)(split)
        return named


@dataclass(frozen=True)
class DeskEntry:
    """A desk as its package declares it: enough to list it and to build it later.

    ``options`` are the desk's environment options (the very tuple its :class:`DeskSpec`
    holds): the command line declares them without building any desk. ``extra`` names
    the extra of ``setup.cfg`` that brings the desk's libraries when the base install
    lacks them (``build()`` then raises :class:`~batchgate_gym.kernel.extras.MissingExtra`).
    """

    name: str
    description: str
    build: Callable[[], DeskSpec]
    options: tuple[DeskOption, ...] = ()
    extra: str | None = None


_REGISTRY: dict[str, DeskEntry] = {}
_BUILT: dict[str, DeskSpec] = {}
_DISCOVERED = False


def register(entry: DeskEntry, *, replace: bool = False) -> None:
    """Make ``entry.name`` known; its :class:`DeskSpec` is built when first asked for."""
    name = entry.name
    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"a desk name is letters, digits, '-' and '_', not {name!r}")
    if name in _REGISTRY and not replace:
        raise ValueError(f"desk {name!r} is already registered")
    _REGISTRY[name] = entry
    _BUILT.pop(name, None)


def unregister(name: str) -> None:
    """Forget ``name`` (tests that register a desk of their own clean up with this)."""
    _REGISTRY.pop(name, None)
    _BUILT.pop(name, None)


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


def get(name: str) -> DeskSpec:
    """The desk registered as ``name`` (built on first use); ``KeyError`` naming the known ones."""
    _discover()
    entry = _REGISTRY.get(name)
    if entry is None:
        raise KeyError(f"unknown desk {name!r}; known: {', '.join(_REGISTRY)}")
    if name not in _BUILT:
        desk = entry.build()
        if desk.name != name:
            raise ValueError(f"desk registered as {name!r} calls itself {desk.name!r}")
        if desk.options != entry.options:
            raise ValueError(f"desk {name!r} has options its registration does not name")
        _BUILT[name] = desk
    return _BUILT[name]


def _discover() -> None:
    """Register the ``ENTRY`` of ``batchgate_gym.desks.<name>.spec`` for every desk package."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    import batchgate_gym.desks as package

    # The default desk first; then the others by name.
    found = sorted(pkgutil.iter_modules(package.__path__), key=lambda m: (m.name != DEFAULT_DESK, m.name))
    for module in found:
        declaration = f"{package.__name__}.{module.name}.spec"
        if module.ispkg and importlib.util.find_spec(declaration) is not None:
            entry = importlib.import_module(declaration).ENTRY
            if entry.name not in _REGISTRY:
                register(entry)
