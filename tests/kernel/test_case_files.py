"""Case files: errors name the line, writing is byte-exact, splits report what they wrote."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from batchgate_gym.kernel.case_files import check_unique, read_jsonl, rewrite_splits, write_jsonl


class Broken(ValueError):
    pass


def test_each_line_goes_to_the_parser_with_its_place(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\n', encoding="utf-8")
    assert read_jsonl(path, lambda data, where: (data["a"], where), Broken) == [
        (1, f"{path}:1"),
        (2, f"{path}:3"),
    ]


def test_a_line_that_is_not_json_and_an_empty_file_name_the_place(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"a": 1}\n{"a": \n', encoding="utf-8")
    with pytest.raises(Broken, match=r"cases.jsonl:2: not valid JSON"):
        read_jsonl(path, lambda data, where: data, Broken)
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(Broken, match="no cases in file"):
        read_jsonl(path, lambda data, where: data, Broken)


def test_a_repeated_value_is_named_with_its_field() -> None:
    check_unique(["a", "b"], "f.jsonl", "case_id", Broken)
    with pytest.raises(Broken, match=r"f.jsonl: field 'case_id': 'a' appears twice"):
        check_unique(["a", "b", "a"], "f.jsonl", "case_id", Broken)


def test_writing_is_byte_exact_and_rewriting_reports_each_split(tmp_path: Path) -> None:
    target = write_jsonl(tmp_path / "sub" / "eval.jsonl", ['{"é": 1}', "{}"])
    assert target.read_bytes() == '{"é": 1}\n{}\n'.encode()
    lines = rewrite_splits(["eval"], lambda name: write_jsonl(tmp_path / f"{name}.jsonl", ["{}"] * 3))
    digest = hashlib.sha256(b"{}\n{}\n{}\n").hexdigest()
    assert lines == [f"{tmp_path / 'eval.jsonl'}: 3 cases, sha256 {digest}"]


def test_a_case_file_is_read_once_per_content_and_reader(tmp_path: Path) -> None:
    from batchgate_gym.kernel.case_files import read_case_file

    parsed: list[str] = []

    def read(path: Path, text: str) -> list[tuple[int, str]]:
        return read_jsonl(path, lambda data, where: parsed.append(where) or (data["a"], where), Broken, text)

    first, copy = tmp_path / "first.jsonl", tmp_path / "copy.jsonl"
    first.write_bytes(b'{"a": 1}\r\n\r\n{"a": 2}\r\n')  # read as text mode reads it: \r\n ends a line
    copy.write_bytes(first.read_bytes())
    cases = read_case_file(first, "test", read)
    assert cases == [(1, f"{first}:1"), (2, f"{first}:3")] and len(parsed) == 2
    again = read_case_file(copy, "test", read)  # the same bytes under another name
    assert again == cases and all(a is b for a, b in zip(again, cases, strict=True)) and len(parsed) == 2
    assert read_case_file(first, "another reader", read) == cases and len(parsed) == 4
    first.write_text('{"a": 3}\n', encoding="utf-8")  # rewritten in place: read afresh
    assert read_case_file(first, "test", read) == [(3, f"{first}:1")]
    first.write_text('{"a": \n', encoding="utf-8")
    for _ in range(2):  # a file that fails is not remembered
        with pytest.raises(Broken, match=r"first\.jsonl:1: not valid JSON"):
            read_case_file(first, "test", read)
