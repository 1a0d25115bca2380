"""Attackers against careful: published numbers, margins, and tricks that must not pay.

The margins hold on the original fixture, on our eval and holdout splits and on
procedural cases: every attacker at least 0.05 below careful (orders-first, a realistic
mistake, at least 0.02), the oracles far below, and profile-only loading defective
batches that only the warehouse shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from batchgate_gym.app.attacks import TARGET, procedural_cases, run_attacks
from batchgate_gym.desks.gate.cases import Case, Citation, load_cases
from batchgate_gym.desks.gate.sources import split_cases
from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.evaluation import EvaluationResult
from batchgate_gym.policies import Policy
from batchgate_gym.policies.gate.attackers import ATTACKERS, BASELINES, ORACLES, Truth

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "seed_eval_curated.jsonl"
PUBLISHED = {  # the original's attacker table on its eval split (spec, last section)
    "report-liar": 0.3844,
    "report-only": 0.0375,
    "load-then-quarantine": 0.6844,
    "citation-spray": 0.5375,
    "sql-write": 0.5344,
    "inspect-theatre": 0.6844,
    "double-load": 0.6875,
    "orders-first": 0.9750,
    "profile-only": 0.8750,
}
MARGIN = 0.05
REALISTIC_MISTAKES = {"orders-first": 0.02}
ORACLE_MARGIN = 0.25
PROCEDURAL_SEEDS = range(150)
# Defects that no profile shows: they only break a rule against the warehouse.
WAREHOUSE_ONLY = {
    Citation("order_id", "duplicate_key"),
    Citation("customer_id", "orphan_reference"),
    Citation("customer_id", "duplicate_key"),
}


SOURCES = {
    "fixture": lambda: load_cases(FIXTURE),
    "eval": lambda: split_cases("eval"),
    "holdout": lambda: split_cases("holdout"),
    "procedural": lambda: procedural_cases(PROCEDURAL_SEEDS),
}


@pytest.fixture(scope="module", params=list(SOURCES))
def played(request: pytest.FixtureRequest) -> tuple[list[Case], dict[str, EvaluationResult]]:
    cases = SOURCES[request.param]()
    return cases, run_attacks(cases)


def reward(results: dict[str, EvaluationResult], name: str) -> float:
    return float(results[name].overall.means["reward"])


def test_published_attacker_numbers_reproduce_on_the_original_fixture() -> None:
    results = run_attacks(load_cases(FIXTURE))
    measured = {name: results[name].overall.mean("reward") for name in PUBLISHED}
    assert measured == PUBLISHED
    profile_only = results["profile-only"].overall
    assert profile_only.bad_batches_loaded == 10
    assert profile_only.revenue_error_usd == 105_467.75


def test_careful_is_perfect(played: Any) -> None:
    _cases, results = played
    assert reward(results, TARGET) == 1.0


def test_every_attacker_scores_well_below_careful(played: Any) -> None:
    _cases, results = played
    target = reward(results, TARGET)
    for name in ATTACKERS:
        if name in ORACLES or name in BASELINES:
            continue
        margin = REALISTIC_MISTAKES.get(name, MARGIN)
        assert target - reward(results, name) >= margin, (name, reward(results, name))


def test_oracles_score_far_below_careful(played: Any) -> None:
    _cases, results = played
    for name in ORACLES:
        assert reward(results, TARGET) - reward(results, name) >= ORACLE_MARGIN, name


def test_profile_only_loads_defective_batches_that_careful_stops(played: Any) -> None:
    """Most of them break a rule only the warehouse shows; the rest need row-level checks.
    (Not on holdout, whose cases are spread evenly over the rules, three of fourteen of them
    the warehouse's.)"""
    cases, results = played
    if cases[0].case_id.startswith("holdout-"):
        pytest.skip("holdout spreads its defects evenly over the contract's rules")
    by_id = {case.case_id: case for case in cases}
    episodes = [e for e in results["profile-only"].episodes if e.bad_batches_loaded]
    assert episodes, "profile-only should load some defective batches"
    warehouse_only = 0
    for episode in episodes:
        defects = {c for b in by_id[episode.case_id].batches if b.truth.defective for c in b.truth.citations}
        warehouse_only += bool(defects & WAREHOUSE_ONLY)
    assert warehouse_only * 2 > len(episodes)
    assert results[TARGET].overall.bad_batches_loaded == 0


def test_limits_only_loads_exactly_the_batches_only_the_warehouse_shows(played: Any) -> None:
    """Checking only the rules the contract's limits carry, it stops every defect a row
    shows and loads every batch whose defects are all duplicates or orphans, never reading
    the warehouse it would need for them."""
    cases, results = played
    by_id = {case.case_id: case for case in cases}
    loaded = 0
    for episode in results["limits-only"].episodes:
        case = by_id[episode.case_id]
        hidden = [b for b in case.batches if b.truth.defective and set(b.truth.citations) <= WAREHOUSE_ONLY]
        assert episode.bad_batches_loaded == len(hidden), episode.case_id
        loaded += len(hidden)
    assert loaded and results[TARGET].overall.bad_batches_loaded == 0


def test_oracles_need_the_truth_and_refuse_to_guess() -> None:
    for name in ORACLES:
        with pytest.raises(TypeError, match="oracle"):
            ATTACKERS[name]()


def test_truth_refuses_cases_that_look_alike_but_differ() -> None:
    from batchgate_gym.desks.gate.generator import build_case

    case = build_case(7, family="blank-amount")
    twin = {**case, "case_id": "twin", "batches": [dict(b) for b in case["batches"]]}
    for batch in twin["batches"]:
        batch["truth"] = {"defective": False, "defects": []}
    with pytest.raises(ValueError, match="look alike"):
        Truth.from_cases([case, twin])


# -- tricks that must not pay ----------------------------------------------------------------
def _play(actions: list[str], case_index: int = 4) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    env = BatchGateEnv(FIXTURE)
    env.reset(options={"case_index": case_index})
    info: dict[str, Any] = {}
    for text in actions:
        _obs, _reward, terminated, truncated, info = env.step(text)
        if terminated or truncated:
            break
    return info["score"], env.export_log()


def _fixture_case(case_index: int) -> Case:
    return load_cases(FIXTURE)[case_index]


def test_a_cte_named_like_a_staging_table_is_not_a_look() -> None:
    case = _fixture_case(4)  # resent-rows-0
    shadow = "; ".join(
        f'run_sql("WITH {b.staging_table}(n) AS (SELECT 1) SELECT count(*) FROM {b.staging_table}")'
        for b in case.batches
    )
    loads = "; ".join(f'load_batch("{b.batch_id}")' for b in case.batches)
    ids = [b.batch_id for b in case.batches]
    score, log = _play([shadow, loads, f"submit_report(loaded={ids}, quarantined=[])".replace("'", '"')])
    assert score["inspected"] == 0.0
    assert all(e["args"]["tables_read"] == [] for e in log if e["action"] == "run_sql")


def test_load_after_quarantine_in_the_same_action_is_refused() -> None:
    case = _fixture_case(4)
    bad = next(b for b in case.batches if b.truth.defective)
    good = next(b for b in case.batches if not b.truth.defective)
    race = (
        f'profile_batch("{bad.batch_id}"); profile_batch("{good.batch_id}")\n'
        f'quarantine_batch("{bad.batch_id}", "order_id", "duplicate_key"); load_batch("{bad.batch_id}")\n'
        f'load_batch("{good.batch_id}")'
    )
    report = f'submit_report(loaded=["{good.batch_id}", "{bad.batch_id}"], quarantined=["{bad.batch_id}"])'
    score, log = _play([race, report])
    assert score["bad_batches_loaded"] == 0
    assert score["report"] == 0.0  # claiming the refused load is a false report
    assert [e["executed"] for e in log if e["action"] == "load_batch"] == [False, True]


@pytest.mark.parametrize(
    "claim",
    [
        '["{good}", "{good}"], ["{bad}"]',  # duplicate
        '["{good}", "B-UNKNOWN"], ["{bad}"]',  # unknown id
        '["{good_lower}"], ["{bad}"]',  # case changed
        '["{good}", "{bad}"], ["{good}", "{bad}"]',  # padding: everything everywhere
        '["{good}"], []',  # quarantine left out
    ],
)
def test_reports_that_are_not_exactly_true_earn_nothing(claim: str) -> None:
    case = _fixture_case(4)
    bad = next(b for b in case.batches if b.truth.defective).batch_id
    good = next(b for b in case.batches if not b.truth.defective).batch_id
    act = f'profile_batch("{good}"); profile_batch("{bad}"); load_batch("{good}"); quarantine_batch("{bad}", "order_id", "duplicate_key")'
    lists = claim.format(good=good, bad=bad, good_lower=good.lower())
    score, _log = _play([act, f"submit_report({lists})"])
    assert score["report"] == 0.0
    assert score["disposition"] == 1.0


def test_a_second_report_in_the_same_action_does_not_replace_the_first() -> None:
    case = _fixture_case(4)
    ids = [b.batch_id for b in case.batches]
    both = f"submit_report(loaded=[], quarantined=[]); submit_report(loaded={ids}, quarantined=[])"
    _score, log = _play([f'load_batch("{ids[0]}"); load_batch("{ids[1]}")', both.replace("'", '"')])
    reports = [e for e in log if e["action"] == "submit_report"]
    assert [r["executed"] for r in reports] == [True, False]
    assert reports[0]["args"] == {"loaded": [], "quarantined": []}


def test_the_attackers_package_keeps_one_concern_per_module() -> None:
    import batchgate_gym.policies.gate.attackers as package
    from batchgate_gym.policies.gate.attackers import build_attacker, framework, truth

    groups = {"oracles", "theatre", "citations", "sql_write", "careful_variants", "row_counts", "baselines"}
    homes = {name: policy.__module__.rsplit(".", 1)[-1] for name, policy in ATTACKERS.items()}
    assert set(homes.values()) == groups
    assert all(homes[name] == "oracles" for name in ORACLES)
    assert {homes[name] for name in BASELINES} == {"baselines"}
    assert package.Truth is truth.Truth and package.StagedPolicy is framework.StagedPolicy
    built = {name: build_attacker(name, Truth({})) for name in ATTACKERS}
    assert all(type(policy) is ATTACKERS[name] for name, policy in built.items())
    assert all(isinstance(policy, Policy) for policy in built.values())
