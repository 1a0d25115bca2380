"""Where a gate environment's cases come from: its splits, its files, its procedural cases.

The drawing itself is the kernel's (:mod:`batchgate_gym.kernel.case_sources`): a
fixed list of cases (a JSONL file, parsed dicts, or a named split) is drawn from
uniformly with the environment's seeded generator unless the reset names a case;
a procedural source builds a fresh case from a seed drawn the same way, so
``reset(seed=s)`` gives the same case in any process and new seeds new cases.
This module names the gate's splits, reads its files and holds its procedural knobs.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from batchgate_gym.kernel.case_sources import CaseSource, FixedCases, pick_procedural, resolve_cases

from .cases import Case, case_from_dict, load_cases
from .generator.build import DEFAULT_BATCHES, DEFAULT_DEFECTS_PER_BATCH, DEFAULT_ROWS_PER_BATCH
from .generator.splits import SPLITS

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
    rows_per_batch: int | tuple[int, int] = DEFAULT_ROWS_PER_BATCH
    batches: int = DEFAULT_BATCHES
    defects_per_batch: int = DEFAULT_DEFECTS_PER_BATCH

    def __post_init__(self) -> None:
        from .generator.build import check_knobs

        for key, value in check_knobs(**{key: getattr(self, key) for key in _SCALE_KEYS}).items():
            object.__setattr__(self, key, value)

    def pick(self, rng: np.random.Generator, options: Mapping[str, Any]) -> Case:
        from .generator.build import check_knobs, check_seed

        return pick_procedural(self, self.build, rng, options, _SCALE_KEYS, check_knobs, check_seed)

    def build(self, seed: int, **knobs: Any) -> Case:
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
    return resolve_cases(
        cases,
        splits={name: functools.partial(split_cases, name) for name in SPLITS},
        load=load_cases,
        case_type=Case,
        procedural=ProceduralCases,
        **knobs,
    )


__all__ = [
    "SPLITS",
    "CaseSource",
    "FixedCases",
    "ProceduralCases",
    "build_procedural",
    "case_source",
    "split_cases",
]
