"""Where an analyst environment's cases come from: its splits, its files, its procedural cases.

The drawing is the kernel's (:mod:`batchgate_gym.kernel.case_sources`): a fixed
list is drawn from with the environment's seeded generator unless a reset names a
case; a procedural source builds a fresh case (and dataset) from a seed drawn the
same way, so ``reset(seed=s)`` gives the same case in any process.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from batchgate_gym.kernel.case_sources import CaseSource, pick_procedural, resolve_cases

from . import forking
from .cases import AnalystCase, case_from_dict, load_cases
from .generator.build import DEFAULT_SCALE, check_knobs, check_seed
from .generator.splits import SPLITS

_KNOBS = ("level", "template", "store", "scale")


@dataclass(frozen=True)
class ProceduralAnalystCases:
    """A fresh case per reset. Reset options: ``level`` (1..7; open, it is drawn from 1..6), ``template``, ``store``,
    ``scale`` (orders, 50 to 1,000,000; 1,000 by default; level 7 is TPC-H at scale factor 0.01
    whatever it says) and ``case_seed``."""

    level: int | None = None
    template: str | None = None
    store: str | None = None
    scale: int = DEFAULT_SCALE

    def __post_init__(self) -> None:
        check_knobs(self.level, self.template, self.store, self.scale)

    def pick(self, rng: np.random.Generator, options: Mapping[str, Any]) -> AnalystCase:
        return pick_procedural(self, self.build, rng, options, _KNOBS, check_knobs, check_seed)

    def build(self, seed: int, **knobs: Any) -> AnalystCase:
        return build_procedural(seed, **knobs)


@functools.lru_cache(maxsize=256)
def _procedural(
    seed: int, level: int | None, template: str | None, store: str | None, scale: int
) -> AnalystCase:
    from .generator import build_case

    data = build_case(seed, level=level, template=template, store=store, scale=scale)
    return case_from_dict(data, f"<procedural case {seed}>")


def build_procedural(seed: int, **knobs: Any) -> AnalystCase:
    """The procedural case of ``seed`` and ``knobs`` (built once per process)."""
    k = check_knobs(**knobs)
    forking.enter()
    return _procedural(seed, k["level"], k["template"], k["store"], k["scale"])


_SPLIT_CACHE: dict[str, tuple[AnalystCase, ...]] = {}


def split_cases(name: str) -> list[AnalystCase]:
    """A named split, read once per process."""
    cached = _SPLIT_CACHE.get(name)
    if cached is None:
        from .generator import split_path

        cached = _SPLIT_CACHE[name] = tuple(load_cases(split_path(name)))
    return list(cached)


def case_source(
    cases: str | os.PathLike[str] | Iterable[Any] | CaseSource | None, **knobs: Any
) -> CaseSource:
    """``None``: procedural; a split name; a JSONL path; a list of dicts or cases; a source."""
    return resolve_cases(
        cases,
        splits={name: functools.partial(split_cases, name) for name in SPLITS},
        load=load_cases,
        case_type=AnalystCase,
        procedural=ProceduralAnalystCases,
        **knobs,
    )


__all__ = ["SPLITS", "ProceduralAnalystCases", "build_procedural", "case_source", "split_cases"]
