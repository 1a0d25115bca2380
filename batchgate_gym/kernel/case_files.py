"""Case files: JSONL read line by line with errors that name the line, and written back.

Every desk keeps its cases in the same kind of file: one JSON object a line, raw
UTF-8, ``\\n`` endings. Reading one checks each line's JSON and hands the object to
the desk's own parser together with ``file:line`` (the parser names the field);
writing one is what makes a committed split reproducible byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def read_jsonl(path: Path, parse: Callable[[Any, str], T], error: type[Exception]) -> list[T]:
    """Every non-blank line of ``path`` through ``parse(object, "file:line")``.

    A line that is not JSON, or a file with no case at all, raises ``error`` naming
    where; what ``parse`` raises passes through.
    """
    found: list[T] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise error(f"{where}: not valid JSON ({exc.msg}, column {exc.colno})") from None
            found.append(parse(data, where))
    if not found:
        raise error(f"{path}: no cases in file")
    return found


def check_unique(values: Iterable[str], where: str, field: str, error: type[Exception]) -> None:
    """Raise ``error`` naming ``where`` and ``field`` at the first value that appears twice."""
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise error(f"{where}: field '{field}': {value!r} appears twice")
        seen.add(value)


def check_split(name: str, splits: Sequence[str]) -> None:
    """``ValueError`` naming the known splits when ``name`` is not one of them."""
    if name not in splits:
        raise ValueError(f"unknown split {name!r}; expected one of {', '.join(splits)}")


def write_jsonl(path: Path, lines: Iterable[str]) -> Path:
    """Write one already-serialised object a line (``\\n`` endings, UTF-8); returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("".join(line + "\n" for line in lines).encode("utf-8"))
    return path


def rewrite_splits(names: Sequence[str], write: Callable[[str], Path]) -> list[str]:
    """Write every named split again; one line each: its path, case count and sha256."""
    lines = []
    for name in names:
        path = write(name)
        data = path.read_bytes()
        cases = data.count(b"\n")
        lines.append(f"{path}: {cases} cases, sha256 {hashlib.sha256(data).hexdigest()}")
    return lines
