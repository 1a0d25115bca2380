"""Where a refund environment's cases come from: its splits, its files, its procedural cases.

The drawing itself is the kernel's (:mod:`batchgate_gym.kernel.case_sources`): a
fixed list of cases (a JSONL file, parsed dicts, or a named split) is drawn from
uniformly with the environment's seeded generator unless the reset names a case
(``case_id`` or ``case_index``); a procedural source builds a fresh case from a seed
drawn the same way, so ``reset(seed=s)`` gives the same case in any process and new
seeds new cases. This module names the desk's splits, reads its files and holds its
procedural knobs.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from batchgate_gym.kernel.case_sources import CaseSource, FixedCases, pick_procedural, resolve_cases

from .cases import CAP_CENTS, RefundCase, case_from_dict, load_cases
from .generator.build import (
    DEFAULT_FAULT_RATE,
    DEFAULT_LAG_DEPTH,
    DEFAULT_LINES,
    DEFAULT_PRIOR_ROWS,
    check_knobs,
    check_seed,
)
from .generator.splits import SPLITS

_SCALE_KEYS = ("family", "variant", "lines", "prior_rows", "lag_depth", "fault_rate", "cap_cents", "tickets")


@dataclass(frozen=True)
class ProceduralRefundCases:
    """A fresh case per reset from the generator; knobs are defaults a reset may override.

    Reset options: ``family`` and ``variant`` fix what is drawn; ``lines``,
    ``prior_rows``, ``lag_depth``, ``fault_rate``, ``cap_cents`` (the refund cap
    the case carries and its amounts are planted around) and ``tickets`` (a queue of
    that many tickets over one ledger) scale it; ``case_seed`` names
    the case's seed outright instead of drawing it with the environment's generator.
    The knobs are checked when the source is made and again, merged with a reset's
    options, before each case is built (bounds: ``check_knobs`` in
    :mod:`batchgate_gym.desks.refund.generator.build`; ``case_seed`` an int in
    ``[-2**63, 2**63)``), so a bad value raises ``ValueError`` before any work is done.
    """

    family: str | None = None
    variant: int | None = None
    lines: int | None = DEFAULT_LINES
    prior_rows: int | None = DEFAULT_PRIOR_ROWS
    lag_depth: int | None = DEFAULT_LAG_DEPTH
    fault_rate: float | None = DEFAULT_FAULT_RATE
    cap_cents: int = CAP_CENTS
    tickets: int = 1

    def __post_init__(self) -> None:
        for key, value in check_knobs(**{key: getattr(self, key) for key in _SCALE_KEYS}).items():
            object.__setattr__(self, key, value)

    def pick(self, rng: np.random.Generator, options: Mapping[str, Any]) -> RefundCase:
        return pick_procedural(self, self.build, rng, options, _SCALE_KEYS, check_knobs, check_seed)

    def build(self, seed: int, **knobs: Any) -> RefundCase:
        return build_procedural(seed, **knobs)


def build_procedural(seed: int, **knobs: Any) -> RefundCase:
    """The procedural case of ``seed`` and ``knobs``, as a checked :class:`RefundCase`."""
    from .generator import build_case

    return case_from_dict(build_case(seed, **knobs), f"<procedural case {seed}>")


def split_cases(name: str) -> list[RefundCase]:
    """A named split, read once per process and shared by every environment."""
    cached = _SPLIT_CACHE.get(name)
    if cached is None:
        from .generator import split_path

        cached = _SPLIT_CACHE[name] = tuple(load_cases(split_path(name)))
    return list(cached)  # the caller's own list: the cases in it are read-only


_SPLIT_CACHE: dict[str, tuple[RefundCase, ...]] = {}


def case_source(
    cases: str | os.PathLike[str] | Iterable[Any] | CaseSource | None, **knobs: Any
) -> CaseSource:
    """Resolve the ``cases`` argument of an environment.

    ``None`` draws a fresh procedural case per reset (``knobs`` go to
    :class:`ProceduralRefundCases`); a split name (``"eval"``, ``"train"``) serves
    that fixed split; any other string or path is a JSONL file; a list holds case
    dicts or :class:`~.cases.RefundCase` objects; anything with ``pick`` is a source already.
    """
    return resolve_cases(
        cases,
        splits={name: functools.partial(split_cases, name) for name in SPLITS},
        load=load_cases,
        case_type=RefundCase,
        procedural=ProceduralRefundCases,
        **knobs,
    )


__all__ = [
    "SPLITS",
    "CaseSource",
    "FixedCases",
    "ProceduralRefundCases",
    "build_procedural",
    "case_source",
    "split_cases",
]
