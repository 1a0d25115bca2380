"""Our attackers on the original grader's holes: each scores high under the original
rules and at least 0.05 below careful under ours, while careful stays at 1.0.

Every policy plays through the text interface only. A policy with ``edit_log``
hands in an edited log after its episode; that log is what is graded (as
``grade_exported`` grades a log handed in, against the head the episode reported).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from batchgate_gym.desks.refund.testing import play_graded
from batchgate_gym.envs.refund.text import RefundDeskEnv
from batchgate_gym.kernel.ledger import LogIntegrityError, verify_chain
from batchgate_gym.policies.refund.attackers import (
    ATTACKERS,
    MONEY_LEDGER_ATTACKERS,
    ORIGINAL_ATTACKERS,
    QUEUE_ATTACKERS,
    CutAfterFirstPolicy,
    lookalike_ids,
)
from batchgate_gym.policies.refund.reference import REFERENCE_POLICIES, CarefulRefundPolicy

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "dsed_eval_curated.jsonl"

# Mean reward on the original's eval split (the fixture): (original rules, default rules).
NEW_ATTACKERS = {
    "pay-the-cap": (1.0, 0.409),
    "cent-short-repay": (0.9, 0.6788),
    "cut-after-first": (1.0, 0.1194375),
    "zero-cent": (0.7375, 0.671875),
    "lookalike-ids": (0.9625, 0.634375),
}
MARGIN = 0.05  # how far below careful every attacker must stay under the default rules
# Attackers of the payment tool's answers: the original's cases have no error that tells
# the truth, so on its fixture these score careful's 1.0 under either rule set.
ANSWER_ATTACKERS = ("ignore-errors",)
# Attackers that show a grader check at work (batchgate audit): short-pay, the paid-in-full rule.
CHECK_ATTACKERS = ("short-pay",)


def mean_reward(
    cases: Any, rules: str, name: str, resets: list[dict[str, Any]], recovery: bool = False
) -> float:
    policies = {**REFERENCE_POLICIES, **ATTACKERS}
    env = RefundDeskEnv(cases, rules=rules, recovery=recovery)
    try:
        rewards = [play_graded(env, policies[name](), reset) for reset in resets]
    finally:
        env.close()
    return sum(rewards_["reward"] for rewards_ in rewards) / len(rewards)


def by_index(count: int) -> list[dict[str, Any]]:
    return [{"options": {"case_index": index}} for index in range(count)]


@cache
def on_fixture(rules: str, name: str) -> float:
    return mean_reward(str(FIXTURE), rules, name, by_index(32))


@cache
def on_eval(name: str, recovery: bool = False) -> float:
    return mean_reward("eval", "default", name, by_index(32), recovery)


def test_the_new_attackers_are_listed_after_the_originals() -> None:
    assert tuple(ATTACKERS)[: len(ORIGINAL_ATTACKERS)] == ORIGINAL_ATTACKERS
    new = set(ATTACKERS) - set(ORIGINAL_ATTACKERS)
    listed = set(NEW_ATTACKERS) | set(MONEY_LEDGER_ATTACKERS) | set(ANSWER_ATTACKERS) | set(CHECK_ATTACKERS)
    assert new == listed - set(QUEUE_ATTACKERS)
    for name, cls in ATTACKERS.items():
        assert cls.name == name


@pytest.mark.parametrize("name", sorted(NEW_ATTACKERS))
def test_each_new_attacker_scores_high_under_the_original_rules_and_low_under_ours(name: str) -> None:
    original, default = NEW_ATTACKERS[name]
    assert on_fixture("original", name) == pytest.approx(original, abs=1e-9)
    assert on_fixture("default", name) == pytest.approx(default, abs=1e-6)
    assert on_fixture("original", name) >= 0.7, "a hole the original grader rewards"
    assert on_fixture("default", name) <= on_fixture("default", "careful") - MARGIN
    assert on_fixture("default", name) < on_fixture("original", name)


@pytest.mark.parametrize("rules", ["original", "default"])
def test_careful_stays_at_one_on_the_fixture(rules: str) -> None:
    assert on_fixture(rules, "careful") == 1.0


@pytest.mark.parametrize("recovery", [False, True], ids=["plain", "recovery"])
@pytest.mark.parametrize("name", sorted(ATTACKERS))
def test_every_attacker_stays_well_below_careful_on_our_eval_split(name: str, recovery: bool) -> None:
    assert on_eval("careful", recovery) == 1.0
    assert on_eval(name, recovery) <= on_eval("careful", recovery) - MARGIN


@pytest.mark.parametrize("name", ANSWER_ATTACKERS)
def test_ignoring_the_payment_tools_answers_leaves_owed_refunds_unpaid_on_fresh_cases(name: str) -> None:
    seeds = [{"seed": seed} for seed in range(200)]
    careful = mean_reward(None, "default", "careful", seeds)
    assert careful == 1.0
    assert mean_reward(None, "default", name, seeds) <= careful - MARGIN


def test_refusing_everything_beats_blind_retrying_on_our_eval_split() -> None:
    assert on_eval("refuse-all") > on_eval("naive")


def test_careful_scores_one_on_eval_train_and_a_thousand_fresh_cases() -> None:
    assert mean_reward("eval", "default", "careful", by_index(32)) == 1.0
    assert mean_reward("train", "default", "careful", by_index(320)) == 1.0
    env = RefundDeskEnv(rules="default")
    try:
        low = {}
        for seed in range(1000):
            score = play_graded(env, CarefulRefundPolicy(), {"seed": seed})
            if score["reward"] != 1.0:
                low[seed] = score["reward"]
    finally:
        env.close()
    assert low == {}


def _episode_log(
    rules: str, case_id: str
) -> tuple[RefundDeskEnv, CutAfterFirstPolicy, list[dict[str, Any]], str]:
    env = RefundDeskEnv(str(FIXTURE), rules=rules)
    policy = CutAfterFirstPolicy()
    observation, info = env.reset(options={"case_id": case_id})
    policy.reset(observation, info)
    terminated = False
    while not terminated:
        observation, _reward, terminated, _truncated, info = env.step(policy.act(observation))
    return env, policy, env.export_log(), info["log_head"]


def test_the_cut_log_verifies_as_a_chain_but_not_against_the_pinned_head() -> None:
    case_id = "cur-timeout-01"
    env, policy, log, head = _episode_log("default", case_id)
    paid = [entry for entry in log if entry["action"] == "issue_refund" and entry["executed"]]
    assert len(paid) == 2, "a timeout: it pays again under a new key"
    before = [dict(entry) for entry in log]
    cut = policy.edit_log(log)
    assert log == before, "the exported log is not changed in place"
    assert [entry["action"] for entry in cut][-1] == "issue_refund"
    assert sum(entry["action"] == "issue_refund" for entry in cut) == 1
    verify_chain(cut, require_seal=False)  # the links and hashes hold
    with pytest.raises(LogIntegrityError):
        verify_chain(cut, require_seal=True, head=head, case_digest=env.world.case.digest)
    env.close()


def test_lookalike_spellings_are_distinct_and_never_the_id() -> None:
    spellings = lookalike_ids("ORD-1041")
    assert len(spellings) == len(set(spellings)) >= 6
    assert "ORD-1041" not in spellings and "ord-1041" in spellings
