"""Evidence that must compute the answer, and a score that pays right > decline > wrong.

The grader re-runs the cited queries on counterfactual copies of the dataset
(:mod:`batchgate_gym.desks.analyst.counterfactual`); the cheats an outside review
found scoring careful's 1.0 (a constant dressed as a table read, a count shifted to
the answer, labels that contradict the values) earn no evidence credit, an honest
long-format report still does, and evidence calling a function whose value changes
from run to run earns none, live and on replay alike.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from batchgate_gym.desks.analyst import counterfactual
from batchgate_gym.desks.analyst.replay import replay
from batchgate_gym.desks.analyst.sources import split_cases
from batchgate_gym.envs.analyst.text import AnalystDeskEnv
from batchgate_gym.evaluation import evaluate
from batchgate_gym.policies.analyst.attackers import ATTACKERS
from batchgate_gym.policies.analyst.reference import REFERENCE_POLICIES
from batchgate_gym.policies.analyst.sql import read_question, solution

NEW_ATTACKERS = (
    "dressed-constant",
    "shifted-count",
    "contradictory-labels",
    "prior",
    "guess-when-unsure",
    "number-grid",
)


def _case(case_id: str) -> Any:
    return next(case for case in split_cases("eval") if case.case_id == case_id)


def _submit(answer: Any, evidence: list[dict[str, str]]) -> str:
    return json.dumps(
        {
            "name": "submit_answer",
            "arguments": {"answer": json.dumps(answer), "evidence": json.dumps(evidence)},
        }
    )


def _score(case: Any, action: str) -> dict[str, Any]:
    """The score of one action ending an episode of ``case``; its replay must agree."""
    env = AnalystDeskEnv([case])
    try:
        env.reset(seed=0)
        _, _, terminated, _, info = env.step(action)
        assert terminated, info
        assert replay(case, env.export_log(), head=info["log_head"]).as_dict() == info["score"]
        return dict(info["score"])
    finally:
        env.close()


def _careful_query(case: Any) -> str:
    reading = read_question(case.question)
    assert reading is not None
    return solution(reading.kind, reading.params, "sqlite" if case.stores[0] == "sqlite" else "duckdb")


def test_right_beats_decline_beats_wrong_on_an_answerable_question() -> None:
    case = _case("eval-count-status-sqlite-0")
    evidence = [{"store": "sqlite", "query": _careful_query(case)}]
    proven = _score(case, _submit(case.expected, evidence))["reward"]
    unproven = _score(case, _submit(case.expected, []))["reward"]
    declined = _score(case, 'decline(reason="unsure")')["reward"]
    wrong = _score(case, _submit(case.expected + 1, evidence))
    assert (proven, unproven, declined) == (1.0, 0.75, 0.2)
    assert wrong["reward"] < declined and wrong["evidence_reproduces"] == 0 and wrong["wrong_answers"] == 1


def test_the_reviewed_month_report_cheat_earns_no_evidence_and_honest_long_format_does() -> None:
    case = _case("eval-month-report-duckdb-0")
    answer = dict(case.expected)
    ids = list(answer)
    rotated = dict(zip(ids, [answer[m] for m in ids[1:] + ids[:1]], strict=True))
    cheat = (
        "SELECT * FROM (SELECT "
        + ", ".join(f"'{m}' l{i}" for i, m in enumerate(ids))
        + ", "
        + ", ".join(f"{v!r} AS {m}" for m, v in rotated.items())
        + ") k WHERE (SELECT count(*) FROM orders) >= 0 AND (SELECT count(*) FROM order_items) >= 0 "
        "AND (SELECT count(*) FROM reviews) >= 0"
    )
    assert _score(case, _submit(answer, [{"store": "duckdb", "query": cheat}]))["evidence_reproduces"] == 0
    honest = _careful_query(case)
    long_format = " UNION ALL ".join(
        f"SELECT '{m}' AS metric, {m} AS value FROM ({honest}) AS k" for m in ids
    )
    score = _score(case, _submit(answer, [{"store": "duckdb", "query": long_format}]))
    assert score["evidence_reproduces"] == 1 and score["reward"] == 1.0


def test_a_dressed_constant_with_the_right_labels_fails_on_the_copies() -> None:
    case = _case("eval-month-report-sqlite-0")
    answer = dict(case.expected)
    constant = "SELECT " + ", ".join(f"{v!r} AS {m}" for m, v in answer.items())
    dressed = (
        f"SELECT * FROM ({constant}) AS c WHERE (SELECT count(*) FROM ({_careful_query(case)}) AS k) >= 0"
    )
    score = _score(case, _submit(answer, [{"store": "sqlite", "query": dressed}]))
    assert score["evidence_reproduces"] == 0 and score["correct"] == 1


@pytest.mark.parametrize("store", ["sqlite", "duckdb"])
def test_evidence_calling_a_nondeterministic_function_earns_nothing_live_or_replayed(store: str) -> None:
    case = _case(f"eval-count-status-{store}-0")
    query = _careful_query(case).replace("WHERE", "WHERE random() IS NOT NULL AND", 1)
    score = _score(case, _submit(case.expected, [{"store": store, "query": query}]))
    assert score["evidence_reproduces"] == 0 and score["correct"] == 1


def test_every_answerable_eval_question_has_copies_with_their_own_answers() -> None:
    cases = [c for c in split_cases("eval") if c.stores[0] in ("sqlite", "duckdb") and c.answerable]
    moved = 0
    for case in cases:
        copies = counterfactual.copies(case)
        assert len(copies) == counterfactual.COPIES
        assert all(set(copy.data) == set(case.stores) for copy in copies)
        moved += any(copy.expected != case.expected for copy in copies)
    # a constant can pass only where every copy happens to keep the answer (an empty list, say)
    assert moved >= 0.9 * len(cases)


def test_the_new_attackers_stay_below_careful_on_procedural_seeds() -> None:
    seeds = range(6)
    policies = {**REFERENCE_POLICIES, **ATTACKERS}
    careful = evaluate(policies["careful"], seeds=seeds, desk="analyst", progress=False)
    assert careful.overall.mean("reward") == 1.0
    for name in NEW_ATTACKERS:
        result = evaluate(policies[name], seeds=seeds, desk="analyst", progress=False)
        assert 1.0 - result.overall.mean("reward") >= 0.05, name


def test_a_grid_of_numbers_around_the_answer_earns_no_evidence() -> None:
    """``number-grid`` cites thousands of evenly spaced numbers read off careful's tables: one
    cell lay within the tolerance of the answer on the case and of each copy's own answer, so
    every count, ratio and average passed until the copies had to show theirs where the case
    showed its own (careful's 1.0 less 0 on these questions, then 0.25 on each number)."""
    cases = [c for c in split_cases("eval") if c.stores == ("sqlite",) and c.level <= 3]
    careful = evaluate(REFERENCE_POLICIES["careful"], cases=cases, desk="analyst", progress=False)
    grid = evaluate(ATTACKERS["number-grid"], cases=cases, desk="analyst", progress=False)
    assert careful.overall.mean("reward") == 1.0
    assert 1.0 - grid.overall.mean("reward") >= 0.05
    kinds = {case.case_id: case.answer_type for case in cases}
    numbers = [e for e in grid.episodes if kinds[e.case_id] == "number"]
    assert len(numbers) >= 5
    assert all(e.terms["evidence_reproduces"] == 0.0 and e.terms["correct"] == 1.0 for e in numbers)


def test_a_spray_of_candidate_table_rows_earns_no_evidence() -> None:
    """``number-grid`` cites every seller beside every count near the answer's (500 rows, each
    query a constant dressed as a read of careful's tables): each dataset's top sellers were
    among them, so it earned careful's 1.0 until a table had to be shown by the same rows."""
    cases = [
        c for c in split_cases("eval") if c.family == "top-sellers" and c.stores[0] in ("sqlite", "duckdb")
    ]
    careful = evaluate(REFERENCE_POLICIES["careful"], cases=cases, desk="analyst", progress=False)
    grid = evaluate(ATTACKERS["number-grid"], cases=cases, desk="analyst", progress=False)
    assert careful.overall.mean("reward") == 1.0
    assert 1.0 - grid.overall.mean("reward") >= 0.05
    assert all(e.terms["evidence_reproduces"] == 0.0 and e.terms["correct"] == 1.0 for e in grid.episodes)


@pytest.mark.parametrize("store", ["sqlite", "duckdb"])
def test_a_number_in_a_row_labelled_by_the_parameter_passes_whatever_the_row_order(store: str) -> None:
    """An honest grouped count, its rows in an order the data sets: the parameter's row is
    found by its label on the case and on every copy."""
    case = _case(f"eval-count-status-{store}-0")
    grouped = (
        "SELECT status, count(*) AS n FROM orders WHERE order_id NOT LIKE 'TEST%' "
        "GROUP BY status ORDER BY n DESC, status"
    )
    score = _score(case, _submit(case.expected, [{"store": store, "query": grouped}]))
    assert score["evidence_reproduces"] == 1 and score["reward"] == 1.0


def test_a_safety_net_firing_on_a_copy_is_an_infra_error_not_a_verdict(monkeypatch) -> None:
    """The machine stopping a copy's query (a wall-clock safety net) says nothing of the agent:
    the episode ends as an infrastructure error, with no score (not evidence 0, as it once
    would have been: a recorded careful run scored 0.75 live and 1.0 on replay)."""
    from contextlib import contextmanager

    from batchgate_gym.desks.analyst import grader
    from batchgate_gym.kernel.infra import InfraFailure

    class Stalled:
        def run(self, query: str) -> Any:
            raise InfraFailure("the wall clock ran out: the machine was stalled")

    @contextmanager
    def stalled_stores(copy: Any, visible: Any) -> Any:
        yield lambda name: Stalled()

    monkeypatch.setattr(counterfactual, "stores_of", stalled_stores)
    monkeypatch.setattr(grader, "_VERDICTS", {})
    case = _case("eval-avg-review-sqlite-0")
    env = AnalystDeskEnv([case])
    env.reset(seed=0)
    evidence = [{"store": "sqlite", "query": _careful_query(case)}]
    _, reward, terminated, truncated, info = env.step(_submit(case.expected, evidence))
    env.close()
    assert (terminated or truncated) and reward == 0.0
    assert info["infra_error"] and "score" not in info


def test_as_dict_shows_the_rounded_weighted_sum_summed_once(monkeypatch):
    from fractions import Fraction

    import batchgate_gym.kernel.scoring as scoring
    from batchgate_gym.desks.analyst.grader import WEIGHTS, AnalystScore

    score = AnalystScore(Fraction(1, 3), Fraction(1, 2), Fraction(1), Fraction(0), 1, 2, 0)
    sums = []
    real = scoring._summed
    monkeypatch.setattr(scoring, "_summed", lambda weights, terms: sums.append(1) or real(weights, terms))
    shown = score.as_dict()
    expected = sum((WEIGHTS[name] * getattr(score, name) for name in WEIGHTS), Fraction(0))
    assert shown["reward"] == round(float(expected), 4)
    assert list(shown) == ["reward", *WEIGHTS, "fully_supported", "wrong_answers", "infra_errors"]
    assert len(sums) == 1  # the terms are summed for the reward once, not again to round it
