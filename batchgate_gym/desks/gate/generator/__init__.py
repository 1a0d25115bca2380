"""Case generator: the eight families, procedural cases at any scale, the fixed splits.

Core code: imports neither Gymnasium nor the environments or policies. A case is
a plain dict in the original JSONL format (see ``batchgate_gym.desks.gate.cases``); every
planted defect breaks exactly the rules its truth records, which ``audit_case``
re-derives from the rows alone.
"""

from __future__ import annotations

from .audit import audit_case
from .build import build_case
from .families import FAMILIES, variants
from .splits import build_split, dumps_case, split_path, write_split

__all__ = [
    "FAMILIES",
    "audit_case",
    "build_case",
    "build_split",
    "dumps_case",
    "split_path",
    "variants",
    "write_split",
]
