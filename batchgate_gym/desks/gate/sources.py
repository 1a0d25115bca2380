"""Where an environment's cases come from, and how a reset picks one.

A fixed list of cases (a JSONL file, parsed dicts, or a named split) is drawn from
uniformly with the environment's seeded generator unless the reset names a case;
a procedural source builds a fresh case from a seed drawn the same way, so
``reset(seed=s)`` gives the same case in any process and new seeds new cases.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .cases import Case, case_from_dict, load_cases


class CaseSource(Protocol):
    def pick(self, rng: np.random.Generator, options: Mapping[str, Any]) -> Case: ...


class FixedCases:
    """A fixed, ordered list of cases."""

    def __init__(self, cases: list[Case]) -> None:
        if not cases:
            raise ValueError("no cases given")
        self.cases = cases
        self._by_id = {case.case_id: index for index, case in enumerate(cases)}

    def __len__(self) -> int:
        return len(self.cases)

    def pick(self, rng: np.random.Generator, options: Mapping[str, Any]) -> Case:
        if "case_id" in options:
            index = self._by_id.get(options["case_id"])
            if index is None:
                raise ValueError(f"no case with case_id {options['case_id']!r}")
        elif "case_index" in options:
            index = int(options["case_index"])
            if not 0 <= index < len(self.cases):
                raise ValueError(f"case_index {index} is outside 0..{len(self.cases) - 1}")
        else:
            index = int(rng.integers(len(self.cases)))
        return self.cases[index]


SPLITS = ("eval", "train")
_SCALE_KEYS = ("family", "variant", "rows_per_batch", "batches", "defects_per_batch")


@dataclass(frozen=True)
class ProceduralCases:
    """A fresh case per reset from the generator; knobs are defaults a reset may override.

    Reset options: ``family`` and ``variant`` fix what is drawn; ``rows_per_batch``
    (a ``(low, high)`` pair or one number), ``batches`` and ``defects_per_batch``
    scale it; ``case_seed`` names the case's seed outright instead of drawing it.
    The knobs are checked when the source is made and again, merged with a reset's
    options, before each case is built (bounds: ``check_knobs`` in
    :mod:`batchgate_gym.desks.gate.generator.build`; ``case_seed`` an int in ``[-2**63, 2**63)``),
    so a bad value raises ``ValueError`` before any work is done.
    """

    family: str | None = None
    variant: int | None = None
    rows_per_batch: int | tuple[int, int] = (3, 20)
    batches: int = 2
    defects_per_batch: int = 1

    def __post_init__(self) -> None:
        from .generator.build import check_knobs

        for key, value in check_knobs(**{key: getattr(self, key) for key in _SCALE_KEYS}).items():
            object.__setattr__(self, key, value)

    def pick(self, rng: np.random.Generator, options: Mapping[str, Any]) -> Case:
        from .generator.build import check_knobs, check_seed

        unknown = set(options) - {*_SCALE_KEYS, "case_seed"}
        if unknown:
            raise ValueError(
                f"unknown reset options for procedural cases: {', '.join(sorted(map(repr, unknown)))}"
            )
        knobs = check_knobs(**{key: options.get(key, getattr(self, key)) for key in _SCALE_KEYS})
        seed = options.get("case_seed")
        seed = int(rng.integers(0, 2**31 - 1)) if seed is None else check_seed(seed, "case_seed")
        return build_procedural(seed, **knobs)


def build_procedural(seed: int, **knobs: Any) -> Case:
    from .generator import build_case

    return case_from_dict(build_case(seed, **knobs), f"<procedural case {seed}>")


def split_cases(name: str) -> list[Case]:
    """A named split, read once per process and shared by every environment."""
    cached = _SPLIT_CACHE.get(name)
    if cached is None:
        from .generator import split_path

        cached = _SPLIT_CACHE[name] = tuple(load_cases(split_path(name)))
    return list(cached)  # the caller's own list: the cases in it are read-only


_SPLIT_CACHE: dict[str, tuple[Case, ...]] = {}


def case_source(
    cases: str | os.PathLike[str] | Iterable[Any] | CaseSource | None, **knobs: Any
) -> CaseSource:
    """Resolve the ``cases`` argument of an environment.

    ``None`` draws procedural cases (``knobs`` go to :class:`ProceduralCases`); a
    split name (``"eval"``, ``"train"``) serves that fixed split; any other string
    or path is a JSONL file; a list holds case dicts or :class:`Case` objects.
    """
    if cases is None:
        return ProceduralCases(**knobs)
    if knobs:
        raise ValueError(f"scale knobs {sorted(knobs)} apply to procedural cases only")
    if hasattr(cases, "pick"):
        return cases  # type: ignore[return-value]
    if isinstance(cases, str) and cases in SPLITS:
        return FixedCases(split_cases(cases))
    if isinstance(cases, (str, os.PathLike)):
        return FixedCases(load_cases(cases))
    items = list(cases)
    if all(isinstance(item, Case) for item in items):
        return FixedCases(items)
    return FixedCases(load_cases(items))
