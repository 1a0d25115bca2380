"""A marketplace dataset is the same however it is reached: its ids and dates as written
out in full, and its canonical tables fresh from the generator or read back from the cache.

The generator takes each id from a per-process table of padded numbers and the oracle
keeps the tables it has just written instead of reading them back; these tests hold both
shortcuts to what they stand for.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchgate_gym.desks.analyst.datasets import canonical, market
from batchgate_gym.desks.analyst.datasets.market import FIRST_DAY, DataSpec


@settings(max_examples=60, deadline=None)
@given(
    prefix=st.sampled_from(["o", "c", "p", "s", "r"]),
    width=st.integers(1, 8),
    numbers=st.lists(st.integers(0, 300_000), max_size=60),
)
def test_ids_are_their_numbers_zero_padded(prefix: str, width: int, numbers: list[int]) -> None:
    ids = market._ids(prefix, np.array(numbers, dtype=np.int64), width)
    assert ids.dtype == pl.String
    assert ids.to_list() == [f"{prefix}{n:0{width}d}" for n in numbers]


def test_an_id_column_changed_in_place_changes_no_later_dataset() -> None:
    """The orders' ids are changed in place (the planted test orders): the table the ids
    are taken from must not change with them."""
    first = market._ids("o", np.arange(10), 7)
    first.scatter([0, 1], ["TEST-000", "TEST-001"])
    again = market._ids("o", np.arange(12), 7)  # numbers below the same power of two
    assert again.to_list()[:3] == ["o0000000", "o0000001", "o0000002"]


def test_days_are_offsets_from_the_first_day_and_negative_is_missing() -> None:
    offsets = np.array([0, 5, -1, 607, -30])
    days = market._days(offsets)
    assert days.dtype == pl.Date
    assert days.to_list() == [
        FIRST_DAY,
        FIRST_DAY + dt.timedelta(days=5),
        None,
        FIRST_DAY + dt.timedelta(days=607),
        None,
    ]


@pytest.mark.parametrize("spec", [DataSpec(11, 300), DataSpec(12, 1000)])
def test_fresh_canonical_tables_are_what_the_cache_reads_back(
    spec: DataSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BATCHGATE_ANALYST_CACHE", str(tmp_path))
    canonical._canonical.cache_clear()
    fresh = canonical.canonical_tables(spec)  # generated here, written to the cache, kept
    canonical._canonical.cache_clear()
    canonical.tables_of.cache_clear()
    read = canonical.canonical_tables(spec)  # the cache's files, as another process reads them
    assert list(fresh) == list(read) == list(market.TABLES)
    for name in market.TABLES:
        assert fresh[name].schema == read[name].schema, name
        assert fresh[name].equals(read[name]), name
    assert fresh["orders"].height == spec.scale
    canonical._canonical.cache_clear()
