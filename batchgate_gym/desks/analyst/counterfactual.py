"""Counterfactual copies of a case's dataset: the evidence must compute the answer, not show it.

A copy keeps everything the question is a function of (the schema, the question and
its parameters, the scale, a snapshot's date and declared change) and draws the
values anew from the case's own generator, with a seed derived from the case's
dataset (the questions over one dataset share its copies): the marketplace from that seed; TPC-H, whose generator takes no seed, as its own rows
with every non-key column shuffled by it. At level 4 the catalog
(``products``, ``sellers``, in the second store) is the case's own in every copy and only the
orders' side is drawn anew: an analyst carries the catalog's ids from one engine into the
other by hand, and those ids must still name the same products and sellers.

Each copy has its own reference answer (:mod:`.questions.market_answers` over the copy's
tables). The grader re-runs the cited queries on every copy and credits the
evidence only if each copy's results show that copy's reference: a constant, a
count shifted to the answer, or a query that ignores the data shows the case's
answer on the case's data and the wrong one on a copy.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import polars as pl

from batchgate_gym.kernel.ledger import canonical_json

from .cases import AnalystCase
from .datasets.canonical import canonical_tables
from .datasets.market import DataSpec
from .engines.base import Store
from .engines.stores import open_store
from .questions.market_answers import expected_answer
from .questions.market_questions import CATALOG

COPIES = 2  # counterfactual copies per case: each an independent draw


@dataclass(frozen=True)
class Copy:
    """One counterfactual dataset of a case: the data each store serves, and its reference answer."""

    data: Mapping[str, DataSpec]  # store name -> the dataset it serves in this copy
    expected: Any


def copy_seed(case: AnalystCase, index: int) -> int:
    """The seed of a case's ``index``-th copy: a function of the case's dataset and ``index``.

    Not of the question: the questions asked over one dataset share its copies, so a split
    of many questions over a few datasets builds a few copies (each its own files and stores).
    """
    named = canonical_json([case.data.key(), index])
    return int.from_bytes(hashlib.sha256(named.encode("ascii")).digest()[:8], "big") & (2**63 - 1)


def copy_spec(spec: DataSpec, seed: int) -> DataSpec:
    """``spec`` drawn anew from ``seed``: the same scale, snapshot and change; TPC-H shuffled."""
    if spec.tpch is not None:
        return dataclasses.replace(spec, shuffle=seed)
    return dataclasses.replace(spec, seed=seed)


def _copy(case: AnalystCase, index: int) -> Copy:
    drawn = copy_spec(case.data, copy_seed(case, index))
    cross = len(case.stores) > 1  # level 4: the catalog (in the second store) stays the case's own
    data = {store: case.data if cross and store == case.stores[-1] else drawn for store in case.stores}
    tables: dict[str, pl.DataFrame] = dict(canonical_tables(drawn))
    if cross:
        original = canonical_tables(case.data)
        tables.update({name: original[name] for name in CATALOG})
    return Copy(data, expected_answer(case.family, tables, case.params))


_COPIES: dict[str, tuple[Copy, ...]] = {}
_KEPT = 512


def copies(case: AnalystCase) -> tuple[Copy, ...]:
    """The case's :data:`COPIES` counterfactual copies (built once per process, the latest few hundred kept)."""
    found = _COPIES.get(case.digest)
    if found is None:
        found = tuple(_copy(case, index) for index in range(COPIES))
        if len(_COPIES) >= _KEPT:
            _COPIES.pop(next(iter(_COPIES)))
        _COPIES[case.digest] = found
    return found


@contextmanager
def stores_of(copy: Copy, visible: Mapping[str, tuple[str, ...]]) -> Iterator[Any]:
    """``store(name)`` over the copy's data (each store opened on first use), all closed on exit."""
    opened: dict[str, Store] = {}

    def store(name: str) -> Store:
        if name not in opened:
            opened[name] = open_store(name, copy.data[name], visible[name])
        return opened[name]

    try:
        yield store
    finally:
        for each in opened.values():
            each.close()


__all__ = ["COPIES", "Copy", "copies", "copy_seed", "copy_spec", "stores_of"]
