"""The audit that lets a procedural reset trust the generator's own output.

A reset reads the generator's case with ``case_from_generated``, without the checks a
case file's line gets (``case_from_dict``). That is sound only while the generator
never writes what the checks would refuse or read differently, so this audit runs the
reset's own path over thousands of seeds of every family, variant and scale: each
case is well formed, its truth is what the contract finds in its rows, and the case
the reset gets equals, field for field and digest for digest, what the checked path
gives for the same dict and for its JSON line as a file holds it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from typing import Any

import pytest

from batchgate_gym.desks.gate.cases import Case, case_from_dict, case_from_generated
from batchgate_gym.desks.gate.generator import FAMILIES, build_case, dumps_case, variants
from batchgate_gym.desks.gate.sources import build_procedural
from batchgate_gym.kernel.ledger import canonical_json

from .test_generator import assert_truth_matches_audit, assert_well_formed

FIELDS = ("case_id", "family", "variant", "seed", "prompt", "contract", "customers", "orders", "batches")


def typed(case: Case) -> tuple[Any, ...]:
    """Everything a case holds, with the type of every value, so that ``1`` and ``True``
    or a list and a tuple are told apart; mappings in their key order, which the agent
    sees (the contract's text)."""
    return tuple((name, _typed(getattr(case, name))) for name in FIELDS)


def _typed(value: Any) -> Any:
    if _is_rows(value):  # compared whole, with the set of their types (most of a case)
        return (value, frozenset(map(type, value)), frozenset(map(type, itertools.chain(*value))))
    if isinstance(value, dict):
        return (type(value), tuple((key, _typed(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(_typed(item) for item in value))
    if hasattr(value, "__dataclass_fields__"):
        fields = value.__dataclass_fields__
        return (type(value), tuple(_typed(getattr(value, name)) for name in fields))
    return (type(value), value)


def _is_rows(value: Any) -> bool:
    return type(value) is tuple and len(value) > 0 and type(value[0]) is tuple and type(value[0][0]) is str


def reference_digest(case: Case) -> str:
    """A case's digest by its definition: SHA-256 of the canonical JSON of everything it
    holds, encoded whole (the case's own digest writes parts of it by joins)."""

    def citations(items: Any) -> Any:
        return None if items is None else [[c.column, c.defect_type] for c in items]

    batches = [
        [
            b.batch_id,
            b.table,
            b.source,
            b.staging_table,
            b.rows,
            b.truth.defective,
            citations(b.truth.defects),
            citations(b.truth.accepted),
        ]
        for b in case.batches
    ]
    fields = [case.case_id, case.family, case.variant, case.seed, case.prompt, dict(case.contract)]
    text = canonical_json([*fields, case.customers, case.orders, batches])
    return hashlib.sha256(text.encode("ascii")).hexdigest()


# What a trusted case's digest takes on trust: every cell printable ASCII, no quote or backslash.
PLAIN_CELL = re.compile(r"[ !#-\[\]-~]*")


def assert_trusted_equals_checked(seed: int, **knobs: Any) -> None:
    data = build_case(seed, **knobs)
    assert_well_formed(data)
    assert_truth_matches_audit(data)
    trusted = build_procedural(seed, **knobs)  # what a reset builds
    checked = case_from_dict(data, "dict")
    assert typed(trusted) == typed(checked), (seed, knobs)
    assert trusted.digest == checked.digest
    assert trusted.plain_cells and not checked.plain_cells
    cells = itertools.chain.from_iterable(
        (trusted.customers, trusted.orders, *(b.rows for b in trusted.batches))
    )
    assert all(PLAIN_CELL.fullmatch(cell) for cell in itertools.chain.from_iterable(cells)), (seed, knobs)
    for batch in trusted.batches:
        citations = (*batch.truth.defects, *(batch.truth.accepted or ()))
        names = (batch.batch_id, batch.table, batch.source, batch.staging_table)
        names += tuple(itertools.chain.from_iterable((c.column, c.defect_type) for c in citations))
        assert all(PLAIN_CELL.fullmatch(name) for name in names), (seed, knobs)
    assert trusted.digest == reference_digest(trusted)
    from_file = case_from_dict(json.loads(dumps_case(data)), "line")
    assert typed(trusted) == typed(from_file), (seed, knobs)  # key order too: the agent reads it
    assert trusted.digest == from_file.digest


# Two batches: each family and variant, drawn and named, 2,450 cases in all.
TWO_BATCH = [
    *((seed, {}) for seed in range(-200, 800)),
    *((seed, {"family": family}) for family in FAMILIES for seed in range(40)),
    *(
        (seed, {"family": family, "variant": variant})
        for family in FAMILIES
        for variant in range(variants(family))
        for seed in range(30)
    ),
]
# Many batches, many defects, short and long batches: 900 cases.
SCALED = [
    (
        seed,
        {
            "family": (None, *FAMILIES)[seed % (len(FAMILIES) + 1)],
            "batches": 3 + seed % 10,
            "defects_per_batch": 1 + seed % 9,
            "rows_per_batch": ((1, 3), (3, 20), (20, 60), 7)[seed % 4],
        },
    )
    for seed in range(900)
]


@pytest.mark.parametrize("chunk", range(4))
def test_trusted_generated_cases_equal_the_checked_path(chunk: int) -> None:
    for seed, knobs in itertools.islice(TWO_BATCH + SCALED, chunk, None, 4):
        assert_trusted_equals_checked(seed, **knobs)


def test_the_audit_sees_a_trusted_reader_that_drops_anything() -> None:
    """A reader that loses one field (the accepted citations) is caught by the comparison."""
    data = build_case(3, family="blank-amount", variant=0)  # a batch whose accepted differ
    assert any("accepted" in batch["truth"] for batch in data["batches"])
    trusted = case_from_generated(data)
    batches = [
        {**b, "truth": {k: v for k, v in b["truth"].items() if k != "accepted"}} for b in data["batches"]
    ]
    dropped = case_from_generated({**data, "batches": batches})
    checked = case_from_dict(data, "dict")
    assert typed(trusted) == typed(checked)
    assert typed(dropped) != typed(checked)
    assert dropped.digest != checked.digest
