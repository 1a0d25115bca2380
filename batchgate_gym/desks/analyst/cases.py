"""Analyst cases: one question over one dataset in one store (two at level 4), checked field by field.

A case names its dataset by what the rows are a function of (``data``: seed, scale,
and at level 6 the snapshot date and the declared change; at level 7 the TPC-H
scale factor alone, ``{"tpch": 0.01}``), the store(s) the agent
queries, the question with its parameters, and what the grader needs: the answer
type, the tolerance, the tables the answer depends on, whether the data can answer
it, and the reference answer (computed by :mod:`.questions.market_answers` when the case was made).
The agent sees the stores and the question only. A broken line fails with the file,
the line and the field.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batchgate_gym.kernel.case_files import check_unique, read_case_file, read_jsonl
from batchgate_gym.kernel.ledger import canonical_json
from batchgate_gym.kernel.plain import frozen

from .datasets.market import Change, DataSpec, check_scale
from .datasets.tpch import check_sf
from .engines.stores import OPTIONAL_STORES, STORES
from .questions.market_questions import BY_ID

CASE_KEYS = (
    "case_id",
    "family",
    "level",
    "stores",
    "data",
    "params",
    "question",
    "answer_type",
    "tolerance",
    "metrics",
    "depends",
    "answerable",
    "expected",
    "split",
)
ANSWER_TYPES = ("number", "ranking", "list", "table", "report", "decline")


class CaseFormatError(ValueError):
    """A case file or dict that is not a well-formed analyst case."""


@dataclass(frozen=True)
class AnalystCase:
    case_id: str
    family: str
    level: int
    stores: tuple[str, ...]
    data: DataSpec
    params: Mapping[str, Any]
    question: str
    answer_type: str
    tolerance: float
    metrics: Mapping[str, float]
    depends: tuple[str, ...]
    answerable: bool
    expected: Any
    split: str

    @property
    def store(self) -> str:
        """The store label: one name, or ``sqlite+lake`` at level 4."""
        return "+".join(self.stores)

    @property
    def digest(self) -> str:
        return hashlib.sha256(canonical_json(case_to_dict(self)).encode("ascii")).hexdigest()


def data_dict(spec: DataSpec) -> dict[str, Any]:
    if spec.tpch is not None:
        return {"tpch": spec.tpch}
    out: dict[str, Any] = {"seed": spec.seed, "scale": spec.scale}
    if spec.cutoff is not None:
        out["cutoff"] = spec.cutoff.isoformat()
    if spec.change is not None:
        out["change"] = {
            "state": spec.change.state,
            "start": spec.change.start.isoformat(),
            "days": spec.change.days,
        }
    return out


def case_to_dict(case: AnalystCase) -> dict[str, Any]:
    return {
        "case_id": case.case_id,
        "family": case.family,
        "level": case.level,
        "stores": list(case.stores),
        "data": data_dict(case.data),
        "params": dict(case.params),
        "question": case.question,
        "answer_type": case.answer_type,
        "tolerance": case.tolerance,
        "metrics": dict(case.metrics),
        "depends": list(case.depends),
        "answerable": case.answerable,
        "expected": _thaw(case.expected),
        "split": case.split,
    }


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(v) for v in value]
    return value


def dumps_case(data: Mapping[str, Any]) -> str:
    """One case as a JSONL line: keys in format order, compact, ASCII."""
    return json.dumps({key: data[key] for key in CASE_KEYS}, separators=(",", ":"), ensure_ascii=True)


class _Reader:
    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, field: str, problem: str) -> CaseFormatError:
        return CaseFormatError(f"{self.where}: field '{field}': {problem}")

    def get(self, obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], prefix: str = "") -> Any:
        if key not in obj:
            raise self.fail(prefix + key, "missing")
        value = obj[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float, (int, float))):
            raise self.fail(
                prefix + key, f"expected {getattr(kind, '__name__', kind)}, got {type(value).__name__}"
            )
        return value


def _date(read: _Reader, value: Any, field: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except (TypeError, ValueError):
        raise read.fail(field, f"not a YYYY-MM-DD date: {value!r}") from None


def _data(read: _Reader, obj: Mapping[str, Any]) -> DataSpec:
    data = read.get(obj, "data", dict)
    if "tpch" in data:
        if set(data) != {"tpch"}:
            raise read.fail("data", 'a TPC-H dataset is named by its scale factor alone: {"tpch": sf}')
        try:
            return DataSpec(0, 0, tpch=check_sf(read.get(data, "tpch", (int, float), "data.")))
        except ValueError as exc:
            raise read.fail("data.tpch", str(exc)) from None
    extra = set(data) - {"seed", "scale", "cutoff", "change"}
    if extra:
        raise read.fail("data", f"unknown keys {sorted(extra)}")
    seed = read.get(data, "seed", int, "data.")
    try:
        scale = check_scale(read.get(data, "scale", int, "data."))
    except ValueError as exc:
        raise read.fail("data.scale", str(exc)) from None
    cutoff = _date(read, data["cutoff"], "data.cutoff") if "cutoff" in data else None
    change = None
    if "change" in data:
        raw = read.get(data, "change", dict, "data.")
        state = read.get(raw, "state", str, "data.change.")
        days = read.get(raw, "days", int, "data.change.")
        change = Change(state, _date(read, raw.get("start"), "data.change.start"), days)
    return DataSpec(seed, scale, cutoff, change)


def case_from_dict(obj: Any, where: str) -> AnalystCase:
    """A checked case from a parsed JSON object; ``CaseFormatError`` names the field at fault."""
    read = _Reader(where)
    if not isinstance(obj, dict):
        raise CaseFormatError(f"{where}: a case is a JSON object")
    extra = set(obj) - set(CASE_KEYS)
    if extra:
        raise read.fail(sorted(extra)[0], "unknown key")
    family = read.get(obj, "family", str)
    if family not in BY_ID:
        raise read.fail("family", f"unknown template {family!r}")
    stores = read.get(obj, "stores", list)
    known = (*STORES, *OPTIONAL_STORES)
    if not stores or any(s not in known for s in stores) or len(set(stores)) != len(stores):
        raise read.fail("stores", f"one or two distinct stores of {', '.join(known)}")
    answer_type = read.get(obj, "answer_type", str)
    if answer_type not in ANSWER_TYPES:
        raise read.fail("answer_type", f"one of {', '.join(ANSWER_TYPES)}")
    metrics = read.get(obj, "metrics", dict)
    depends = read.get(obj, "depends", list)
    if any(not isinstance(d, str) or d.split(".")[0] not in stores for d in depends):
        raise read.fail("depends", "store.table names of the case's stores")
    return AnalystCase(
        case_id=read.get(obj, "case_id", str),
        family=family,
        level=read.get(obj, "level", int),
        stores=tuple(stores),
        data=_data(read, obj),
        params=frozen(read.get(obj, "params", dict)),
        question=read.get(obj, "question", str),
        answer_type=answer_type,
        tolerance=float(read.get(obj, "tolerance", (int, float))),
        metrics=frozen({k: float(v) for k, v in metrics.items()}),
        depends=tuple(depends),
        answerable=read.get(obj, "answerable", bool),
        expected=frozen(obj.get("expected")),
        split=read.get(obj, "split", str),
    )


def load_cases(source: str | os.PathLike[str] | Iterable[Any]) -> list[AnalystCase]:
    """Cases from a JSONL path, or from an iterable of dicts or cases."""
    if isinstance(source, (str, os.PathLike)):
        return read_case_file(Path(source), "analyst", _read_file)
    cases = [
        item if isinstance(item, AnalystCase) else case_from_dict(item, f"<case {index}>")
        for index, item in enumerate(source)
    ]
    check_unique((case.case_id for case in cases), "<cases>", "case_id", CaseFormatError)
    return cases


def _read_file(path: Path, text: str) -> list[AnalystCase]:
    cases = read_jsonl(path, case_from_dict, CaseFormatError, text)
    check_unique((case.case_id for case in cases), str(path), "case_id", CaseFormatError)
    return cases


__all__ = [
    "ANSWER_TYPES",
    "AnalystCase",
    "CaseFormatError",
    "case_from_dict",
    "case_to_dict",
    "dumps_case",
    "load_cases",
]
