"""Cases: the original JSONL format, read unchanged and checked field by field.

A case is a warehouse, the batches waiting in staging and, per batch, the truth
the grader needs (defective or not, which citations count). Agents never see the
truth, the family, the seed or the variant. A broken line fails loudly with the
file, the line and the field, never with a KeyError deep inside an episode.
"""

from __future__ import annotations

import hashlib
import itertools
import operator
import os
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from batchgate_gym.kernel.case_files import check_unique, read_case_file, read_jsonl
from batchgate_gym.kernel.codec import SharedTexts
from batchgate_gym.kernel.ledger import canonical_json
from batchgate_gym.kernel.plain import FrozenDict, frozen_shared

from .contract import DEFECT_TYPES, TABLE_COLUMNS

T = TypeVar("T")
_TABLE_NAME_CHARS = re.compile(r"[^a-z0-9_]")
_KEY_SETS = {table: frozenset(columns) for table, columns in TABLE_COLUMNS.items()}
_CELL_GETTERS = {table: operator.itemgetter(*columns) for table, columns in TABLE_COLUMNS.items()}


class CaseFormatError(ValueError):
    """A case does not follow the format; the message names where and what."""


@dataclass(frozen=True, slots=True)
class Citation:
    column: str
    defect_type: str


@dataclass(frozen=True, slots=True)
class BatchTruth:
    defective: bool
    defects: tuple[Citation, ...]
    accepted: tuple[Citation, ...] | None = None

    @property
    def citations(self) -> frozenset[Citation]:
        """Every citation that counts as evidence for this batch."""
        return frozenset(self.accepted if self.accepted is not None else self.defects)


@dataclass(frozen=True, slots=True)
class StagingBatch:
    batch_id: str
    table: str
    source: str
    rows: tuple[tuple[str, ...], ...]  # cells in TABLE_COLUMNS[table] order
    truth: BatchTruth
    staging_table: str

    @property
    def columns(self) -> tuple[str, ...]:
        return TABLE_COLUMNS[self.table]


@dataclass(frozen=True, eq=False)
class Case:
    """One episode's world. Data derived from it is cached by :meth:`derived`."""

    case_id: str
    family: str
    variant: int
    seed: int
    prompt: str
    contract: Mapping[str, Any]
    customers: tuple[tuple[str, ...], ...]
    orders: tuple[tuple[str, ...], ...]
    batches: tuple[StagingBatch, ...]
    _cache: dict[Hashable, Any] = field(default_factory=dict, repr=False, compare=False)
    # Every cell of every row, and every batch's id, table, source, staging table and
    # citations, is printable ASCII with no quote or backslash, as the generator writes
    # them (its audit in the tests holds it to that): the digest then writes their JSON
    # without looking for characters to escape.
    plain_cells: bool = field(default=False, repr=False, compare=False)

    def derived(self, key: Hashable, make: Callable[[], T]) -> T:
        """The value derived from this case under ``key``: ``make()`` on first use, then
        the same object for the case's life (cases are immutable, so it never goes stale).

        The one way into the case's cache: each module that derives data (the prepared
        database, a task text) names it by its own key.
        """
        try:
            cached: T = self._cache[key]  # what make() built under this key
            return cached
        except KeyError:
            value = self._cache[key] = make()
            return value

    def batch(self, batch_id: str) -> StagingBatch | None:
        return self.batch_index.get(batch_id)

    @property
    def batch_index(self) -> dict[str, StagingBatch]:
        return self.derived("batch_index", lambda: {b.batch_id: b for b in self.batches})

    @property
    def n_defective(self) -> int:
        return sum(batch.truth.defective for batch in self.batches)

    @property
    def digest(self) -> str:
        """SHA-256 of everything the case holds: what a log names to bind itself to this case."""
        return self.derived("digest", lambda: _digest(self))


def _digest(case: Case) -> str:
    # The canonical JSON of [case_id, family, variant, seed, prompt, contract, customers,
    # orders, batches], written in parts: the contract, read-only and shared by the cases
    # of a file or a generator, is encoded once, and rows of plain cells are written by
    # joins (:func:`_rows_json`), the same text at a fraction of the encoder's cost.
    plain = case.plain_cells
    head = canonical_json([case.case_id, case.family, case.variant, case.seed, case.prompt])
    batches = ",".join([_batch_json(batch, plain) for batch in case.batches])
    text = (
        f"{head[:-1]},{_contract_text(case.contract)},"
        f"{_rows_json(case.customers, plain)},{_rows_json(case.orders, plain)},[{batches}]]"
    )
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _batch_json(batch: StagingBatch, plain: bool) -> str:
    """A batch's canonical JSON in the digest: [batch_id, table, source, staging_table,
    rows, defective, defects, accepted]; its names and citations written by joins too
    when ``plain`` says they are plain (a generated case's are)."""
    truth = batch.truth
    rows = _rows_json(batch.rows, plain)
    if plain:
        names = '"' + '","'.join((batch.batch_id, batch.table, batch.source, batch.staging_table)) + '"'
        accepted = "null" if truth.accepted is None else _plain_citations(truth.accepted)
        defective = "true" if truth.defective else "false"
        return f"[{names},{rows},{defective},{_plain_citations(truth.defects)},{accepted}]"
    names = canonical_json([batch.batch_id, batch.table, batch.source, batch.staging_table])
    facts = canonical_json([truth.defective, _citation_lists(truth.defects), _citation_lists(truth.accepted)])
    return f"{names[:-1]},{rows},{facts[1:]}"


def _plain_citations(items: tuple[Citation, ...]) -> str:
    return "[" + ",".join([f'["{c.column}","{c.defect_type}"]' for c in items]) + "]"


def _citation_lists(items: tuple[Citation, ...] | None) -> list[list[str]] | None:
    return None if items is None else [[c.column, c.defect_type] for c in items]


def _rows_json(rows: tuple[tuple[str, ...], ...], plain: bool) -> str:
    """``canonical_json(rows)``, written by joins when every cell is plain.

    A plain cell (printable ASCII, no quote, no backslash) is written by the JSON encoder
    as itself between quotes, so the rows' text is their cells joined with quotes, commas
    and brackets. Unless ``plain`` says so already, the joined text shows whether every
    cell was: ASCII and printable throughout, no backslash, and no quote but the two
    around each cell. Any other rows go through the encoder.
    """
    if not rows:
        return "[]"
    text = '[["' + '"],["'.join(map('","'.join, rows)) + '"]]'
    if plain or (
        text.isascii()
        and "\\" not in text
        and text.count('"') == 2 * sum(map(len, rows))
        and text.isprintable()
    ):
        return text
    return canonical_json(rows)


# The canonical JSON of a case's contract, made once per read-only contract object.
_contract_text = SharedTexts(canonical_json, 64)


def staging_table_name(batch_id: str) -> str:
    lowered = batch_id.lower()
    # Most ids hold only letters, digits, hyphens and underscores: the hyphens are all the
    # pattern would replace, and replacing them costs a tenth of the pattern's pass.
    plain = lowered.replace("-", "_")
    if plain.isascii() and plain.replace("_", "").isalnum():
        return "stg_" + plain
    return "stg_" + _TABLE_NAME_CHARS.sub("_", lowered)


def load_cases(source: str | os.PathLike[str] | Iterable[Mapping[str, Any]]) -> list[Case]:
    """Read cases from a JSONL path or from already-parsed dicts."""
    if isinstance(source, (str, os.PathLike)):
        return _load_file(Path(source))
    return [case_from_dict(item, f"<case {position}>") for position, item in enumerate(source)]


def _load_file(path: Path) -> list[Case]:
    return read_case_file(path, "gate", _read_file)


def _read_file(path: Path, text: str) -> list[Case]:
    cases = read_jsonl(path, case_from_dict, CaseFormatError, text)
    _check_unique([case.case_id for case in cases], str(path), "case_id")
    return cases


def case_from_dict(data: Any, where: str) -> Case:
    """Validate one parsed case; ``where`` prefixes every error message."""
    obj = _expect(data, dict, where, "case")
    warehouse = _expect(_field(obj, "warehouse", where), dict, where, "warehouse")
    batches = _expect(_field(obj, "batches", where), list, where, "batches")
    if not batches:
        raise CaseFormatError(f"{where}: field 'batches': a case needs at least one batch")
    parsed = tuple(_batch(item, where, f"batches[{i}]") for i, item in enumerate(batches))
    _check_unique([b.batch_id for b in parsed], where, "batches[].batch_id")
    _check_unique([b.staging_table for b in parsed], where, "batches[].batch_id (staging table name)")
    return Case(
        case_id=_expect(_field(obj, "case_id", where), str, where, "case_id"),
        family=_expect(obj.get("family", "custom"), str, where, "family"),
        variant=_expect_int(obj.get("variant", 0), where, "variant"),
        seed=_expect_int(obj.get("seed", 0), where, "seed"),
        prompt=_expect(_field(obj, "prompt", where), str, where, "prompt"),
        contract=frozen_shared(_expect(_field(obj, "contract", where), dict, where, "contract")),
        customers=_rows(
            _field(warehouse, "customers", where, "warehouse."), "customers", where, "warehouse.customers"
        ),
        orders=_rows(_field(warehouse, "orders", where, "warehouse."), "orders", where, "warehouse.orders"),
        batches=parsed,
    )


def case_from_generated(data: Mapping[str, Any]) -> Case:
    """The case the generator's own output is, read without :func:`case_from_dict`'s checks.

    A procedural case comes from trusted code, on every reset: its dict is well formed by
    construction, so it is only made typed here. The generator is held to that by an audit
    in the tests over thousands of seeds of every family, variant and scale: the case
    this gives equals, field for field and digest for digest, what :func:`case_from_dict`
    gives after checking the same dict, and every batch's truth is what the contract finds
    in its rows. Anything read from outside (a file, a caller's dicts) goes through
    :func:`case_from_dict`.
    """
    warehouse = data["warehouse"]
    case = object.__new__(Case)
    # The fields set at once in the new case's __dict__, in their declared order: what the
    # dataclass's __init__ does one object.__setattr__ at a time (a frozen dataclass refuses
    # plain assignment); Case has no __post_init__.
    case.__dict__.update(
        case_id=data["case_id"],
        family=data["family"],
        variant=data["variant"],
        seed=data["seed"],
        prompt=data["prompt"],
        contract=_frozen_contract(data["contract"]),
        customers=tuple(map(_CELL_GETTERS["customers"], warehouse["customers"])),
        orders=tuple(map(_CELL_GETTERS["orders"], warehouse["orders"])),
        batches=tuple(map(_generated_batch, data["batches"])),
        _cache={},
        plain_cells=True,
    )
    return case


def _frozen_contract(contract: Any) -> Mapping[str, Any]:
    """A generated case's contract, read-only: as it is if the generator shared a frozen one."""
    return contract if type(contract) is FrozenDict else frozen_shared(contract)


def _generated_batch(data: Mapping[str, Any]) -> StagingBatch:
    truth = data["truth"]
    accepted = truth.get("accepted")
    batch_id = data["batch_id"]
    return StagingBatch(
        batch_id,
        data["table"],
        data["source"],
        tuple(map(_CELL_GETTERS[data["table"]], data["rows"])),
        BatchTruth(
            truth["defective"],
            _generated_citations(truth["defects"]),
            None if accepted is None else _generated_citations(accepted),
        ),
        staging_table_name(batch_id),
    )


def _generated_citations(items: list[Mapping[str, str]]) -> tuple[Citation, ...]:
    return tuple(Citation(item["column"], item["type"]) for item in items)


def _batch(data: Any, where: str, path: str) -> StagingBatch:
    obj = _expect(data, dict, where, path)
    batch_id = _expect(_field(obj, "batch_id", where, path + "."), str, where, f"{path}.batch_id")
    if not batch_id:
        raise CaseFormatError(f"{where}: field '{path}.batch_id': must not be empty")
    table = _field(obj, "table", where, path + ".")
    if table not in TABLE_COLUMNS:
        raise CaseFormatError(
            f"{where}: field '{path}.table': {table!r} is not one of {sorted(TABLE_COLUMNS)}"
        )
    rows = _rows(_field(obj, "rows", where, path + "."), table, where, f"{path}.rows")
    truth = _truth(_field(obj, "truth", where, path + "."), table, where, f"{path}.truth")
    source = _expect(obj.get("source", ""), str, where, f"{path}.source")
    return StagingBatch(batch_id, table, source, rows, truth, staging_table_name(batch_id))


def _truth(data: Any, table: str, where: str, path: str) -> BatchTruth:
    obj = _expect(data, dict, where, path)
    defective = _expect(_field(obj, "defective", where, path + "."), bool, where, f"{path}.defective")
    defects = _citations(_field(obj, "defects", where, path + "."), table, where, f"{path}.defects")
    accepted = None
    if "accepted" in obj:
        accepted = _citations(obj["accepted"], table, where, f"{path}.accepted")
    if defective and not (accepted if accepted is not None else defects):
        raise CaseFormatError(f"{where}: field '{path}': a defective batch needs at least one defect")
    return BatchTruth(defective, defects, accepted)


def _citations(data: Any, table: str, where: str, path: str) -> tuple[Citation, ...]:
    items = _expect(data, list, where, path)
    out = []
    for i, item in enumerate(items):
        obj = _expect(item, dict, where, f"{path}[{i}]")
        column = _field(obj, "column", where, f"{path}[{i}].")
        kind = _field(obj, "type", where, f"{path}[{i}].")
        if column not in TABLE_COLUMNS[table]:
            raise CaseFormatError(f"{where}: field '{path}[{i}].column': {column!r} is not a {table} column")
        if kind not in DEFECT_TYPES:
            raise CaseFormatError(f"{where}: field '{path}[{i}].type': {kind!r} is not a defect type")
        out.append(Citation(column, kind))
    return tuple(out)


def _rows(data: Any, table: str, where: str, path: str) -> tuple[tuple[str, ...], ...]:
    # Procedural cases and big batches pass through here: rows that are all plainly right
    # are checked in a few passes that run in C (keys, then every cell's type); any other
    # list is walked row by row, and only a wrong row is examined closely.
    items = _expect(data, list, where, path)
    plain = _plain_rows(items, table)
    if plain is not None:
        return plain
    columns = TABLE_COLUMNS[table]
    expected_keys = _KEY_SETS[table]
    cells_of = _CELL_GETTERS[table]
    out = []
    for i, row in enumerate(items):
        if type(row) is dict and row.keys() == expected_keys:
            cells = cells_of(row)
            if all(type(cell) is str for cell in cells):
                out.append(cells)
                continue
        out.append(_checked_row(row, columns, where, f"{path}[{i}]"))
    return tuple(out)


def _plain_rows(items: list[Any], table: str) -> tuple[tuple[str, ...], ...] | None:
    """The rows' cells if every row is a dict of exactly the table's columns holding
    strings, else None.

    Each row has as many keys as the table has columns and every column is found in it
    (so its keys are the columns), and joining every cell as text raises for any cell
    that is not a string: passes in C, cheaper than comparing each row's keys with the
    columns as sets when the keys are not the same string objects (a JSON line's).
    """
    if set(map(type, items)) - _DICT_ONLY or set(map(len, items)) - _WIDTHS[table]:
        return None
    try:
        rows = tuple(map(_CELL_GETTERS[table], items))
        "".join(itertools.chain.from_iterable(rows))
    except (KeyError, TypeError):
        return None
    return rows


_DICT_ONLY = frozenset({dict})
_WIDTHS = {table: frozenset({len(columns)}) for table, columns in TABLE_COLUMNS.items()}


def _checked_row(row: Any, columns: tuple[str, ...], where: str, path: str) -> tuple[str, ...]:
    """The slow path: the same row, checked field by field to say what is wrong."""
    obj = _expect(row, dict, where, path)
    if len(obj) != len(columns) or any(column not in obj for column in columns):
        missing = [c for c in columns if c not in obj]
        extra = [c for c in obj if c not in columns]
        raise CaseFormatError(f"{where}: field '{path}': missing {missing}, unexpected {extra}")
    cells = tuple(obj[column] for column in columns)
    for column, cell in zip(columns, cells, strict=True):
        if not isinstance(cell, str):
            raise CaseFormatError(
                f"{where}: field '{path}.{column}': expected a string, got {type(cell).__name__}"
            )
    return cells


def _field(obj: Mapping[str, Any], key: str, where: str, prefix: str = "") -> Any:
    if key not in obj:
        raise CaseFormatError(f"{where}: field '{prefix}{key}': missing")
    return obj[key]


def _expect(value: Any, kind: type, where: str, path: str) -> Any:
    if not isinstance(value, kind):
        raise CaseFormatError(
            f"{where}: field '{path}': expected {kind.__name__}, got {type(value).__name__}"
        )
    return value


def _expect_int(value: Any, where: str, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CaseFormatError(f"{where}: field '{path}': expected int, got {type(value).__name__}")
    return value


def _check_unique(values: list[str], where: str, path: str) -> None:
    check_unique(values, where, path, CaseFormatError)
