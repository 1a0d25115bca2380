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

from dataclasses import dataclass
from typing import Any

from batchgate_gym.kernel.case_sources import DeskCases, ProceduralCaseSource, procedural_case

from .cases import CAP_CENTS, RefundCase, case_from_generated, load_cases
from .generator import build_case
from .generator.build import (
    DEFAULT_FAULT_RATE,
    DEFAULT_LAG_DEPTH,
    DEFAULT_LINES,
    DEFAULT_PRIOR_ROWS,
    check_knobs,
    check_seed,
)
from .generator.splits import SPLITS, split_path


@dataclass(frozen=True)
class ProceduralRefundCases(ProceduralCaseSource, check_knobs=check_knobs, check_seed=check_seed):
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
        super().__post_init__()
        # The knobs, checked and normalised now, never change: their dict is made once
        # (making it field by field was a sixtieth of a fresh reset).
        object.__setattr__(self, "_knobs", super().knobs())

    def knobs(self) -> dict[str, Any]:
        """The source's knobs by name, in the order its fields are declared (a fresh dict)."""
        kept = self.__dict__.get("_knobs")  # None while the base checks them
        return super().knobs() if kept is None else dict(kept)

    def build(self, seed: int, **knobs: Any) -> RefundCase:
        return build_procedural(seed, **knobs)


def build_procedural(seed: int, **knobs: Any) -> RefundCase:
    """The procedural case of ``seed`` and ``knobs`` as a :class:`RefundCase`: the generator's
    own output, not checked again on every reset (the tests audit the generator instead)."""
    return procedural_case(case_from_generated, build_case(seed, **knobs), seed)


CASES = DeskCases(SPLITS, split_path, load_cases, RefundCase, ProceduralRefundCases)
split_cases = CASES.split  # a named split, read once per process and shared by every environment
case_source = CASES.source  # an environment's ``cases=``: None (procedural), a split, a file, a list


__all__ = [
    "CASES",
    "SPLITS",
    "ProceduralRefundCases",
    "build_procedural",
    "case_source",
    "split_cases",
]
