"""Where a refund environment's cases come from: case files, parsed dicts or cases.

The drawing itself is the kernel's (:mod:`batchgate_gym.kernel.case_sources`): a
fixed list of cases is drawn from uniformly with the environment's seeded
generator, unless the reset's options name one by ``case_id`` or ``case_index``.
The desk has no named splits and no procedural cases yet, so ``cases`` must be given.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, NoReturn

from batchgate_gym.kernel.case_sources import CaseSource, FixedCases, resolve_cases

from .cases import RefundCase, load_cases


def _no_procedural(**knobs: Any) -> NoReturn:
    raise ValueError(
        "the refund desk has no procedural cases: pass cases= (a JSONL path, case dicts or RefundCase objects)"
    )


def case_source(cases: str | os.PathLike[str] | Iterable[Any] | CaseSource | None) -> CaseSource:
    """Resolve the ``cases`` argument of an environment: a JSONL path, a list of case
    dicts or :class:`~.cases.RefundCase` objects, or a source already (anything with
    ``pick``). ``None`` raises ``ValueError``: there are no procedural cases."""
    return resolve_cases(cases, splits={}, load=load_cases, case_type=RefundCase, procedural=_no_procedural)


__all__ = ["CaseSource", "FixedCases", "case_source"]
