"""Case files: JSONL read line by line with errors that name the line, and written back.

Every desk keeps its cases in the same kind of file: one JSON object a line, raw
UTF-8, ``\\n`` endings. Reading one checks each line's JSON and hands the object to
the desk's own parser together with ``file:line`` (the parser names the field);
writing one is what makes a committed split reproducible byte for byte.

A file's cases are read once per content: :func:`read_case_file` keys what a desk's
reader made of a file by the SHA-256 of its bytes, so a second environment or
evaluation over the same file (under any path) takes the same validated, read-only
cases, and with them every image and table already derived from them.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def read_jsonl(
    path: Path, parse: Callable[[Any, str], T], error: type[Exception], text: str | None = None
) -> list[T]:
    """Every non-blank line of ``path`` (or of ``text``, the file's contents already read)
    through ``parse(object, "file:line")``.

    A line that is not JSON, or a file with no case at all, raises ``error`` naming
    where; what ``parse`` raises passes through. Lines end as a file opened in text
    mode ends them (``\\n``, ``\\r\\n`` or ``\\r``).
    """
    found: list[T] = []
    with io.StringIO(text, newline=None) if text is not None else path.open(encoding="utf-8") as handle:
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


def read_case_file(path: Path, reader: Hashable, read: Callable[[Path, str], Sequence[T]]) -> list[T]:
    """The cases ``read(path, text)`` makes of the file at ``path``, read and validated
    once per content and ``reader`` (a desk's name for its reader) in this process.

    The file's bytes are read and hashed on every call (a file rewritten in place is read
    afresh); the cases are shared by every caller and must be read-only. A file that
    fails to read raises every time and is not remembered. The last
    :data:`CASE_FILES_KEPT` contents are kept.
    """
    data = path.read_bytes()
    key = (reader, hashlib.sha256(data).hexdigest())
    kept = _CASE_FILES.get(key)
    if kept is None:
        kept = tuple(read(path, data.decode("utf-8")))
        if len(_CASE_FILES) >= CASE_FILES_KEPT:
            _CASE_FILES.popitem(last=False)
    _CASE_FILES[key] = kept
    _CASE_FILES.move_to_end(key)
    return list(kept)


CASE_FILES_KEPT = 8  # files' worth of cases (with their images) one process keeps
_CASE_FILES: OrderedDict[tuple[Hashable, str], tuple[Any, ...]] = OrderedDict()


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
