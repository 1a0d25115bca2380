"""Where a gate environment's cases come from: its splits, its files, its procedural cases.

The drawing itself is the kernel's (:mod:`batchgate_gym.kernel.case_sources`): a
fixed list of cases (a JSONL file, parsed dicts, or a named split) is drawn from
uniformly with the environment's seeded generator unless the reset names a case;
a procedural source builds a fresh case from a seed drawn the same way, so
``reset(seed=s)`` gives the same case in any process and new seeds new cases.
This module names the gate's splits, reads its files and holds its procedural knobs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from batchgate_gym.kernel.case_sources import (
    CaseSource,
    DeskCases,
    FixedCases,
    ProceduralCaseSource,
)

from .cases import Case, case_from_generated, load_cases
from .generator import build_case
from .generator.build import (
    DEFAULT_BATCHES,
    DEFAULT_DEFECTS_PER_BATCH,
    DEFAULT_ROWS_PER_BATCH,
    check_knobs,
    check_seed,
)
from .generator.splits import SPLITS, split_path


@dataclass(frozen=True)
class ProceduralCases(ProceduralCaseSource, check_knobs=check_knobs, check_seed=check_seed):
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

    def build(self, seed: int, **knobs: Any) -> Case:
        return build_procedural(seed, **knobs)


def build_procedural(seed: int, **knobs: Any) -> Case:
    """The procedural case of ``seed`` and ``knobs``: the generator's output, trusted (its
    audit is in the tests), made typed without the checks a case file's lines get."""
    return case_from_generated(build_case(seed, **knobs, read_only_contract=True))


CASES = DeskCases(SPLITS, split_path, load_cases, Case, ProceduralCases)
split_cases = CASES.split  # a named split, read once per process and shared by every environment
case_source = CASES.source  # an environment's ``cases=``: None (procedural), a split, a file, a list


__all__ = [
    "CASES",
    "SPLITS",
    "CaseSource",
    "FixedCases",
    "ProceduralCases",
    "build_procedural",
    "case_source",
    "split_cases",
]
