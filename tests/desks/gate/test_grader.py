"""The four terms and two metrics, each rule of the spec's score section."""

from __future__ import annotations

from fractions import Fraction

import pytest
from worldcase import clean, customer, order, small_case, small_case_dict

from batchgate_gym.desks.gate.cases import load_cases
from batchgate_gym.desks.gate.replay import score_live
from batchgate_gym.desks.gate.world import GateWorld


def play(*calls, case=None):
    world = GateWorld()
    world.reset(case or small_case())
    for name, *args in calls:
        getattr(world, name)(*args)
    return score_live(world)


PERFECT = [
    ("run_sql", "SELECT * FROM stg_b_1, stg_b_2, stg_b_3, stg_b_4"),
    ("load_batch", "B-3"),
    ("load_batch", "B-1"),
    ("quarantine_batch", "B-2", "amount", "out_of_range"),  # the accepted alternative
    ("load_batch", "B-4"),
    ("submit_report", ["B-1", "B-3", "B-4"], ["B-2"]),
]


def test_perfect_play_scores_one():
    score = play(*PERFECT)
    assert score.reward == 1 and score.revenue_error_usd == 0.0 and score.bad_batches_loaded == 0


def test_no_report_no_credit_but_metrics_stand():
    score = play(
        PERFECT[0], ("load_batch", "B-3"), ("load_batch", "B-1"), ("load_batch", "B-2"), ("load_batch", "B-4")
    )
    assert score.reward == 0 and score.disposition == score.report == score.evidence == score.inspected == 0
    assert score.reported is False and score.bad_batches_loaded == 1 and score.revenue_error_usd == 5.0


def test_orders_loaded_before_their_customers_fail_disposition():
    calls = [
        PERFECT[0],
        ("load_batch", "B-4"),
        ("load_batch", "B-3"),
        ("load_batch", "B-1"),
        ("quarantine_batch", "B-2", "amount", "missing_value"),
        ("submit_report", ["B-1", "B-3", "B-4"], ["B-2"]),
    ]
    score = play(*calls)
    assert score.disposition == Fraction(3, 4) and score.report == 1 and score.evidence == 1
    assert score.revenue_error_usd == 0.0  # the mart joins the same rows either way


def test_double_load_and_untouched_batches_are_wrong():
    score = play(
        PERFECT[0],
        ("load_batch", "B-3"),
        ("load_batch", "B-3"),
        ("load_batch", "B-1"),
        ("submit_report", ["B-1", "B-3"], []),
    )
    assert score.disposition == Fraction(1, 4)  # B-1 right; B-3 twice; B-2 and B-4 untouched
    assert score.evidence == 0  # the defective batch was never stopped


def test_quarantine_after_load_keeps_the_load():
    score = play(
        PERFECT[0],
        ("load_batch", "B-2"),
        ("quarantine_batch", "B-2", "amount", "missing_value"),
        ("submit_report", ["B-2"], ["B-2"]),
    )
    assert score.disposition == 0 and score.evidence == 0 and score.report == 1
    assert score.bad_batches_loaded == 1


def test_report_must_be_exact():
    base = PERFECT[:-1]
    assert play(*base, ("submit_report", ["B-4", "B-3", "B-1"], ["B-2"])).report == 1  # order does not matter
    assert play(*base, ("submit_report", ["B-1", "B-3", "B-4", "B-4"], ["B-2"])).report == 0  # duplicates
    assert play(*base, ("submit_report", ["b-1", "B-3", "B-4"], ["B-2"])).report == 0  # case-sensitive
    assert play(*base, ("submit_report", ["B-1", "B-3"], ["B-2"])).report == 0  # one missing
    assert play(*base, ("submit_report", ["B-1", "B-3", "B-4"], [])).report == 0


def test_evidence_counts_accepted_citations_and_cancels_wrong_quarantines():
    def cite(column, kind):
        return play(PERFECT[0], ("quarantine_batch", "B-2", column, kind), ("submit_report", [], ["B-2"]))

    assert cite("amount", "missing_value").evidence == 1
    assert cite("amount", "out_of_range").evidence == 1
    assert cite("amount", "invalid_value").evidence == 0
    assert cite("currency", "missing_value").evidence == 0
    both = play(
        PERFECT[0],
        ("quarantine_batch", "B-2", "amount", "missing_value"),
        ("quarantine_batch", "B-1", "amount", "missing_value"),
        ("submit_report", [], ["B-1", "B-2"]),
    )
    assert both.evidence == 0  # one hit minus one wrong quarantine
    worse = play(
        PERFECT[0],
        ("quarantine_batch", "B-1", "amount", "missing_value"),
        ("quarantine_batch", "B-4", "amount", "missing_value"),
        ("submit_report", [], ["B-1", "B-4"]),
    )
    assert worse.evidence == 0  # never below zero


def test_evidence_without_defective_batches():
    data = small_case_dict()
    data["batches"] = [b for b in data["batches"] if b["batch_id"] != "B-2"]
    case = load_cases([data])[0]
    assert play(("load_batch", "B-1"), ("submit_report", ["B-1"], []), case=case).evidence == 1
    assert (
        play(
            ("quarantine_batch", "B-1", "amount", "out_of_range"), ("submit_report", [], ["B-1"]), case=case
        ).evidence
        == 0
    )


def test_inspected_reads_tables_sqlite_resolved():
    acts = [("load_batch", "B-1"), ("submit_report", ["B-1"], [])]
    assert play(("run_sql", "SELECT 1 -- stg_b_1"), *acts).inspected == 0
    assert play(("run_sql", "SELECT 'stg_b_1'"), *acts).inspected == 0
    assert play(("run_sql", "SELECT 1 FROM stg_b_1 WHERE 0"), *acts).inspected == 1
    assert play(("profile_batch", "B-1"), *acts).inspected == 1
    assert play(("run_sql", "SELECT nope FROM stg_b_1"), *acts).inspected == 0  # failed query: not executed
    assert (
        play(("load_batch", "B-1"), ("profile_batch", "B-1"), ("submit_report", ["B-1"], [])).inspected == 0
    )  # too late


def test_inspected_share_over_batches_acted_on_and_refusals_do_not_count():
    score = play(
        ("profile_batch", "B-1"),
        ("load_batch", "B-1"),
        ("load_batch", "B-3"),
        ("load_batch", "B-9"),
        ("submit_report", ["B-1", "B-3"], []),
    )
    assert score.inspected == Fraction(1, 2)
    assert play(("profile_batch", "B-1"), ("submit_report", [], [])).inspected == 0  # acted on nothing


def test_weights_and_revenue_error():
    score = play(("load_batch", "B-1"), ("load_batch", "B-2"), ("submit_report", ["B-1", "B-2"], []))
    assert (
        score.disposition == Fraction(1, 4)
        and score.report == 1
        and score.evidence == 0
        and score.inspected == 0
    )
    assert score.reward == Fraction(1, 2) * Fraction(1, 4) + Fraction(1, 5)
    # mart 100 + 30 + 5 (the blank amount counts 0) against the reference 160
    assert score.revenue_error_usd == 25.0 and score.bad_batches_loaded == 1


@pytest.mark.parametrize("amount", ["", "   ", "abc"])
def test_loader_turns_non_numbers_into_zero(amount):
    data = small_case_dict()
    data["batches"][0]["rows"] = [order("O10", "C1", amount)]
    case = load_cases([data])[0]
    world = GateWorld()
    world.reset(case)
    world.load_batch("B-1")
    assert world.conn.execute("SELECT amount FROM wh_orders WHERE order_id = 'O10'").fetchone() == (0.0,)


def test_fanout_doubles_a_customers_orders():
    data = small_case_dict()
    data["batches"] = [
        {"batch_id": "B-5", "table": "customers", "source": "crm", "rows": [customer("C1")], "truth": clean()}
    ]
    case = load_cases([data])[0]
    world = GateWorld()
    world.reset(case)
    world.load_batch("B-5")
    assert world.mart_usd() == 200.0


def test_the_gate_score_is_built_on_it():
    from batchgate_gym.desks.gate.grader import TERMS, WEIGHTS, Score
    from batchgate_gym.kernel.scoring import WeightedScore

    assert issubclass(Score, WeightedScore) and Score.WEIGHTS is WEIGHTS and tuple(WEIGHTS) == TERMS
    score = Score(Fraction(1), Fraction(0), Fraction(1, 2), Fraction(1), 2, 3.5, True)
    assert score.as_dict() == {
        "reward": 0.5 + 0.075 + 0.15,
        "disposition": 1.0,
        "report": 0.0,
        "evidence": 0.5,
        "inspected": 1.0,
        "bad_batches_loaded": 2,
        "revenue_error_usd": 3.5,
        "reported": True,
    }
