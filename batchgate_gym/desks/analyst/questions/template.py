"""What a question template is: its text, answer type, tolerance, the tables it needs and its draw.

Kept apart from the templates themselves so the marketplace's (:mod:`.market_questions`)
and TPC-H's (:mod:`.tpch_questions`) share one definition.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

COUNT, MONEY, RATIO, MEAN = 0.0, 0.01, 0.0001, 0.001

Draw = Callable[[np.random.Generator, Mapping[str, pl.DataFrame]], dict[str, Any]]


@dataclass(frozen=True)
class Template:
    """One kind of question: its text, answer type, tolerance and the tables it needs."""

    id: str
    level: int
    answer: str
    text: str
    depends: tuple[str, ...] = ()
    tolerance: float = COUNT
    metrics: Mapping[str, float] = field(default_factory=dict)  # report: metric id -> tolerance
    draw: Draw = lambda rng, tables: {}

    @property
    def answerable(self) -> bool:
        return self.answer != "decline"

    def question(self, params: Mapping[str, Any]) -> str:
        return self.text.format(**params)


__all__ = ["COUNT", "MEAN", "MONEY", "RATIO", "Draw", "Template"]
