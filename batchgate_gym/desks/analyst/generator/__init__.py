"""Analyst case generator: procedural cases from a seed, and the fixed splits.

A case is a plain dict in the JSONL format of :mod:`batchgate_gym.desks.analyst.cases`;
its reference answer comes from :mod:`batchgate_gym.desks.analyst.questions.market_answers` over the
canonical Parquet copy of its dataset.
"""

from __future__ import annotations

from .build import DEFAULT_SCALE, build_case, check_knobs, check_seed
from .splits import SPLITS, build_split, split_path, write_split

__all__ = [
    "DEFAULT_SCALE",
    "SPLITS",
    "build_case",
    "build_split",
    "check_knobs",
    "check_seed",
    "split_path",
    "write_split",
]
