"""Refund case generator: the eight families, procedural cases at any scale, the fixed splits.

Core code, standard library only: imports neither Gymnasium nor the environments or
policies. A case is a plain dict in the JSONL format of
:mod:`batchgate_gym.desks.refund.cases`; what it expects is derived from its order and
ledger by one rule, which :func:`audit_case` re-derives from the data alone.
"""

from __future__ import annotations

from .audit import audit_case, derive_expect
from .build import build_case, check_knobs
from .families import FAMILIES, variants
from .splits import SPLITS, build_split, split_path, write_split

__all__ = [
    "FAMILIES",
    "SPLITS",
    "audit_case",
    "build_case",
    "build_split",
    "check_knobs",
    "derive_expect",
    "split_path",
    "variants",
    "write_split",
]
