"""Case files: the original format reads unchanged; a broken line names file, line and field."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURE_CASES
from worldcase import small_case_dict

from batchgate_gym.desks.gate.cases import CaseFormatError, load_cases


def test_fixture_reads_unchanged(fixture_cases):
    assert len(fixture_cases) == 32
    assert sum(len(c.batches) for c in fixture_cases) == 64
    assert sum(c.n_defective for c in fixture_cases) == 24
    blank = next(c for c in fixture_cases if c.case_id == "eval-blank-amount-0").batches[1].truth
    assert {(x.column, x.defect_type) for x in blank.citations} == {
        ("amount", "missing_value"),
        ("amount", "out_of_range"),
    }


def write(tmp_path, cases):
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(c) if isinstance(c, dict) else c for c in cases) + "\n")
    return path


def broken(mutate):
    data = small_case_dict()
    mutate(data)
    return data


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.pop("case_id"), "field 'case_id': missing"),
        (
            lambda d: d["batches"][1]["rows"][0].update(amount=12.5),
            "field 'batches[1].rows[0].amount': expected a string, got float",
        ),
        (lambda d: d["batches"][0].update(table="invoices"), "field 'batches[0].table'"),
        (lambda d: d["batches"][2]["rows"][0].pop("email"), "field 'batches[2].rows[0]': missing ['email']"),
        (
            lambda d: d["batches"][2]["rows"][0].update(note="x"),
            "field 'batches[2].rows[0]': missing [], unexpected ['note']",
        ),
        (
            lambda d: d["batches"][0]["rows"][1].update(amt=d["batches"][0]["rows"][1].pop("amount")),
            "field 'batches[0].rows[1]': missing ['amount'], unexpected ['amt']",
        ),
        (
            lambda d: d["warehouse"]["customers"][1].update(country=None),
            "field 'warehouse.customers[1].country': expected a string, got NoneType",
        ),
        (
            lambda d: d["warehouse"]["orders"].append([]),
            "field 'warehouse.orders[1]': expected dict, got list",
        ),
        (
            lambda d: d["batches"][1]["truth"]["defects"][0].update(type="typo"),
            "field 'batches[1].truth.defects[0].type'",
        ),
        (
            lambda d: d["batches"][1]["truth"]["accepted"][0].update(column="email"),
            "field 'batches[1].truth.accepted[0].column'",
        ),
        (lambda d: d["batches"][1].update(batch_id="B-1"), "field 'batches[].batch_id': 'B-1' appears twice"),
        (lambda d: d["warehouse"].pop("orders"), "field 'warehouse.orders': missing"),
        (lambda d: d.update(variant="3"), "field 'variant': expected int"),
        (lambda d: d["batches"][0]["truth"].update(defective="no"), "field 'batches[0].truth.defective'"),
    ],
)
def test_broken_case_names_file_line_and_field(tmp_path, mutate, field):
    path = write(tmp_path, [small_case_dict() | {"case_id": "first"}, broken(mutate)])
    with pytest.raises(CaseFormatError) as error:
        load_cases(path)
    assert str(error.value).startswith(f"{path}:2: ")
    assert field in str(error.value)


def test_invalid_json_line(tmp_path):
    path = write(tmp_path, [small_case_dict(), "{oops"])
    with pytest.raises(CaseFormatError, match=r"cases.jsonl:2: not valid JSON"):
        load_cases(path)


def test_duplicate_case_ids_and_empty_files(tmp_path):
    with pytest.raises(CaseFormatError, match="'small-0' appears twice"):
        load_cases(write(tmp_path, [small_case_dict(), small_case_dict()]))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(CaseFormatError, match="no cases"):
        load_cases(empty)


def test_colliding_staging_names_are_refused():
    data = small_case_dict()
    data["batches"][1]["batch_id"] = "b.1"  # stg_b_1, like B-1
    with pytest.raises(CaseFormatError, match="staging table name"):
        load_cases([data])


def test_fixture_path_is_the_copied_one():
    assert FIXTURE_CASES.name == "seed_eval_curated.jsonl"


def test_derived_data_is_made_once_per_case_and_key():
    from batchgate_gym.desks.gate.prompt import task_text
    from batchgate_gym.desks.gate.world import prepare

    case = load_cases(FIXTURE_CASES)[0]
    made: list[int] = []
    assert case.derived("k", lambda: made.append(1) or "v") == "v"
    assert case.derived("k", lambda: made.append(2) or "w") == "v" and made == [1]
    assert case.derived(("k", 2), lambda: "other") == "other"
    assert prepare(case) is prepare(case) and task_text(case, 5) is task_text(case, 5)
    assert task_text(case, 5) != task_text(case, 6)


def test_only_the_case_writes_its_own_cache():
    import pathlib

    import batchgate_gym

    root = pathlib.Path(batchgate_gym.__file__).parent
    writers = sorted(
        str(path.relative_to(root)) for path in root.rglob("*.py") if "._cache" in path.read_text()
    )
    # Each desk's case type owns its cache; no other module writes it.
    assert "desks/gate/cases.py" in writers
    assert all(path.startswith("desks/") and path.endswith("/cases.py") for path in writers), writers


def test_a_case_file_is_validated_once_per_process(tmp_path, monkeypatch):
    """A second read of the same file (an env, then an evaluation of it) takes the cases
    already validated, with the image each one built, instead of parsing every line again."""
    import batchgate_gym.desks.gate.cases as cases_module
    from batchgate_gym.desks.gate.generator import split_path
    from batchgate_gym.desks.gate.world import prepare

    path = tmp_path / "cases.jsonl"
    path.write_bytes(split_path("eval").read_bytes())
    first = load_cases(path)
    images = [prepare(case).image for case in first]
    monkeypatch.setattr(cases_module, "case_from_dict", lambda *args: pytest.fail("validated again"))
    again = load_cases(str(path))
    assert all(a is b for a, b in zip(again, first, strict=True)) and len(again) == len(first) == 32
    assert [prepare(case).image for case in again] == images


# Cells the digest's joins must not write as they are: each needs an escape in JSON, or
# would end a cell early (a quote), or is outside printable ASCII.
ODD_CELLS = ['say "hi"', "back\\slash", "tab\there", "line\nbreak", "del\x7f", "caf\u00e9", "\U0001f600", ""]


@pytest.mark.parametrize("odd", ODD_CELLS)
@pytest.mark.parametrize("where", ["warehouse", "batch", "prompt"])
def test_digest_is_the_canonical_json_whatever_the_cells_hold(odd, where):
    from batchgate_gym.desks.gate.cases import case_from_dict

    from .test_generated_cases import reference_digest

    data = small_case_dict()
    if where == "warehouse":
        data["warehouse"]["customers"][1]["email"] = odd
    elif where == "batch":
        data["batches"][0]["rows"][1]["status"] = odd
    else:
        data["prompt"] = odd
    case = case_from_dict(data, "dict")
    assert case.digest == reference_digest(case)
    plain = case_from_dict(small_case_dict(), "dict")
    assert case.digest != plain.digest and plain.digest == reference_digest(plain)


def test_digest_of_empty_rows_is_the_canonical_json():
    from batchgate_gym.desks.gate.cases import case_from_dict

    from .test_generated_cases import reference_digest

    data = small_case_dict()
    data["warehouse"]["orders"] = []
    data["batches"][0]["rows"] = []
    case = case_from_dict(data, "dict")
    assert case.digest == reference_digest(case)


@pytest.mark.parametrize(
    "batch_id", ["B-0930-12-1", "b_1", "", "-", "A-B_c", "a b", "é-1", "\u212a-1", "İ", "x.y", "B-1\n"]
)
def test_staging_table_names_replace_whatever_is_not_a_lower_letter_digit_or_underscore(batch_id):
    import re

    from batchgate_gym.desks.gate.cases import staging_table_name

    assert staging_table_name(batch_id) == "stg_" + re.sub(r"[^a-z0-9_]", "_", batch_id.lower())
