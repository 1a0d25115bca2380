"""Where an environment's cases come from, and how a reset picks one.

A *case* is whatever a desk's world is reset to; the kernel only asks that it has
a ``case_id``. A *source* hands out one case per reset: :class:`FixedCases` draws
from a fixed, ordered list with the environment's seeded generator (or takes the
case a reset names), and a procedural source (:class:`ProceduralSource`) builds a
fresh case from a seed drawn the same way, so ``reset(seed=s)`` gives the same
case in any process. :func:`resolve_cases` turns an environment's ``cases=``
argument into a source, with the desk naming its splits, its file loader, its
case type and its procedural source.

A desk configures the generic parts in a few lines: :class:`ProceduralCaseSource`
is the base of its procedural source (a frozen dataclass whose fields are its
knobs), and :class:`DeskCases` reads its named splits once per process and
resolves its environments' ``cases=``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np

SEED_LIMIT = 2**31 - 1  # a drawn case seed is in [0, SEED_LIMIT)


@runtime_checkable
class CaseSource(Protocol):
    """Anything with ``pick``: the case for one reset, from the env's generator and the reset's options."""

    def pick(self, rng: np.random.Generator, options: Mapping[str, Any]) -> Any: ...


@runtime_checkable
class ProceduralSource(CaseSource, Protocol):
    """A source that builds a new case on every pick.

    ``build(seed, **knobs)`` is the case for one seed and set of knobs (the same
    every time: it is a function of them); ``pick`` merges the reset's options with
    the source's own knobs and builds from a seed the options name or
    :func:`draw_seed` draws.
    """

    def build(self, seed: int, **knobs: Any) -> Any: ...


def draw_seed(rng: np.random.Generator) -> int:
    """A case seed drawn with the environment's generator."""
    return int(rng.integers(0, SEED_LIMIT))


T = TypeVar("T")


def pick_procedural(
    source: Any,
    build: Callable[..., T],
    rng: np.random.Generator,
    options: Mapping[str, Any],
    knob_names: Sequence[str],
    check_knobs: Callable[..., Mapping[str, Any]],
    check_seed: Callable[[Any, str], int],
) -> T:
    """One reset of a procedural source whose knobs are its attributes of ``knob_names``.

    Reset options may override any knob or name the seed (``case_seed``); anything else
    is refused. Knobs and seed are checked before anything is built, a seed not given is
    drawn with the environment's generator, and ``build(seed, **knobs)`` makes the case.
    """
    unknown = set(options) - {*knob_names, "case_seed"}
    if unknown:
        raise ValueError(
            f"unknown reset options for procedural cases: {', '.join(sorted(map(repr, unknown)))}"
        )
    knobs = check_knobs(**{name: options.get(name, getattr(source, name)) for name in knob_names})
    seed = options.get("case_seed")
    seed = draw_seed(rng) if seed is None else check_seed(seed, "case_seed")
    return build(seed, **knobs)


class ProceduralCaseSource:
    """The base of a desk's procedural source: a frozen dataclass whose fields are its knobs.

    The fields are the defaults a reset's options may override (:func:`pick_procedural`);
    ``check_knobs`` (the desk's, given as a class keyword) checks them, merged with a
    reset's options, and returns them normalised; ``check_seed`` (likewise) checks a
    ``case_seed``; ``build`` makes the case of one seed and set of knobs. The knobs are
    checked, and kept normalised, when the source is made, so a bad value raises
    ``ValueError`` at once::

        @dataclass(frozen=True)
        class ProceduralCases(ProceduralCaseSource, check_knobs=check_knobs, check_seed=check_seed):
            family: str | None = None

            def build(self, seed: int, **knobs: Any) -> Case: ...
    """

    check_knobs: ClassVar[Callable[..., Mapping[str, Any]]]
    check_seed: ClassVar[Callable[[Any, str], int]]

    def __init_subclass__(
        cls,
        *,
        check_knobs: Callable[..., Mapping[str, Any]],
        check_seed: Callable[[Any, str], int],
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        # static, so that the checks read the same from the class and from an instance
        cls.check_knobs = staticmethod(check_knobs)
        cls.check_seed = staticmethod(check_seed)

    def __post_init__(self) -> None:
        for key, value in type(self).check_knobs(**self.knobs()).items():
            object.__setattr__(self, key, value)

    def knobs(self) -> dict[str, Any]:
        """The source's knobs by name, in the order its fields are declared."""
        return {name: getattr(self, name) for name in _knob_names(type(self))}

    def pick(self, rng: np.random.Generator, options: Mapping[str, Any]) -> Any:
        return self.pick_seeded(rng, options)[1]

    def pick_seeded(self, rng: np.random.Generator, options: Mapping[str, Any]) -> tuple[int, Any]:
        """:meth:`pick`, with the case seed the case was built from (a reset's ``info`` names it)."""
        if not options:  # the source's own knobs, checked and normalised when it was made
            seed = draw_seed(rng)
            return seed, self.build(seed, **self.knobs())
        seeds: list[int] = []

        def build(seed: int, **knobs: Any) -> Any:
            seeds.append(seed)
            return self.build(seed, **knobs)

        desk = type(self)
        case = pick_procedural(
            self, build, rng, options, _knob_names(desk), desk.check_knobs, desk.check_seed
        )
        return seeds[0], case

    def build(self, seed: int, **knobs: Any) -> Any:
        raise NotImplementedError


def _knob_names(source: type) -> tuple[str, ...]:
    """A procedural source's knob names: its dataclass fields, in declared order (read once)."""
    names = _KNOB_NAMES.get(source)
    if names is None:
        names = _KNOB_NAMES[source] = tuple(field.name for field in dataclasses.fields(source))
    return names


_KNOB_NAMES: dict[type, tuple[str, ...]] = {}


def procedural_case(read: Callable[[Any, str], T], data: Any, seed: int) -> T:
    """The case a generator's ``data`` for ``seed`` is, read by the desk's ``read(data, origin)``.

    The origin a procedural case's errors name is its seed, the same on every desk.
    """
    return read(data, f"<procedural case {seed}>")


FIXED_CASE_OPTIONS = ("case_id", "case_index")  # the reset options that name a fixed case


class FixedCases:
    """A fixed, ordered list of cases.

    A reset's options may name a case by ``case_id`` or by position
    (``case_index``); otherwise one is drawn uniformly with the generator.
    """

    def __init__(self, cases: Sequence[Any], origin: Mapping[str, str] | None = None) -> None:
        if not cases:
            raise ValueError("no cases given")
        self.cases = cases
        # Where the cases come from, for a reset's info: {"split": NAME} or {"cases": PATH}.
        self.origin = dict(origin or {})
        self._by_id = {case.case_id: index for index, case in enumerate(cases)}

    def __len__(self) -> int:
        return len(self.cases)

    def pick(self, rng: np.random.Generator, options: Mapping[str, Any]) -> Any:
        case = self.named(options)
        return self.cases[int(rng.integers(len(self.cases)))] if case is None else case

    def named(self, options: Mapping[str, Any]) -> Any | None:
        """The case the options name (``case_id`` or ``case_index``), or ``None`` when they
        name none (:meth:`pick` draws one then): a case named needs no generator, so an
        environment seeded at reset need not make one (seeding one costs more than the rest
        of a built reset). Any other option, or both names at once, is refused: fixed cases
        have no knobs to turn, and an option silently dropped would read as applied."""
        unknown = set(options) - set(FIXED_CASE_OPTIONS)
        if unknown:
            raise ValueError(
                f"unknown reset options for fixed cases: {', '.join(sorted(map(repr, unknown)))}"
                f" (fixed cases take {' or '.join(FIXED_CASE_OPTIONS)})"
            )
        if len(options) > 1:
            raise ValueError("give case_id or case_index, not both")
        if "case_id" in options:
            index = self._by_id.get(options["case_id"])
            if index is None:
                raise ValueError(f"no case with case_id {options['case_id']!r}")
        elif "case_index" in options:
            index = int(options["case_index"])
            if not 0 <= index < len(self.cases):
                raise ValueError(f"case_index {index} is outside 0..{len(self.cases) - 1}")
        else:
            return None
        return self.cases[index]


def cases_or_split(cases: Any, split: str | None) -> Any:
    """An environment's ``cases``, given its ``split=`` alias: the split's name, when only it is given."""
    if split is None:
        return cases
    if cases is not None:
        raise ValueError("give cases= or split=, not both")
    if not isinstance(split, str):
        raise ValueError(f"split must be a split's name, not {split!r}")
    return split


def resolve_cases(
    cases: str | os.PathLike[str] | Iterable[Any] | CaseSource | None,
    *,
    splits: Mapping[str, Callable[[], Sequence[Any]]],
    load: Callable[[Any], Sequence[Any]],
    case_type: type,
    procedural: Callable[..., CaseSource],
    **knobs: Any,
) -> CaseSource:
    """Resolve the ``cases`` argument of an environment into a source.

    ``None`` is ``procedural(**knobs)``; any object with ``pick`` is a source
    already; a name in ``splits`` is that split (``splits[name]()``); any other
    string or path is a file, read by ``load``; otherwise an iterable holding only
    ``case_type`` objects is used as it is, and one holding anything else is given
    to ``load`` (parsed dicts, say). ``knobs`` apply to procedural cases only.
    """
    if cases is None:
        return procedural(**knobs)
    if knobs:
        raise ValueError(f"scale knobs {sorted(knobs)} apply to procedural cases only")
    if hasattr(cases, "pick"):
        return cases  # type: ignore[return-value]
    if isinstance(cases, str) and cases in splits:
        return FixedCases(splits[cases](), {"split": cases})
    if isinstance(cases, (str, os.PathLike)):
        try:
            return FixedCases(load(cases), {"cases": os.fspath(cases)})
        except FileNotFoundError:  # a mistyped split name reads better than "no such file"
            raise ValueError(
                f"{os.fspath(cases)!r} is neither a split ({', '.join(splits)}) nor an existing case file"
            ) from None
    items = list(cases)
    if all(isinstance(item, case_type) for item in items):
        return FixedCases(items)
    return FixedCases(load(items))


class DeskCases(Generic[T]):
    """Where one desk's cases come from: its named splits, its case files, its procedural source.

    ``split_path(name)`` locates a split's file and ``load`` reads a file (or a list of
    parsed dicts) into cases of ``case_type``; ``procedural(**knobs)`` is the desk's
    procedural source. Each split is read once per process and shared by every
    environment.
    """

    def __init__(
        self,
        splits: Sequence[str],
        split_path: Callable[[str], Any],
        load: Callable[[Any], Sequence[T]],
        case_type: type[T],
        procedural: Callable[..., CaseSource],
    ) -> None:
        self.splits = tuple(splits)
        self._split_path = split_path
        self._load = load
        self._case_type = case_type
        self._procedural = procedural
        self._read: dict[str, tuple[T, ...]] = {}

    def split(self, name: str) -> list[T]:
        """A named split, read once per process: the caller's own list (the cases in it are read-only)."""
        cached = self._read.get(name)
        if cached is None:
            cached = self._read[name] = tuple(self._load(self._split_path(name)))
        return list(cached)

    def source(
        self, cases: str | os.PathLike[str] | Iterable[Any] | CaseSource | None, **knobs: Any
    ) -> CaseSource:
        """Resolve the ``cases`` argument of an environment (:func:`resolve_cases`).

        ``None`` is a procedural source (``knobs`` go to it); a split's name serves that
        fixed split; any other string or path is a JSONL file; a list holds case dicts
        or cases; anything with ``pick`` is a source already.
        """
        return resolve_cases(
            cases,
            splits={name: functools.partial(self.split, name) for name in self.splits},
            load=self._load,
            case_type=self._case_type,
            procedural=self._procedural,
            **knobs,
        )


__all__ = [
    "FIXED_CASE_OPTIONS",
    "SEED_LIMIT",
    "CaseSource",
    "DeskCases",
    "FixedCases",
    "ProceduralCaseSource",
    "ProceduralSource",
    "cases_or_split",
    "draw_seed",
    "procedural_case",
    "resolve_cases",
]
