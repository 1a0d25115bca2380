"""The refund case generator: the splits, determinism, the audit's rule, each family's trap,
the knobs, the sources, and the reference policies played through the environment."""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import os
import pathlib
import subprocess
import sys
from collections import Counter
from typing import Any

import numpy as np
import pytest

from batchgate_gym.desks.refund.cases import (
    CAP_CENTS,
    UNSENT_PAYMENTS,
    RefundCase,
    case_from_dict,
    case_from_generated,
    case_to_dict,
    dumps_case,
    load_cases,
)
from batchgate_gym.desks.refund.generator import (
    FAMILIES,
    SPLITS,
    audit_case,
    build_case,
    build_split,
    derive_expect,
    split_path,
    variants,
    write_split,
)
from batchgate_gym.desks.refund.generator.splits import EVAL_PLAN, EVAL_UNSENT
from batchgate_gym.desks.refund.sources import ProceduralRefundCases, case_source

ROOT = pathlib.Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "data" / "dsed_eval_curated.jsonl"
TIMEOUT = "timeout_but_executes"
NOTE_FAILS = "succeeds_but_note_write_fails"
STALE = "stale_after_write"


@functools.cache
def split(name: str) -> tuple[dict[str, Any], ...]:
    return tuple(build_split(name))


def kind(case: dict[str, Any]) -> str:
    expect = case["expect"]
    if expect["should_escalate"]:
        return "escalate"
    return "pay" if expect["should_execute_new_refund"] else "settled"


def ticket_rows(case: dict[str, Any]) -> list[dict[str, Any]]:
    return [row for row in case["ledger"] if row["order_id"] == case["order"]["order_id"]]


# --- the splits --------------------------------------------------------------------------


def test_committed_splits_are_regenerated_byte_for_byte(tmp_path: pathlib.Path) -> None:
    for name in SPLITS:
        text = "".join(dumps_case(case) + "\n" for case in split(name))
        assert split_path(name).read_bytes() == text.encode("utf-8")
        assert split_path(name) == ROOT / "batchgate_gym" / "desks" / "refund" / "data" / f"{name}.jsonl"
        written = write_split(name, tmp_path / f"{name}.jsonl")
        assert written.read_bytes() == split_path(name).read_bytes()


def test_the_module_command_rewrites_the_committed_files_unchanged() -> None:
    before = {name: split_path(name).read_bytes() for name in SPLITS}
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        out = subprocess.run(
            [sys.executable, "-m", "batchgate_gym.desks.refund.generator"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        for name in SPLITS:
            assert split_path(name).read_bytes() == before[name], name
            digest = hashlib.sha256(before[name]).hexdigest()
            assert f"{len(split(name))} cases, sha256 {digest}" in out.stdout
    finally:
        for name, data in before.items():
            if split_path(name).read_bytes() != data:
                split_path(name).write_bytes(data)


def test_the_splits_load_as_cases_and_are_written_with_the_desk_format() -> None:
    for name in SPLITS:
        cases = load_cases(split_path(name))
        assert [c.case_id for c in cases] == [c["case_id"] for c in split(name)]
        assert all(c.split == name and isinstance(c.seed, int) for c in cases)
        for line, case in zip(
            split_path(name).read_text(encoding="utf-8").splitlines(), split(name), strict=True
        ):
            assert line == dumps_case(case) and ", " in line and '": ' in line


def test_eval_counts_follow_the_desk() -> None:
    cases = split("eval")
    expected = {
        "timeout-then-retry": 7,
        "partial-failure": 4,
        "duplicate-ticket": 3,
        "resumed-session": 3,
        "parallel-worker": 2,
        "legit-repeat-purchase": 4,
        "legit-partial-refund": 5,
        "clean-single": 4,
    }
    assert Counter(c["family"] for c in cases) == expected
    assert [c["case_id"] for c in cases] == [f"eval-{f}-{k}" for f in FAMILIES for k in range(expected[f])]
    assert Counter(kind(c) for c in cases) == {"pay": 21, "escalate": 3, "settled": 8}
    lagging = [c for c in cases if c["tool_faults"].get("refund_history") == STALE]
    assert len(lagging) == 14 and all("issue_refund" in c["tool_faults"] for c in lagging)
    per_family = Counter((c["family"], kind(c)) for c in cases)
    assert per_family["timeout-then-retry", "escalate"] == 1
    assert per_family["clean-single", "escalate"] == 2
    assert all(per_family[f, "pay"] == n for f, n in expected.items() if f.startswith(("legit", "partial")))
    assert {len(plan) for plan in EVAL_PLAN.values()} == set(expected.values())
    losing = [c for c in cases if UNSENT_PAYMENTS in c["tool_faults"]]
    assert [c["case_id"] for c in losing] == [
        f"eval-{f}-{k}" for f in FAMILIES for k in EVAL_UNSENT.get(f, ())
    ]
    assert len(losing) == 4 and all(
        kind(c) == "pay" and c["tool_faults"][UNSENT_PAYMENTS] == 1 for c in losing
    )


def test_only_tickets_to_pay_lose_a_payment_and_about_the_rate_of_them_do() -> None:
    cases = [build_case(seed) for seed in range(400)]
    losing = [c for c in cases if UNSENT_PAYMENTS in c["tool_faults"]]
    assert all(kind(c) == "pay" for c in losing)
    paying = sum(kind(c) == "pay" for c in cases)
    assert 0.15 * paying <= len(losing) <= 0.35 * paying


def test_eval_carries_enough_rare_damage_to_move_its_mean() -> None:
    """Six tickets to pay offer an unpaid line that is not owed (and within the cap)
    beside the owed one, and three are above the cap: a policy that pays what is not
    owed, or past the cap, loses on more than one case of 32."""
    tempting = []
    for case in split("eval"):
        paid = {row["sku"] for row in ticket_rows(case)}
        unpaid = [line for line in case["order"]["lines"] if line["sku"] not in paid]
        not_owed = unpaid[1:]  # the owed line is the first unpaid one (the audit's rule)
        if kind(case) == "pay" and any(line["amount_cents"] <= CAP_CENTS for line in not_owed):
            tempting.append(case["case_id"])
    assert len(tempting) >= 6, tempting
    assert sum(kind(case) == "escalate" for case in split("eval")) >= 3


def test_train_holds_forty_cases_a_family_every_variant_in_turn() -> None:
    cases = split("train")
    assert len(cases) == 320
    assert [c["case_id"] for c in cases] == [f"train-{f}-{k}" for f in FAMILIES for k in range(40)]
    kinds = Counter(kind(c) for c in cases)
    assert kinds["pay"] > 100 and kinds["escalate"] > 10 and kinds["settled"] == 120
    assert len({c["seed"] for c in cases}) == 320


# --- determinism -------------------------------------------------------------------------


def _digests() -> list[str]:
    lines = [dumps_case(build_case(seed)) for seed in range(60)]
    lines += [dumps_case(c) for c in build_split("eval")]
    return [hashlib.sha256(line.encode()).hexdigest() for line in lines]


def test_cases_are_the_same_in_any_process() -> None:
    code = (
        "import hashlib\n"
        "from batchgate_gym.desks.refund.cases import dumps_case\n"
        "from batchgate_gym.desks.refund.generator import build_case, build_split\n"
        "lines = [dumps_case(build_case(s)) for s in range(60)]\n"
        "lines += [dumps_case(c) for c in build_split('eval')]\n"
        "print(' '.join(hashlib.sha256(x.encode()).hexdigest() for x in lines))\n"
    )
    mine = _digests()
    outputs = []
    for hash_seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        outputs.append(out.stdout.split())
    assert outputs[0] == outputs[1] == mine


def test_one_seed_one_case_and_seeds_differ() -> None:
    assert build_case(7) == build_case(7)
    assert build_case(-7) != build_case(7)
    assert len({dumps_case({**build_case(s), "seed": 0, "case_id": "x"}) for s in range(100)}) == 100
    assert build_case(5, case_id="mine")["case_id"] == "mine"
    assert build_case(5)["case_id"] == "proc-5" and build_case(5)["split"] == "procedural"


# --- the audit -----------------------------------------------------------------------------


def test_every_generated_case_passes_the_audit() -> None:
    for name in SPLITS:
        for case in split(name):
            assert audit_case(case) == [], case["case_id"]
    for seed in range(1000):
        case = build_case(seed)
        assert audit_case(case) == [], seed
        case_from_dict(case, f"seed {seed}")


def _fields(case: RefundCase) -> list[tuple[str, type, Any]]:
    return [
        (field.name, type(getattr(case, field.name)), getattr(case, field.name))
        for field in dataclasses.fields(case)
        if field.name != "_cache"
    ]


def test_the_generator_audit_its_cases_are_what_the_checked_path_gives() -> None:
    """A procedural reset builds the generator's case without checking it field by field
    (``case_from_generated``): what stands in for that check is this audit, over every
    family and thousands of seeds, with the knobs moved. Each dict passes the check and
    the audit, and the case built from it unchecked is the checked one, field for field
    (types too), with the same digest as its written form gives."""
    knob_sets: list[dict[str, Any]] = [
        {},
        {"lines": 7, "prior_rows": 12},
        {"lag_depth": 3, "fault_rate": 1.0},
        {"cap_cents": 12_345, "lag_depth": 0},
        {"lines": 1, "fault_rate": 0.0, "cap_cents": 5000},
    ]
    count = 0
    for family in FAMILIES:
        for seed in range(300):
            knobs = knob_sets[seed % len(knob_sets)]
            data = build_case(seed, family=family, **knobs)
            checked = case_from_dict(copy.deepcopy(data), "checked")
            unchecked = case_from_generated(data, "generated")
            assert _fields(unchecked) == _fields(checked), (family, seed)
            assert [type(row.in_flight) for row in unchecked.ledger] == [bool] * len(checked.ledger)
            written = case_to_dict(unchecked)
            assert (
                unchecked.digest
                == checked.digest
                == hashlib.sha256(
                    json.dumps(written, sort_keys=True, separators=(",", ":")).encode()
                ).hexdigest()
            )
            assert audit_case(data) == [], (family, seed)
            count += 1
    assert count == 2400


def test_a_generated_case_s_digest_text_is_the_encoder_s_and_escapes_fall_back() -> None:
    """The digest of a generated ticket is taken over its canonical text written key by
    key; it is the encoder's text for every knob, and a string that needs an escape (a
    quote, a backslash, a control or non-ASCII character) takes the encoder's path."""
    from batchgate_gym.desks.refund.cases import _generated_digest, _generated_text
    from batchgate_gym.kernel.ledger import canonical_json

    knob_sets: list[dict[str, Any]] = [{}, {"cap_cents": 777}, {"lag_depth": 4, "fault_rate": 1.0}]
    for seed in range(600):
        data = build_case(seed, **knob_sets[seed % 3], prior_rows=seed % 7 if seed % 2 else None)
        assert _generated_text(data)[1] == canonical_json(data), seed
    data = build_case(5, family="parallel-worker")
    assert any(row.get("in_flight") for row in data["ledger"])
    for odd in ('say "hi"', "back\\slash", "bell\x07", "caf\u00e9", "del\x7f"):
        changed = {**data, "case_id": odd}
        digest = hashlib.sha256(canonical_json(changed).encode("ascii")).hexdigest()
        assert _generated_digest(changed) == digest, odd
        assert case_from_generated(changed, "odd").digest == case_from_dict(changed, "odd").digest


def test_a_procedural_reset_does_not_check_the_generated_case_again(monkeypatch) -> None:
    import batchgate_gym.desks.refund.cases as cases_module
    from batchgate_gym.envs.refund.text import RefundDeskEnv

    def refused(*_args: Any) -> RefundCase:
        raise AssertionError("a generated case was checked again on reset")

    env = RefundDeskEnv()
    monkeypatch.setattr(cases_module, "case_from_dict", refused)
    env.reset(seed=11)
    assert env.world.case.digest == case_from_dict(build_case(env.world.case.seed), "x").digest
    with pytest.raises(AssertionError, match="checked again"):
        RefundDeskEnv(tickets=3).reset(seed=11)  # a queue still goes through the check


def test_the_audit_accepts_the_original_eval() -> None:
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        assert audit_case(case) == [], case["case_id"]


def _over_cap_split() -> dict[str, Any]:
    """The shape of the original's gen-0-0190: two 3800 lines, one already refunded, and an
    expectation judged on the 7600 total instead of the 3800 still owed."""
    return {
        "case_id": "gen-0-0190",
        "family": "legit-partial-refund",
        "prompt": "The second kit is still unrefunded.",
        "order": {
            "order_id": "ORD-0190",
            "customer_id": "CUS-190",
            "total_cents": 7600,
            "lines": [{"sku": "KIT-9", "amount_cents": 3800}, {"sku": "KIT-8", "amount_cents": 3800}],
        },
        "ledger": [
            {"order_id": "ORD-0190", "amount_cents": 3800, "sku": "KIT-9", "idempotency_key": "k", "day": -1}
        ],
        "tool_faults": {},
        "expect": {
            "should_execute_new_refund": False,
            "correct_amount_cents": 0,
            "duplicate_risk": False,
            "should_escalate": True,
        },
        "notes": "",
        "split": "train",
        "seed": 0,
    }


def test_the_audit_rejects_an_escalation_judged_on_the_order_total() -> None:
    case = _over_cap_split()
    problems = audit_case(case)
    assert problems and any("should_escalate is True" in p for p in problems)
    assert any("3800 cents owed on KIT-8" in p and "7600" in p for p in problems)
    fixed = {**case, "expect": derive_expect(case)}
    assert fixed["expect"] == {
        "should_execute_new_refund": True,
        "correct_amount_cents": 3800,
        "duplicate_risk": False,
        "should_escalate": False,
    }
    assert audit_case(fixed) == []


@pytest.mark.parametrize(
    ("edit", "found"),
    [
        (
            lambda c: c["expect"].update(correct_amount_cents=c["expect"]["correct_amount_cents"] + 1),
            "correct_amount",
        ),
        (lambda c: c["expect"].update(should_execute_new_refund=False), "should_execute_new_refund"),
        (lambda c: c["expect"].update(duplicate_risk=not c["expect"]["duplicate_risk"]), "duplicate_risk"),
        (lambda c: c["ledger"].append(dict(c["ledger"][0])), "idempotency key"),
        (lambda c: c["order"]["lines"].append(dict(c["order"]["lines"][0])), "total_cents"),
        (lambda c: c["ledger"].clear(), "another line of the order must already be refunded"),
        (lambda c: c["tool_faults"].update(issue_refund="bogus"), "tool_faults.issue_refund"),
    ],
)
def test_the_audit_rejects_contradictions(edit: Any, found: str) -> None:
    case = copy.deepcopy(next(c for c in split("eval") if c["family"] == "legit-partial-refund"))
    assert audit_case(case) == []
    edit(case)
    problems = audit_case(case)
    assert any(found in p for p in problems), problems


def test_the_audit_rejects_a_line_refunded_in_part_and_a_missing_trap() -> None:
    case = copy.deepcopy(next(c for c in split("eval") if c["family"] == "duplicate-ticket"))
    case["ledger"][0]["amount_cents"] -= 100
    assert any("refunded in part" in p for p in audit_case(case))
    case = copy.deepcopy(split("eval")[0])
    case["tool_faults"] = {}
    case["expect"]["duplicate_risk"] = False
    assert audit_case(case) == [
        "family 'timeout-then-retry': the payment tool must answer 'timeout_but_executes', not None"
    ]


# --- each family's trap, in the data -------------------------------------------------------


def _family_cases(family: str) -> list[dict[str, Any]]:
    fresh = [build_case(seed, family=family) for seed in range(60)]
    return [c for name in SPLITS for c in split(name) if c["family"] == family] + fresh


def _without_lost_payment(faults: dict[str, Any]) -> dict[str, Any]:
    """A case's faults less the payments lost before the provider (drawn apart from the rest)."""
    return {name: value for name, value in faults.items() if name != UNSENT_PAYMENTS}


def test_timeout_family_has_the_lying_timeout_and_the_lag() -> None:
    for case in _family_cases("timeout-then-retry"):
        assert _without_lost_payment(case["tool_faults"]) == {
            "issue_refund": TIMEOUT,
            "refund_history": STALE,
        }
        assert kind(case) in ("pay", "escalate") and not ticket_rows(case)
    near = [c for c in _family_cases("timeout-then-retry") if c["notes"].count("a little under the cap")]
    assert near and all(2 * c["expect"]["correct_amount_cents"] > CAP_CENTS for c in near)


def test_partial_failure_family_fails_the_note_after_paying() -> None:
    cases = _family_cases("partial-failure")
    for case in cases:
        assert case["tool_faults"]["issue_refund"] == NOTE_FAILS and kind(case) == "pay"
    assert {c["tool_faults"].get("refund_history") for c in cases} == {STALE, None}


def test_settled_families_have_every_line_refunded_as_the_family_says() -> None:
    for family in ("duplicate-ticket", "resumed-session", "parallel-worker"):
        for case in _family_cases(family):
            rows = ticket_rows(case)
            assert kind(case) == "settled"
            assert {r["sku"] for r in rows} == {line["sku"] for line in case["order"]["lines"]}
            amounts = {line["sku"]: line["amount_cents"] for line in case["order"]["lines"]}
            assert all(r["amount_cents"] == amounts[r["sku"]] for r in rows)
            if family == "duplicate-ticket":
                assert all(r["day"] < 0 and not r.get("in_flight") for r in rows)
            elif family == "resumed-session":
                assert all(r["day"] == 0 and not r.get("in_flight") for r in rows)
            else:
                assert any(r.get("in_flight") and r["day"] == 0 for r in rows)
    over = [
        c for c in _family_cases("duplicate-ticket") if c["order"]["lines"][0]["amount_cents"] > CAP_CENTS
    ]
    assert over, "a settled over-cap line is settled, not escalated"


def test_legit_repeat_has_the_same_sku_and_amount_on_another_order() -> None:
    for case in _family_cases("legit-repeat-purchase"):
        line = case["order"]["lines"][0]
        twins = [
            r
            for r in case["ledger"]
            if r["order_id"] != case["order"]["order_id"]
            and (r["sku"], r["amount_cents"]) == (line["sku"], line["amount_cents"])
        ]
        assert twins and not ticket_rows(case) and kind(case) == "pay"
        assert case["expect"]["correct_amount_cents"] == line["amount_cents"]


def test_legit_partial_refund_pays_only_the_unpaid_line() -> None:
    cases = _family_cases("legit-partial-refund")
    for case in cases:
        rows = ticket_rows(case)
        lines = case["order"]["lines"]
        paid = {r["sku"] for r in rows}
        assert rows and len(lines) >= 2 and any(line["sku"] not in paid for line in lines)
        owed = next(line for line in lines if line["sku"] not in paid)
        if kind(case) == "pay":
            assert case["expect"]["correct_amount_cents"] == owed["amount_cents"] <= CAP_CENTS
        else:
            assert kind(case) == "escalate" and owed["amount_cents"] > CAP_CENTS
    # The rule judges the owed line, never the order total.
    assert any(kind(c) == "pay" and c["order"]["total_cents"] > CAP_CENTS for c in cases)
    # A refunded line and the owed line alike in every field of a row but the sku.
    assert any(
        any(r["amount_cents"] == c["expect"]["correct_amount_cents"] for r in ticket_rows(c))
        for c in cases
        if kind(c) == "pay"
    )


def test_clean_single_pays_up_to_the_cap_and_escalates_above_it() -> None:
    cases = _family_cases("clean-single")
    for case in cases:
        assert not ticket_rows(case)
        owed = case["order"]["lines"][0]["amount_cents"]
        assert kind(case) == ("escalate" if owed > CAP_CENTS else "pay")
    assert any(c["order"]["lines"][0]["amount_cents"] == CAP_CENTS and kind(c) == "pay" for c in cases)


def test_prompts_name_the_line_asked_about_and_notes_say_what_is_owed() -> None:
    for case in split("eval") + split("train"):
        assert case["prompt"] and case["prompt"].isascii() and '"' not in case["prompt"]
        assert case["notes"].startswith(tuple({c["notes"][:20] for c in split("eval")}))
        expect = case["expect"]
        if expect["should_execute_new_refund"]:
            assert f"Owed: {expect['correct_amount_cents']} cents" in case["notes"]


# --- the knobs ----------------------------------------------------------------------------


def test_knobs_scale_the_case() -> None:
    big = build_case(3, family="legit-partial-refund", lines=20, prior_rows=200)
    assert len(big["order"]["lines"]) == 20 and len({line["sku"] for line in big["order"]["lines"]}) == 20
    assert len([r for r in big["ledger"] if r["order_id"] != big["order"]["order_id"]]) >= 200
    assert audit_case(big) == []
    assert len(build_case(3, family="legit-partial-refund", lines=1)["order"]["lines"]) == 2  # its floor
    quiet = build_case(3, family="clean-single", prior_rows=0, fault_rate=0)
    assert quiet["ledger"] == [] and quiet["tool_faults"] == {}
    for seed in range(40):
        faulty = build_case(seed, family="legit-repeat-purchase", fault_rate=1)
        assert faulty["tool_faults"]["issue_refund"] in (TIMEOUT, NOTE_FAILS)
        assert faulty["tool_faults"]["refund_history"] == STALE and faulty["expect"]["duplicate_risk"]
        assert _without_lost_payment(
            build_case(seed, family="timeout-then-retry", lag_depth=0)["tool_faults"]
        ) == {"issue_refund": TIMEOUT}
        assert _without_lost_payment(
            build_case(seed, family="clean-single", fault_rate=0, lag_depth=1)["tool_faults"]
        ) == {"refund_history": STALE}
    for family in FAMILIES:
        for variant in range(variants(family)):
            case = build_case(11, family=family, variant=variant)
            assert case["family"] == family and audit_case(case) == []


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"family": "no-such"}, "family must be None or one of"),
        ({"variant": 0}, "variant needs family"),
        ({"family": "clean-single", "variant": 4}, r"variant must be an int in 0\.\.3"),
        ({"lines": 0}, r"lines must be None or an int in 1\.\.20"),
        ({"lines": 21}, r"lines must be None or an int in 1\.\.20"),
        ({"lines": True}, "lines must be"),
        ({"prior_rows": -1}, r"prior_rows must be None or an int in 0\.\.200"),
        ({"prior_rows": 201}, r"prior_rows must be None or an int in 0\.\.200"),
        ({"lag_depth": 6}, r"lag_depth must be None or an int in 0\.\.5 \(how many history reads"),
        ({"lag_depth": -1}, "lag_depth must be"),
        ({"fault_rate": 1.5}, r"fault_rate must be None or a number in \[0, 1\]"),
        ({"fault_rate": float("nan")}, "fault_rate must be"),
        ({"fault_rate": True}, "fault_rate must be"),
        ({"cap_cents": 0}, "cap_cents must be a positive int of at most 10,000,000 cents"),
        ({"cap_cents": -5000}, "cap_cents must be a positive int"),
        (
            {"cap_cents": 10_000_001},
            r"cap_cents must be a positive int of at most 10,000,000 cents \(\$100,000\)",
        ),
        ({"cap_cents": True}, "cap_cents must be"),
        ({"cap_cents": 2500.5}, "cap_cents must be"),
        ({"cap_cents": "5000"}, "cap_cents must be"),
    ],
)
def test_bad_knobs_raise_value_errors_naming_the_bound(knobs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_case(1, **knobs)


def test_bad_seeds_are_refused() -> None:
    for seed in (2**63, -(2**63) - 1, 1.5, True, "1"):
        with pytest.raises(ValueError, match="seed must be an int"):
            build_case(seed)  # type: ignore[arg-type]


# --- the sources --------------------------------------------------------------------------


def test_case_source_serves_splits_files_lists_and_fresh_cases() -> None:
    rng = np.random.default_rng(0)
    for name in SPLITS:
        for given in (name, split_path(name), str(split_path(name)), list(split(name))):
            picked = case_source(given).pick(rng, {"case_index": 1})
            assert isinstance(picked, RefundCase) and picked.case_id == split(name)[1]["case_id"]
    source = case_source(None)
    assert isinstance(source, ProceduralRefundCases)
    first = source.pick(np.random.default_rng(5), {})
    again = source.pick(np.random.default_rng(5), {})
    assert first.case_id == again.case_id and first.digest == again.digest
    named = source.pick(rng, {"case_seed": 42, "family": "parallel-worker"})
    assert named.case_id == "proc-42" and named.family == "parallel-worker"
    assert named.digest == case_from_dict(build_case(42, family="parallel-worker"), "x").digest
    assert case_source(None, family="clean-single").pick(rng, {}).family == "clean-single"
    assert case_source(None, lines=5).pick(rng, {"family": "clean-single"}).order.lines[4]
    with pytest.raises(ValueError, match="unknown reset options"):
        source.pick(rng, {"case_id": "x"})
    with pytest.raises(ValueError, match="case_seed must be"):
        source.pick(rng, {"case_seed": 1.5})
    with pytest.raises(ValueError, match="lines must be"):
        case_source(None, lines=50)
    with pytest.raises(ValueError, match="apply to procedural cases only"):
        case_source("eval", lines=3)


# --- played through the environment ---------------------------------------------------------


def _play(env: Any, policy_class: type, **reset: Any) -> dict[str, Any]:
    policy = policy_class()
    observation, info = env.reset(**reset)
    policy.reset(observation, info)
    terminated = truncated = False
    while not (terminated or truncated):
        observation, _reward, terminated, truncated, info = env.step(policy.act(observation))
    assert terminated
    return dict(info)


def test_careful_scores_one_and_refuse_all_less_on_every_split_and_fresh_seeds() -> None:
    envs = pytest.importorskip("batchgate_gym.envs.refund.text")
    policies = pytest.importorskip("batchgate_gym.policies.refund.reference")
    careful, refuse = policies.REFERENCE_POLICIES["careful"], policies.REFERENCE_POLICIES["refuse-all"]
    runs: list[tuple[Any, list[dict[str, Any]]]] = [
        (envs.RefundDeskEnv("eval"), [{"options": {"case_index": i}} for i in range(32)]),
        (envs.RefundDeskEnv("train"), [{"options": {"case_index": i}} for i in range(320)]),
        (envs.RefundDeskEnv(), [{"seed": s} for s in range(200)]),
    ]
    for env, resets in runs:
        careful_scores = [_play(env, careful, **reset)["score"]["reward"] for reset in resets]
        refuse_scores = [_play(env, refuse, **reset)["score"]["reward"] for reset in resets]
        assert careful_scores == [1.0] * len(resets)
        assert sum(refuse_scores) / len(resets) < 0.65


def test_careful_scores_one_at_the_knobs_edges() -> None:
    envs = pytest.importorskip("batchgate_gym.envs.refund.text")
    policies = pytest.importorskip("batchgate_gym.policies.refund.reference")
    careful = policies.REFERENCE_POLICIES["careful"]
    for knobs in (
        {"lines": 20, "prior_rows": 200},
        {"fault_rate": 1.0, "lag_depth": 1},
        {"fault_rate": 1.0, "lag_depth": 0},
        {"lines": 1, "prior_rows": 0, "fault_rate": 0.0},
    ):
        env = envs.RefundDeskEnv(ProceduralRefundCases(**knobs))
        for seed in range(40):
            assert _play(env, careful, seed=seed)["score"]["reward"] == 1.0, (knobs, seed)
