"""Where an analyst environment's cases come from: its splits, its files, its procedural cases.

The drawing is the kernel's (:mod:`batchgate_gym.kernel.case_sources`): a fixed
list is drawn from with the environment's seeded generator unless a reset names a
case; a procedural source builds a fresh case (and dataset) from a seed drawn the
same way, so ``reset(seed=s)`` gives the same case in any process.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from batchgate_gym.kernel.case_sources import DeskCases, ProceduralCaseSource, procedural_case

from .cases import AnalystCase, case_from_dict, load_cases
from .engines import forking
from .generator import build_case
from .generator.build import DEFAULT_SCALE, check_knobs, check_seed
from .generator.splits import SPLITS, split_path


@dataclass(frozen=True)
class ProceduralAnalystCases(ProceduralCaseSource, check_knobs=check_knobs, check_seed=check_seed):
    """A fresh case per reset. Reset options: ``level`` (1..7; open, it is drawn from 1..6), ``template``, ``store``,
    ``scale`` (orders, 50 to 1,000,000; 1,000 by default; level 7 is TPC-H at scale factor 0.01
    whatever it says) and ``case_seed``."""

    level: int | None = None
    template: str | None = None
    store: str | None = None
    scale: int = DEFAULT_SCALE

    def build(self, seed: int, **knobs: Any) -> AnalystCase:
        return build_procedural(seed, **knobs)


@functools.lru_cache(maxsize=256)
def _procedural(
    seed: int, level: int | None, template: str | None, store: str | None, scale: int
) -> AnalystCase:
    data = build_case(seed, level=level, template=template, store=store, scale=scale)
    return procedural_case(case_from_dict, data, seed)


def build_procedural(seed: int, **knobs: Any) -> AnalystCase:
    """The procedural case of ``seed`` and ``knobs`` (built once per process)."""
    k = check_knobs(**knobs)
    forking.enter()
    return _procedural(seed, k["level"], k["template"], k["store"], k["scale"])


CASES = DeskCases(SPLITS, split_path, load_cases, AnalystCase, ProceduralAnalystCases)
split_cases = CASES.split  # a named split, read once per process and shared by every environment
case_source = CASES.source  # an environment's ``cases=``: None (procedural), a split, a file, a list


__all__ = ["CASES", "SPLITS", "ProceduralAnalystCases", "build_procedural", "case_source", "split_cases"]
