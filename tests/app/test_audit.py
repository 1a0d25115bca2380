"""``batchgate audit`` on every desk that has one (the gate; the refund desk, with and without
recovery; the analyst desk, on holdout alone): every check of careful's decides holdout cases,
every ablation loses them, every named attacker stays 0.05 below careful there, and every
grader check, switched off, lets a named attacker or an ablation gain."""

from __future__ import annotations

import functools
import json
from collections import Counter
from dataclasses import replace
from fractions import Fraction

import pytest

from batchgate_gym.app.audit import (
    TARGET,
    Audit,
    ablation_name,
    ablations,
    audited_desks,
    census,
    desk_audit,
    mean,
    mutations,
    run_audit,
)
from batchgate_gym.app.cli import main
from batchgate_gym.desks import registry
from batchgate_gym.desks.analyst.engines.stores import STORES
from batchgate_gym.desks.analyst.grader import CHECKS as ANALYST_GRADER
from batchgate_gym.desks.analyst.questions.market_questions import LEVELS
from batchgate_gym.desks.gate.grader import CHECKS
from batchgate_gym.kernel.grader_checks import GraderChecks, checks_off
from batchgate_gym.policies.analyst.reference import CAREFUL_CHECKS as ANALYST_CHECKS
from batchgate_gym.policies.gate.audit import SIGNUP_AND_LABELS
from batchgate_gym.policies.gate.reference import CAREFUL_CHECKS

SEEDS = 20
MARGIN = 0.05
DESKS = {
    "gate": ("gate", {}),
    "refund": ("refund", {}),
    "refund-recovery": ("refund", {"recovery": True}),
    "analyst": ("analyst", {}),
}
HOLDOUT_ALONE = {"analyst"}  # its episodes re-run queries on real stores: holdout alone, about 40 s


@functools.cache
def played(key: str) -> Audit:
    desk, options = DESKS[key]
    if key in HOLDOUT_ALONE:
        return run_audit(desk, 0, options, splits=("holdout",))
    return run_audit(desk, SEEDS, options)


@pytest.fixture(params=list(DESKS))
def any_audit(request: pytest.FixtureRequest) -> Audit:
    return played(request.param)


@pytest.fixture
def audit() -> Audit:
    return played("gate")


def test_every_careful_check_decides_at_least_two_holdout_cases(any_audit: Audit) -> None:
    decided = census(any_audit, "holdout")
    checks = any_audit.audit.careful_checks
    assert list(decided) == list(checks)
    assert {check: len(ids) >= 2 for check, ids in decided.items()} == dict.fromkeys(checks, True)


def test_each_ablation_loses_at_least_two_holdout_cases(any_audit: Audit) -> None:
    table = ablations(any_audit)
    assert list(table) == any_audit.ablations
    assert {name: len(by["holdout"][1]) >= 2 for name, by in table.items()} == dict.fromkeys(table, True)


def test_every_named_attacker_lands_well_below_careful_on_holdout(any_audit: Audit) -> None:
    rewards = any_audit.rewards()["holdout"]
    gaps = {name: mean(rewards[TARGET]) - mean(rewards[name]) for name in any_audit.attackers}
    assert {name: gap >= MARGIN for name, gap in gaps.items()} == dict.fromkeys(gaps, True)


def test_every_grader_check_switched_off_lets_someone_gain(any_audit: Audit) -> None:
    gains = mutations(any_audit)
    assert list(gains) == list(any_audit.audit.grader.names)
    assert [check for check, gainers in gains.items() if not gainers] == []


def test_the_gate_ablations_are_careful_without_each_check_and_four_together(audit: Audit) -> None:
    assert set(ablations(audit)) == {ablation_name((c,)) for c in CAREFUL_CHECKS} | {
        ablation_name(SIGNUP_AND_LABELS)
    }


def test_four_checks_eval_never_needs_tie_careful_there_and_lose_on_holdout(audit: Audit) -> None:
    by = ablations(audit)[ablation_name(SIGNUP_AND_LABELS)]
    assert by["eval"] == (Fraction(1), [])
    assert by["holdout"][0] < 1 and len(by["holdout"][1]) >= 2


def test_a_check_the_grader_never_consults_moves_no_table(any_audit: Audit) -> None:
    """What the mutation test catches: a check named but removed from the grader (or never there)."""
    dead = GraderChecks(any_audit.audit.grader.desk, {"dead": "consulted nowhere"})
    weaker = Audit(
        replace(any_audit.audit, grader=dead), any_audit.sources, any_audit.ablations, any_audit.attackers
    )
    assert mutations(weaker)["dead"] == {}


def test_switching_a_check_off_is_undone_and_names_are_checked(audit: Audit) -> None:
    before = audit.rewards()["eval"]["double-load"]
    with checks_off(CHECKS, "clean-loaded-once"):
        assert mean(audit.rewards()["eval"]["double-load"]) > mean(before)
    assert audit.rewards()["eval"]["double-load"] == before
    with pytest.raises(ValueError, match="no check 'nope'"), checks_off(CHECKS, "nope"):
        pass


def test_careful_is_perfect_everywhere_the_audit_plays(audit: Audit) -> None:
    assert {s: mean(r[TARGET]) for s, r in audit.rewards().items()} == dict.fromkeys(
        audit.sources, Fraction(1)
    )


def test_only_desks_with_an_audit_are_audited() -> None:
    assert desk_audit("gate").careful_checks == CAREFUL_CHECKS
    assert audited_desks() == ["gate", "analyst", "refund"]  # every desk's spec names its audit
    with pytest.raises(ValueError, match="covers the gate, analyst, refund desk so far, not 'nope'"):
        desk_audit("nope")


@pytest.mark.slow  # plays the two splits again, through the command
def test_the_command_prints_the_three_tables_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--desk", "gate", "--split", "eval", "--seeds", "0", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed) == {"desk", "census", "ablations", "mutations"}
    assert (
        printed["census"]["split"] == "eval" and printed["census"]["checks"]["currency__wrong_currency"] == []
    )


# -- the analyst desk ----------------------------------------------------------------------------


@pytest.fixture
def analyst() -> Audit:
    return played("analyst")


def test_the_analyst_ablations_are_careful_without_each_check_and_careful_is_perfect(analyst: Audit) -> None:
    assert set(ablations(analyst)) == {ablation_name((c,)) for c in ANALYST_CHECKS}
    assert mean(analyst.rewards()["holdout"][TARGET]) == 1


def test_analyst_holdout_has_every_level_and_default_store_each_decided_twice(analyst: Audit) -> None:
    cases = {case.case_id: case for case in registry.get("analyst").fixed_cases(None, "holdout")}
    decided = {case_id for ids in census(analyst, "holdout").values() for case_id in ids}
    by_level = Counter(cases[c].level for c in decided)
    by_store = Counter(store for c in decided for store in cases[c].stores)
    assert {level: by_level[level] >= 2 for level in LEVELS} == dict.fromkeys(LEVELS, True)
    assert {store: by_store[store] >= 2 for store in STORES} == dict.fromkeys(STORES, True)


def test_analyst_evidence_that_leaves_the_catalog_uncited_is_caught_by_one_check_alone(
    analyst: Audit,
) -> None:
    holdout = analyst.rewards()["holdout"]
    assert mean(holdout["uncited-catalog"]) < mean(holdout[TARGET])
    with checks_off(ANALYST_GRADER, "evidence-reads-dependencies"):
        assert analyst.rewards()["holdout"]["uncited-catalog"] == holdout[TARGET]
