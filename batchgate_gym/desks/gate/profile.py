"""Column profiles of a staged batch, as ``profile_batch`` reports them.

A profile is what a quick look at a file shows: blanks, distinct counts, the
smallest and largest value as text and as a number, the commonest values. It is
computed from the staged rows, which never change during an episode.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any, cast

TOP_VALUES = 8


def profile_rows(columns: Sequence[str], rows: Sequence[Sequence[str | None]]) -> dict[str, dict[str, Any]]:
    return {name: profile_column([row[i] for row in rows]) for i, name in enumerate(columns)}


def profile_column(values: list[str | None]) -> dict[str, Any]:
    with_null = Counter(values)
    n_null = with_null.pop(None, 0)
    counts = cast("Counter[str]", with_null)  # None popped: every key left is a string
    # Every figure below depends only on the distinct values (and their counts), so
    # each value is parsed once however often it repeats: big batches stay cheap.
    distinct = list(counts)
    numbers = [n for n in map(_number, distinct) if n is not None]
    top = heapq.nsmallest(TOP_VALUES, counts.items(), key=lambda item: (-item[1], item[0]))
    return {
        "n_null": n_null,
        "n_blank": sum(count for value, count in counts.items() if not value.strip()),
        "n_distinct": len(counts),
        "min": min(distinct) if distinct else None,
        "max": max(distinct) if distinct else None,
        "numeric_min": min(numbers) if numbers else None,
        "numeric_max": max(numbers) if numbers else None,
        "top_values": [[value, count] for value, count in top],
    }


def _number(text: str) -> float | None:
    """The value as a finite float after stripping, or None."""
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None
