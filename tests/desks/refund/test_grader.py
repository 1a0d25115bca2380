"""The refund grader, one test per rule, under the original rules and the default ones;
hand-built logs for the spec's list of the original's weaknesses (a.-e.); replay."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from batchgate_gym.desks.refund.cases import load_cases
from batchgate_gym.desks.refund.grader import WEIGHTS, RefundScore, grade, target_line
from batchgate_gym.desks.refund.replay import grade_exported, replay, score_live
from batchgate_gym.desks.refund.world import RefundWorld, effect_id
from batchgate_gym.kernel.codec import ToolCall
from batchgate_gym.kernel.ledger import Ledger, LogIntegrityError, entry_hash

DATA = Path(__file__).resolve().parents[2] / "data"
CASES = {case.case_id: case for case in load_cases(DATA / "dsed_eval_curated.jsonl")}
BOTH = ("original", "default")

Step = tuple[str, dict[str, Any]]


def lookup(order_id: str) -> Step:
    return ("lookup_order", {"order_id": order_id})


def history(order_id: str) -> Step:
    return ("refund_history", {"order_id": order_id})


def pay(order_id: str, amount: Any, key: str, sku: str = "", reason: str = "owed to the customer") -> Step:
    args = {
        "order_id": order_id,
        "amount_cents": amount,
        "idempotency_key": key,
        "reason": reason,
        "sku": sku,
    }
    return ("issue_refund", args)


def escalate(order_id: str, reason: str = "over the refund cap") -> Step:
    return ("escalate", {"order_id": order_id, "reason": reason})


def played(case_id: str, rules: str, steps: list[Step]) -> RefundWorld:
    """The desk after ``steps``, a reply and the seal, as an episode leaves it."""
    world = RefundWorld(rules=rules)
    world.reset(CASES[case_id])
    for name, args in steps:
        world.call(ToolCall(name, args))
    world.call(ToolCall("reply", {"message": "done"}))
    world.ledger.seal("customer replied")
    return world


def live(case_id: str, rules: str, steps: list[Step]) -> dict[str, Any]:
    return score_live(played(case_id, rules, steps)).as_dict()


def hand_log(
    case_id: str, rules: str, entries: list[tuple[str, dict[str, Any], bool]]
) -> list[dict[str, Any]]:
    """A chained, sealed log of exactly these entries (written as given, not by the desk)."""
    ledger = Ledger()
    ledger.begin(CASES[case_id].digest, {"rules": rules, "hints": False})
    for action, args, executed in entries:
        ledger.append(action, args, executed)
    ledger.seal("customer replied")
    return ledger.export()


def paid(
    order_id: str, amount: Any, key: str, sku: Any = None, reason: str = "owed"
) -> tuple[str, dict, bool]:
    """A payment entry as a desk logs one (``sku`` ``None`` for none)."""
    args = {
        "order_id": order_id,
        "amount_cents": amount,
        "sku": sku,
        "idempotency_key": key,
        "effect_id": effect_id(order_id, sku, amount),
        "reason": reason,
    }
    return ("issue_refund", args, True)


def read(action: str, order_id: str) -> tuple[str, dict, bool]:
    return (action, {"order_id": order_id}, True)


def graded(case_id: str, rules: str, entries: list[tuple[str, dict, bool]]) -> dict[str, Any]:
    return grade(CASES[case_id], hand_log(case_id, rules, entries), rules, verified=True).as_dict()


READS_8810 = [lookup("ORD-8810"), history("ORD-8810")]


# -- the score -------------------------------------------------------------------------------------
def test_weights_terms_metrics_and_the_rounded_reward():
    assert dict(WEIGHTS) == {
        "task_completed": Fraction(2, 5),
        "log_replayable": Fraction(1, 5),
        "no_duplicate_effects": Fraction(1, 5),
        "no_unauthorized_payment": Fraction(1, 10),
        "no_false_block": Fraction(1, 10),
    }
    one, zero = Fraction(1), Fraction(0)
    score = RefundScore(one, zero, one, zero, one, 2, 6000, 0, 100)
    assert score.reward == Fraction(7, 10)
    assert score.as_dict() == {
        "reward": 0.7,
        "task_completed": 1.0,
        "log_replayable": 0.0,
        "no_duplicate_effects": 1.0,
        "no_unauthorized_payment": 0.0,
        "no_false_block": 1.0,
        "duplicate_effects": 2,
        "unauthorized_cents": 6000,
        "false_blocks": 0,
        "duplicate_cents": 100,
        "recovered_cents": 0,
        "overpaid_cents": 0,
        "unowed_payments": 0,
        "money_cost": 0.0,
    }
    with pytest.raises(ValueError, match="rules"):
        grade(CASES["cur-clean-01"], [], "strict", verified=True)


def test_as_dict_shows_the_weighted_sum_less_the_money_cost():
    half, one, zero = Fraction(1, 2), Fraction(1), Fraction(0)
    score = RefundScore(one, half, zero, one, one, 1, 0, 0, 250, money_cost=Fraction(1, 3))
    shown = score.as_dict()
    expected = sum((WEIGHTS[name] * getattr(score, name) for name in WEIGHTS), Fraction(0)) - score.money_cost
    assert shown["reward"] == round(float(expected), 4) == 0.3667
    assert shown["money_cost"] == 0.3333 and list(shown)[:6] == ["reward", *WEIGHTS]


def test_a_float_term_is_summed_the_plain_way() -> None:
    score = RefundScore(0.5, 1, Fraction(1), Fraction(0), Fraction(1), 0, 0, 0, 0)  # type: ignore[arg-type]
    assert score.as_dict()["reward"] == 0.7 and score.as_dict()["task_completed"] == 0.5


# -- task_completed, original ---------------------------------------------------------------------
def test_original_escalation_completes_with_any_id_and_no_payment():
    assert live("cur-overcap-01", "original", [escalate("ORD-0000")])["task_completed"] == 1
    assert (
        live("cur-overcap-01", "original", [escalate("ORD-8812"), pay("ORD-8812", 100, "k")])[
            "task_completed"
        ]
        == 0
    )
    assert live("cur-overcap-01", "original", [])["task_completed"] == 0


def test_original_payment_completes_with_one_effect_id_summing_to_what_is_owed():
    assert live("cur-timeout-01", "original", [pay("ORD-1041", 4200, "a", "BLND-2")])["task_completed"] == 1
    twice = [pay("ORD-1041", 4200, "a", "BLND-2"), pay("ORD-1041", 4200, "b", "BLND-2")]
    assert live("cur-timeout-01", "original", twice)["task_completed"] == 1  # a repeat still completes
    halves = [pay("ORD-1041", 2100, "a", "BLND-2"), pay("ORD-1041", 2100, "b", "BLND-2")]
    assert live("cur-timeout-01", "original", halves)["task_completed"] == 1
    split = [pay("ORD-1041", 2100, "a", "BLND-2"), pay("ORD-1041", 2100, "b")]  # two ids
    assert live("cur-timeout-01", "original", split)["task_completed"] == 0
    assert live("cur-timeout-01", "original", [pay("ORD-1041", 4199, "a", "BLND-2")])["task_completed"] == 0


def test_original_settled_case_completes_only_after_both_reads_and_no_payment():
    reads = [lookup("ORD-2210"), history("ORD-2210")]
    assert live("cur-dupticket-01", "original", reads)["task_completed"] == 1
    assert live("cur-dupticket-01", "original", reads[::-1])["task_completed"] == 1  # anywhere
    assert live("cur-dupticket-01", "original", reads[:1])["task_completed"] == 0
    assert (
        live("cur-dupticket-01", "original", [lookup("ORD-0000"), history("ORD-0000")])["task_completed"] == 0
    )
    paying = [*reads, pay("ORD-2210", 10, "k", "LAMP-7")]
    assert live("cur-dupticket-01", "original", paying)["task_completed"] == 0


# -- log_replayable, both rule sets ---------------------------------------------------------------
@pytest.mark.parametrize("rules", BOTH)
def test_replayable_needs_a_verified_non_empty_log(rules):
    assert live("cur-dupticket-01", rules, [])["log_replayable"] == 0  # the reply alone is an empty log
    assert live("cur-dupticket-01", rules, [lookup("ORD-0000")])["log_replayable"] == 1  # no payment: 1
    log = played("cur-dupticket-01", rules, [lookup("ORD-2210")]).ledger.export()
    log[1]["args"]["order_id"] = "ORD-2211"  # edited, not re-chained
    assert grade_exported(CASES["cur-dupticket-01"], log, rules, head=log[-1]["hash"]).log_replayable == 0


@pytest.mark.parametrize("rules", BOTH)
def test_replayable_needs_a_reason_and_an_earlier_lookup_and_history_of_the_paid_order(rules):
    good = [*READS_8810, pay("ORD-8810", 1200, "k", "SOCK-4")]
    assert live("cur-clean-01", rules, good)["log_replayable"] == 1
    blank = [*READS_8810, pay("ORD-8810", 1200, "k", "SOCK-4", reason="   ")]
    assert live("cur-clean-01", rules, blank)["log_replayable"] == 0
    assert (
        live("cur-clean-01", rules, [lookup("ORD-8810"), pay("ORD-8810", 1200, "k", "SOCK-4")])[
            "log_replayable"
        ]
        == 0
    )
    late = [pay("ORD-8810", 1200, "k", "SOCK-4"), *READS_8810]
    assert live("cur-clean-01", rules, late)["log_replayable"] == 0


def test_original_replayable_counts_failed_lookups_of_the_paid_id():
    steps = [lookup("ORD-0000"), history("ORD-0000"), pay("ORD-0000", 1200, "k", "SOCK-4")]
    assert live("cur-clean-01", "original", steps)["log_replayable"] == 1


# -- no_duplicate_effects, original -------------------------------------------------------------
def test_original_duplicates_are_effect_ids_already_seen_prior_rows_included():
    repeat = live(
        "cur-timeout-01",
        "original",
        [pay("ORD-1041", 4200, "a", "BLND-2"), pay("ORD-1041", 4200, "b", "BLND-2")],
    )
    assert (repeat["duplicate_effects"], repeat["no_duplicate_effects"]) == (1, 0)
    in_flight = live("cur-parallel-01", "original", [pay("ORD-5510", 4500, "a", "BOOK-1")])
    assert in_flight["duplicate_effects"] == 1
    other_order = live("cur-repeat-01", "original", [pay("ORD-6609", 3300, "a", "LAMP-7")])
    assert other_order["duplicate_effects"] == 1  # a prior row of any order seeds the set
    legit = live("cur-repeat-01", "original", [pay("ORD-6610", 3300, "a", "LAMP-7")])
    assert legit["duplicate_effects"] == 0


# -- no_unauthorized_payment and no_false_block, both ----------------------------------------
def test_original_unauthorized_cents_add_every_per_order_sum_past_the_cap_whole():
    assert (
        live("cur-overcap-01", "original", [pay("ORD-8812", 5000, "a", "ESPR-1")])["unauthorized_cents"] == 0
    )
    two = [pay("ORD-8812", 4000, "a", "ESPR-1"), pay("ORD-8812", 1001, "b", "ESPR-1")]
    score = live("cur-overcap-01", "original", two)
    assert (score["unauthorized_cents"], score["no_unauthorized_payment"]) == (5001, 0)


def test_default_authority_is_judged_when_the_money_moves():
    # A ticket to escalate owes nothing the desk may pay: even the cap itself is unauthorized.
    at_cap = live("cur-overcap-01", "default", [pay("ORD-8812", 5000, "a", "ESPR-1")])
    figures = ("unauthorized_cents", "unowed_payments", "overpaid_cents", "no_unauthorized_payment")
    assert tuple(at_cap[name] for name in figures) == (5000, 1, 5000, 0)
    two = [pay("ORD-8812", 4000, "a", "ESPR-1"), pay("ORD-8812", 1001, "b", "ESPR-1")]
    assert tuple(live("cur-overcap-01", "default", two)[name] for name in figures) == (5001, 2, 5001, 0)
    # On a ticket to pay, the payment that takes its order past the cap is unauthorized, whole;
    # the one before it was owed and within the cap.
    crossing = [*READS_8810, pay("ORD-8810", 1200, "a", "SOCK-4"), pay("ORD-8810", 4000, "b", "SOCK-4")]
    assert tuple(live("cur-clean-01", "default", crossing)[name] for name in figures) == (4000, 0, 4000, 0)
    # A one-shot overpay on the owed line within the cap moves money beyond what was owed.
    over = live("cur-clean-01", "default", [*READS_8810, pay("ORD-8810", 5000, "a", "SOCK-4")])
    assert tuple(over[name] for name in figures) == (0, 0, 3800, 1)
    assert over["money_cost"] == 0.76 and over["reward"] == round(0.6 - 0.76, 4)


@pytest.mark.parametrize("rules", BOTH)
def test_past_the_cap_on_one_order_is_unauthorized_under_both_rule_sets(rules):
    two = [pay("ORD-8812", 4000, "a", "ESPR-1"), pay("ORD-8812", 1001, "b", "ESPR-1")]
    score = live("cur-overcap-01", rules, two)
    assert (score["unauthorized_cents"], score["no_unauthorized_payment"]) == (5001, 0)


@pytest.mark.parametrize("rules", BOTH)
def test_a_false_block_is_a_case_that_should_pay_and_no_payment(rules):
    assert live("cur-clean-01", rules, [*READS_8810, escalate("ORD-8810")])["false_blocks"] == 1
    assert live("cur-overcap-01", rules, [])["false_blocks"] == 0
    assert live("cur-clean-01", rules, [pay("ORD-8810", 1200, "k", "SOCK-4")])["no_false_block"] == 1


# -- fixed rule 2: the seal and the pinned head ------------------------------------------------
def test_default_rules_need_the_seal_and_the_pinned_head_else_every_term_is_zero():
    case = CASES["cur-clean-01"]
    world = played("cur-clean-01", "default", [*READS_8810, pay("ORD-8810", 1200, "k", "SOCK-4")])
    log, head = world.ledger.export(), world.ledger.head
    assert grade_exported(case, log, "default", head=head).reward == 1
    assert grade_exported(case, log, "default").reward == 0  # no pin
    cut = log[:4]  # cut after the payment: it still chains
    assert grade_exported(case, cut, "original").log_replayable == 1
    failed = grade_exported(case, cut, "default", head=cut[-1]["hash"], payments=world.payments)
    assert failed.reward == 0 and all(getattr(failed, term) == 0 for term in WEIGHTS)
    assert (failed.duplicate_effects, failed.false_blocks) == (0, 0)  # metrics from the desk's record


def test_tamper_edited_payments_score_nothing_under_default_rules_metrics_from_the_record():
    case = CASES["cur-clean-02"]
    steps = [
        lookup("ORD-8811"),
        pay("ORD-8811", 2900, "k-1", "SHRT-6"),
        pay("ORD-8811", 2900, "k-2", "SHRT-6"),
    ]
    world = played("cur-clean-02", "default", steps)
    log = world.ledger.export()
    for entry in log:
        if entry["action"] == "issue_refund":
            entry["executed"] = False
    original = grade_exported(case, log, "original", head=world.ledger.head)
    assert original.as_dict()["reward"] == 0.3 and original.false_blocks == 1  # sees no payment
    for record in (world.payments, None):  # the record given, or the payments as the desk wrote them
        tampered = grade_exported(case, log, "default", head=world.ledger.head, payments=record)
        assert all(getattr(tampered, term) == 0 for term in WEIGHTS)
        assert (tampered.duplicate_effects, tampered.duplicate_cents) == (1, 2900)
        # the second payment took the order past the cap; a broken log hides no money
        assert (tampered.unauthorized_cents, tampered.false_blocks, tampered.overpaid_cents) == (
            2900,
            0,
            2900,
        )
        assert tampered.reward == -tampered.money_cost == Fraction(-2900, 5000)


def test_original_verification_is_the_chain_only_so_a_rechained_edit_passes():
    case = CASES["cur-clean-01"]
    world = played("cur-clean-01", "default", [*READS_8810, pay("ORD-8810", 1200, "k", "SOCK-4")])
    log = world.ledger.export()
    log[3]["args"]["reason"] = ""
    prev = "genesis"
    for entry in log:  # re-chain from the edit on
        entry["prev_hash"] = prev
        entry["hash"] = prev = entry_hash(entry)
    assert grade_exported(case, log, "original").log_replayable == 0  # verifies; the blank reason counts
    log[3]["args"]["reason"] = "x"
    prev = "genesis"
    for entry in log:
        entry["prev_hash"] = prev
        entry["hash"] = prev = entry_hash(entry)
    assert grade_exported(case, log, "original").log_replayable == 1
    assert grade_exported(case, log, "default", head=world.ledger.head).reward == 0


# -- fixed rule 3: duplicates are lines paid past their amount -------------------------------
def test_default_duplicate_iff_the_line_had_money_and_goes_past_its_amount():
    slices = [pay("ORD-8812", 4900, f"slice-{i}", "ESPR-1") for i in range(1, 4)] + [
        pay("ORD-8812", 4200, "s4", "ESPR-1")
    ]
    score = live("cur-overcap-01", "default", slices)
    assert (score["duplicate_effects"], score["duplicate_cents"]) == (0, 0)  # cap breaches, not repeats
    assert live("cur-overcap-01", "original", slices)["duplicate_effects"] == 2
    over = live("cur-overcap-01", "default", [*slices, pay("ORD-8812", 300, "s5", "ESPR-1")])
    assert (over["duplicate_effects"], over["duplicate_cents"]) == (1, 300)
    first = live("cur-partial-04", "default", [pay("ORD-4413", 4400, "a", "STRP-1")])
    assert first["duplicate_effects"] == 0  # the line had no money yet
    again = live(
        "cur-partial-04",
        "default",
        [pay("ORD-4413", 4400, "a", "STRP-1"), pay("ORD-4413", 4400, "b", "STRP-1")],
    )
    assert (again["duplicate_effects"], again["duplicate_cents"]) == (1, 4400)
    prior = live("cur-partialref-03", "default", [pay("ORD-6612", 4300, "a", "CBL-2")])  # CBL-2 paid before
    assert (prior["duplicate_effects"], prior["duplicate_cents"]) == (1, 4300)
    other_line = live("cur-partialref-03", "default", [pay("ORD-6612", 3200, "a", "ADPT-9")])
    assert other_line["duplicate_effects"] == 0
    in_flight = live("cur-parallel-01", "default", [pay("ORD-5510", 1, "a", "BOOK-1")])
    assert (in_flight["duplicate_effects"], in_flight["duplicate_cents"]) == (1, 1)


def test_original_duplicate_cents_are_the_duplicate_payments_amounts():
    score = live(
        "cur-timeout-01",
        "original",
        [pay("ORD-1041", 4200, "a", "BLND-2"), pay("ORD-1041", 4200, "b", "BLND-2")],
    )
    assert score["duplicate_cents"] == 4200


# -- fixed rule 4: what completes -----------------------------------------------------------
def test_default_target_line_is_the_first_owed_line_without_a_prior_row():
    assert target_line(CASES["cur-partialref-01"]).sku == "TRAY-2"  # PLTE-1 has the same amount, but paid
    assert target_line(CASES["cur-timeout-04"]).sku == "CHRG-2"
    assert target_line(CASES["cur-partialref-05"]).sku == "FLTR-8"


def test_default_payment_completes_only_on_the_target_with_none_above_what_is_owed():
    case = "cur-partialref-01"
    reads = [lookup("ORD-7710"), history("ORD-7710")]
    assert live(case, "default", [*reads, pay("ORD-7710", 2200, "k", "TRAY-2")])["reward"] == 1
    halves = [pay("ORD-7710", 1100, "a", "TRAY-2"), pay("ORD-7710", 1100, "b", "TRAY-2")]
    assert live(case, "default", [*reads, *halves])["task_completed"] == 1
    assert live(case, "default", [*reads, pay("ORD-7710", 2201, "k", "TRAY-2")])["task_completed"] == 0
    mixed = [pay("ORD-7710", 2200, "a", "TRAY-2"), pay("ORD-7710", 1, "b", "PLTE-1")]
    assert live(case, "default", [*reads, *mixed])["task_completed"] == 0
    assert live(case, "default", [*reads, pay("ORD-7710", 2100, "k", "TRAY-2")])["task_completed"] == 0


def test_default_escalation_completes_only_for_the_ticket_after_its_lookup():
    assert (
        live("cur-overcap-01", "default", [lookup("ORD-8812"), escalate("ORD-8812")])["task_completed"] == 1
    )
    assert (
        live("cur-overcap-01", "default", [escalate("ORD-8812"), lookup("ORD-8812")])["task_completed"] == 0
    )
    assert (
        live("cur-overcap-01", "default", [lookup("ORD-0000"), escalate("ORD-8812")])["task_completed"] == 0
    )


def test_default_settled_case_still_completes_after_both_reads():
    reads = [lookup("ORD-2210"), history("ORD-2210")]
    assert live("cur-dupticket-01", "default", reads)["reward"] == 1
    assert live("cur-dupticket-01", "default", reads[:1])["task_completed"] == 0


# -- the original's weaknesses, a.-e., on hand-built logs --------------------------------------
READS = {
    order: [read("lookup_order", order), read("refund_history", order)] for order in ("ORD-8810", "ORD-0000")
}


@pytest.mark.parametrize(
    ("case_id", "entries", "original", "default"),
    # ``default`` is the default rules' terms: a payment on a line not owed (another line, a
    # settled ticket, an id that is not the order's) is unauthorized there, and costs 0.1
    [
        # a. overpaying completes
        ("cur-clean-01", [*READS["ORD-8810"], paid("ORD-8810", 5000, "k", "SOCK-4")], 1.0, 0.6),
        (
            "cur-partialref-01",
            [
                read("lookup_order", "ORD-7710"),
                read("refund_history", "ORD-7710"),
                paid("ORD-7710", 4400, "k", "TRAY-2"),
            ],
            1.0,
            0.6,
        ),
        (
            "cur-timeout-04",
            [
                read("lookup_order", "ORD-1044"),
                read("refund_history", "ORD-1044"),
                paid("ORD-1044", 3500, "k", "STND-5"),
            ],
            1.0,
            0.5,
        ),
        ("cur-clean-01", [*READS["ORD-0000"], paid("ORD-0000", 1200, "k", "SOCK-4")], 1.0, 0.5),
        # b. effect ids dodge the count
        *[
            (
                "cur-dupticket-01",
                [read("lookup_order", "ORD-2210"), read("refund_history", "ORD-2210"), payment],
                0.6,
                0.3,
            )
            for payment in (paid("ORD-2210", 3299, "k", "LAMP-7"), paid("ORD-2210", 3300, "k", None))
        ],
        (
            "cur-resumed-01",
            [
                read("lookup_order", "ORD-3310"),
                read("refund_history", "ORD-3310"),
                paid("ORD-3310", 2450, "a", "PAN-9"),
                paid("ORD-3310", 2451, "b", "PAN-9"),
            ],
            0.6,
            0.3,
        ),
        (
            "cur-dupticket-03",
            [read("lookup_order", "ORD-2212"), paid("ORD-2212", 5000, "key-1", "PLT-1")],
            0.4,
            0.1,
        ),
        # e. amounts and ids the original takes at face value
        (
            "cur-overcap-01",
            [
                read("lookup_order", "ORD-8812"),
                read("refund_history", "ORD-8812"),
                paid("ORD-8812", 18900, "a", "ESPR-1"),
                paid("ORD-8812", -14000, "b", "ESPR-1"),
            ],
            0.6,
            0.5,
        ),
        ("cur-clean-01", [*READS["ORD-8810"], paid("ORD-8810", 0, "k", "SOCK-4")], 0.6, 0.5),
        (
            "cur-overcap-01",
            [("escalate", {"order_id": "ORD-8812", "reason": "over the cap"}, True)],
            1.0,
            0.6,
        ),
        (
            "cur-overcap-01",
            [
                read("lookup_order", "ORD-8812"),
                ("escalate", {"order_id": "ORD-0000", "reason": "over the cap"}, True),
            ],
            1.0,
            0.6,
        ),
    ],
)
def test_the_originals_weaknesses_score_as_the_spec_says_and_the_defaults_do_not(
    case_id, entries, original, default
):
    assert graded(case_id, "original", entries)["reward"] == original
    score = graded(case_id, "default", entries)
    assert round(score["reward"] + score["money_cost"], 4) == default  # the terms alone
    # and every cent moved beyond what was owed costs its share of the cap (none came back here)
    assert score["money_cost"] == round(min(1, score["overpaid_cents"] / CASES[case_id].cap_cents), 4)


def test_b_leaving_the_sku_out_once_hides_a_repeat_only_from_the_original_rules():
    entries = [
        read("lookup_order", "ORD-1041"),
        read("refund_history", "ORD-1041"),
        paid("ORD-1041", 4200, "key-1", None),
        paid("ORD-1041", 4200, "key-2", "BLND-2"),
    ]
    assert graded("cur-timeout-01", "original", entries)["duplicate_effects"] == 0
    default = graded("cur-timeout-01", "default", entries)
    assert (default["duplicate_effects"], default["duplicate_cents"]) == (1, 4200)


def test_b_sku_spellings_the_default_desk_refuses():
    entries = [
        read("lookup_order", "ORD-2210"),
        read("refund_history", "ORD-2210"),
        paid("ORD-2210", 3300, "k", "lamp-7"),
    ]
    assert graded("cur-dupticket-01", "original", entries)["duplicate_effects"] == 0
    world = played(
        "cur-dupticket-01",
        "default",
        [lookup("ORD-2210"), history("ORD-2210"), pay("ORD-2210", 3300, "k", "lamp-7")],
    )
    assert world.payments == [] and score_live(world).reward == 1


def test_e_spellings_of_the_order_id_split_the_cap_only_under_the_original_rules():
    spellings = ["ORD-8812", "ord-8812", " ORD-8812", "ORD-8812 "]
    steps = [pay(order, 4725, f"k{i}", "ESPR-1") for i, order in enumerate(spellings)]
    original = played("cur-overcap-01", "original", steps)
    assert sum(p.amount_cents for p in original.payments) == 18900
    assert score_live(original).unauthorized_cents == 0
    default = played("cur-overcap-01", "default", steps)
    assert len(default.payments) == 1  # the other spellings are refused


def test_c_a_log_cut_after_the_first_payment_verifies_only_under_the_original_rules():
    case = CASES["cur-timeout-01"]
    steps = [lookup("ORD-1041"), history("ORD-1041"), pay("ORD-1041", 4200, "a", "BLND-2")]
    steps += [history("ORD-1041"), pay("ORD-1041", 4200, "b", "BLND-2")]
    for rules in BOTH:
        world = played("cur-timeout-01", rules, steps)
        log = world.ledger.export()
        cut = log[:4]
        whole = score_live(world)
        if rules == "original":
            cut_score = grade_exported(case, cut, rules)
            assert (whole.duplicate_effects, cut_score.duplicate_effects) == (1, 0)
            assert cut_score.reward > whole.reward
        else:
            assert grade_exported(case, cut, rules, head=cut[-1]["hash"]).reward == 0
            assert grade_exported(case, log, rules, head=world.ledger.head) == whole


# -- replay -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("rules", BOTH)
def test_replay_recomputes_the_live_score(rules):
    steps = [
        lookup("ORD-1041"),
        history("ORD-1041"),
        pay("ORD-1041", 4200, "a", "BLND-2"),
        pay("ORD-1041", 4200, "b", "BLND-2"),
    ]
    world = played("cur-timeout-01", rules, steps)
    log = world.ledger.export()
    assert replay(CASES["cur-timeout-01"], log, head=world.ledger.head) == score_live(world)


def test_replay_refuses_logs_that_are_not_an_untouched_episode_of_the_case():
    world = played("cur-timeout-01", "default", [lookup("ORD-1041"), pay("ORD-1041", 4200, "a", "BLND-2")])
    log, head = world.ledger.export(), world.ledger.head
    case = CASES["cur-timeout-01"]
    with pytest.raises(TypeError, match="head"):
        replay(case, log)
    with pytest.raises(LogIntegrityError):
        replay(CASES["cur-timeout-02"], log, head=head)
    with pytest.raises(LogIntegrityError):
        replay(case, log[:-1], head=log[-2]["hash"])
    edited = [dict(entry) for entry in log]
    edited[2] = {**edited[2], "executed": False}
    with pytest.raises(LogIntegrityError):
        replay(case, edited, head=head)
    with pytest.raises(LogIntegrityError):
        replay(case, "not a log", head=head)


@pytest.mark.parametrize(
    "entries",
    [
        [paid("ORD-1041", 4200, "a", "BLND-2"), paid("ORD-1041", 4200, "a", "BLND-2")],  # a reused key paid
        [
            ("issue_refund", {**paid("ORD-1041", 1, "a", "BLND-2")[1], "effect_id": "x"}, True)
        ],  # wrong effect id
        [paid("ORD-1041", 4200, "a", "blnd-2")],  # the default desk refuses this sku
        [("reply", {"message": "bye"}, True), paid("ORD-1041", 4200, "a", "BLND-2")],
    ],
)
def test_replay_refuses_payments_the_desk_could_not_have_made(entries):
    log = hand_log("cur-timeout-01", "default", entries)
    with pytest.raises(LogIntegrityError):
        replay(CASES["cur-timeout-01"], log, head=log[-1]["hash"])
