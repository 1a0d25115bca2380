"""Refund cases: the original JSONL read unchanged, checked field by field, written back byte for byte."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from batchgate_gym.desks.refund import ENV_ID, GYMNASIUM_IDS, MACRO_ENV_ID
from batchgate_gym.desks.refund.cases import (
    CaseFormatError,
    LedgerRow,
    RefundCase,
    case_from_dict,
    case_to_dict,
    dumps_case,
    load_cases,
)
from batchgate_gym.desks.refund.sources import case_source

DATA = Path(__file__).resolve().parents[2] / "data"
CASES_PATH = DATA / "dsed_eval_curated.jsonl"
LINES = CASES_PATH.read_text(encoding="utf-8").splitlines()


def _first() -> dict:
    return json.loads(LINES[0])


def test_the_fixture_is_the_original_eval_split():
    cases = load_cases(CASES_PATH)
    assert len(cases) == 32
    kinds = Counter(
        "escalate" if c.expect.should_escalate else "pay" if c.expect.should_execute_new_refund else "settled"
        for c in cases
    )
    assert kinds == {"pay": 21, "escalate": 3, "settled": 8}
    faulty = [c for c in cases if c.tool_faults.get("refund_history") == "stale_after_write"]
    assert len(faulty) == 14
    families = Counter(c.family for c in cases)
    assert families["timeout-then-retry"] == 7 and families["legit-partial-refund"] == 5
    parallel = next(c for c in cases if c.case_id == "cur-parallel-01")
    assert parallel.ledger[0].in_flight is True


def test_dumps_case_writes_every_fixture_line_back_byte_for_byte():
    for line in LINES:
        data = json.loads(line)
        assert dumps_case(data) == line
        assert dumps_case(case_to_dict(case_from_dict(data, "x"))) == line
    shuffled = dict(reversed(list(json.loads(LINES[2]).items())))
    assert dumps_case(shuffled) == LINES[2]  # key order restored
    assert "—" in LINES[2] and "\\u2014" not in dumps_case(json.loads(LINES[2]))  # raw UTF-8


def test_in_flight_appears_only_when_true():
    assert "in_flight" not in LedgerRow("O", 1, "S", "k", 0).as_dict()
    assert LedgerRow("O", 1, "S", "k", 0, True).as_dict()["in_flight"] is True


def test_digest_covers_every_field_and_derived_caches():
    data = _first()
    case = case_from_dict(data, "x")
    assert case.digest == case_from_dict(json.loads(LINES[0]), "y").digest
    for change in (
        lambda d: d.update(notes="changed"),
        lambda d: d["order"]["lines"][0].update(amount_cents=4201) or d["order"].update(total_cents=4201),
        lambda d: d["expect"].update(correct_amount_cents=1),
        lambda d: d.update(seed=3),
        lambda d: d["tool_faults"].pop("refund_history"),
    ):
        other = json.loads(LINES[0])
        change(other)
        assert case_from_dict(other, "z").digest != case.digest
    made = []
    assert case.derived("k", lambda: made.append(1) or "v") == "v"
    assert case.derived("k", lambda: made.append(1) or "w") == "v" and made == [1]


@pytest.mark.parametrize(
    ("edit", "field", "problem"),
    [
        (
            lambda d: d["order"]["lines"].append({"sku": "X", "amount_cents": "5"}),
            "order.lines[1].amount_cents",
            "expected int",
        ),
        (lambda d: d["order"].update(total_cents=1), "order.total_cents", "sum of the lines"),
        (lambda d: d["ledger"].append({**d["ledger"][0], "day": 2}), "ledger[1].day", "0 or earlier"),
        (lambda d: d["ledger"][0].update(in_flight="yes"), "ledger[0].in_flight", "expected bool"),
        (
            lambda d: d["tool_faults"].update(issue_refund="explodes"),
            "tool_faults.issue_refund",
            "not one of",
        ),
        (lambda d: d["expect"].pop("should_escalate"), "expect.should_escalate", "missing"),
        (lambda d: d["expect"].update(should_escalate=1), "expect.should_escalate", "expected bool"),
        (lambda d: d.update(seed="7"), "seed", "expected int"),
        (lambda d: d.update(extra=1), "case", "unexpected keys"),
    ],
)
def test_a_broken_case_names_file_line_and_field(tmp_path, edit, field, problem):
    data = json.loads(LINES[2])  # has a ledger row
    edit(data)
    path = tmp_path / "cases.jsonl"
    path.write_text(LINES[0] + "\n" + json.dumps(data) + "\n", encoding="utf-8")
    with pytest.raises(CaseFormatError) as info:
        load_cases(path)
    message = str(info.value)
    assert message.startswith(f"{path}:2: field '{field}':"), message
    assert problem in message


def test_duplicate_case_ids_and_empty_files_are_refused(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text(LINES[0] + "\n" + LINES[0] + "\n", encoding="utf-8")
    with pytest.raises(CaseFormatError, match="appears twice"):
        load_cases(path)
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(CaseFormatError, match="no cases"):
        load_cases(path)
    with pytest.raises(CaseFormatError, match="not valid JSON"):
        path.write_text("{\n", encoding="utf-8")
        load_cases(path)


def test_case_source_draws_fixed_cases_and_takes_named_ones():
    cases = load_cases(CASES_PATH)
    for given in (CASES_PATH, str(CASES_PATH), [json.loads(line) for line in LINES], cases):
        source = case_source(given)
        picked = source.pick(np.random.default_rng(0), {"case_id": "cur-clean-01"})
        assert isinstance(picked, RefundCase) and picked.case_id == "cur-clean-01"
        assert source.pick(np.random.default_rng(0), {"case_index": 3}).case_id == cases[3].case_id
    drawn = {case_source(cases).pick(np.random.default_rng(seed), {}).case_id for seed in range(40)}
    assert len(drawn) > 10
    procedural = case_source(None)
    assert (
        procedural.pick(np.random.default_rng(1), {}).case_id
        != procedural.pick(np.random.default_rng(2), {}).case_id
    )


def test_the_package_names_its_gymnasium_id():
    assert ENV_ID == "batchgate_gym/RefundDesk-v0"
    assert GYMNASIUM_IDS == {
        ENV_ID: "batchgate_gym.envs.refund.text:RefundDeskEnv",
        MACRO_ENV_ID: "batchgate_gym.envs.refund.macro:RefundMacroEnv",
    }
