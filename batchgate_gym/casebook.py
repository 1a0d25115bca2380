"""Where an environment's cases come from, and how a reset picks one.

A fixed list of cases (a JSONL file, parsed dicts, or a named split) is drawn from
uniformly with the environment's seeded generator unless the reset names a case;
a procedural source builds a fresh case from a seed drawn the same way.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import numpy as np

from .cases import Case, load_cases


class CaseSource(Protocol):
    def pick(self, rng: np.random.Generator, options: Mapping[str, Any]) -> Case: ...


class FixedCases:
    """A fixed, ordered list of cases."""

    def __init__(self, cases: list[Case]) -> None:
        if not cases:
            raise ValueError("no cases given")
        self.cases = cases
        self._by_id = {case.case_id: index for index, case in enumerate(cases)}

    def __len__(self) -> int:
        return len(self.cases)

    def pick(self, rng: np.random.Generator, options: Mapping[str, Any]) -> Case:
        if "case_id" in options:
            index = self._by_id.get(options["case_id"])
            if index is None:
                raise ValueError(f"no case with case_id {options['case_id']!r}")
        elif "case_index" in options:
            index = int(options["case_index"])
            if not 0 <= index < len(self.cases):
                raise ValueError(f"case_index {index} is outside 0..{len(self.cases) - 1}")
        else:
            index = int(rng.integers(len(self.cases)))
        return self.cases[index]


def case_source(cases: str | os.PathLike[str] | Iterable[Any] | CaseSource | None) -> CaseSource:
    """Resolve the ``cases`` argument of an environment."""
    if cases is None:
        raise ValueError("give cases: a JSONL path, a list of cases or a split name")
    if hasattr(cases, "pick"):
        return cases  # type: ignore[return-value]
    if isinstance(cases, (str, os.PathLike)):
        return FixedCases(load_cases(cases))
    items = list(cases)
    if all(isinstance(item, Case) for item in items):
        return FixedCases(items)
    return FixedCases(load_cases(items))
