"""The refund desk reproduces the original grader's figures, case by case.

``tests/data/dsed_eval_expected.json`` holds, under ``policies``, what the original
grader gave nine policies (three references, six attackers) on the original eval
split: per case the reward, the five terms and the three metrics, and the mean
reward. Our policies play our environment through its text interface only; under
``rules="original"`` every one of those figures must come out the same. Under the
default rules, ``improved_rules`` lists the rows that change (with our metrics
``duplicate_cents``, ``overpaid_cents``, ``unowed_payments`` and the ``money_cost``);
every other row must equal the original one.

``tamper`` edits the exported log after the episode (``edit_log``); its figures
are those of the edited log, graded with ``grade_exported`` against the head the
episode reported.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from batchgate_gym.desks.refund.cases import load_cases
from batchgate_gym.desks.refund.replay import grade_exported
from batchgate_gym.envs.refund.text import RefundDeskEnv
from batchgate_gym.policies.refund.attackers import ATTACKERS, ORIGINAL_ATTACKERS
from batchgate_gym.policies.refund.reference import REFERENCE_POLICIES

if TYPE_CHECKING:
    from .conftest import OriginalEval

# The original's nine policies; our further attackers have their own tests.
ALL_POLICIES = {**REFERENCE_POLICIES, **{name: ATTACKERS[name] for name in ORIGINAL_ATTACKERS}}


def play(env: RefundDeskEnv, policy_class: type, case: Any, rules: str) -> dict[str, Any]:
    """One episode of ``policy_class`` on ``case``; the score of the log as graded."""
    policy = policy_class()
    observation, info = env.reset(options={"case_id": case.case_id})
    policy.reset(observation, info)
    terminated = truncated = False
    while not (terminated or truncated):
        observation, _reward, terminated, truncated, info = env.step(policy.act(observation))
    assert terminated and not truncated, "every policy ends its episode with a reply"
    assert info["case_id"] == case.case_id
    score = dict(info["score"])
    edit_log = getattr(policy, "edit_log", None)
    if edit_log is not None:
        # Graded as handed in, against the head the episode reported; the default
        # rules take their metrics from the desk's own payment record.
        edited = edit_log(env.export_log())
        score = grade_exported(
            case, edited, rules, head=info["log_head"], payments=env.world.payments
        ).as_dict()
    return score


@cache
def figures(rules: str, path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Every policy's score on every case of the file at ``path``, under ``rules``: policy -> case id -> score."""
    cases = load_cases(path)
    env = RefundDeskEnv(str(path), rules=rules)
    try:
        return {
            name: {case.case_id: play(env, policy_class, case, rules) for case in cases}
            for name, policy_class in ALL_POLICIES.items()
        }
    finally:
        env.close()


def differences(got: dict[str, dict[str, Any]], expected: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per case, every expected figure that came out otherwise: ``{case: {figure: (got, expected)}}``."""
    out = {}
    for case_id, row in expected.items():
        wrong = {
            key: (got[case_id].get(key), value)
            for key, value in row.items()
            if got[case_id].get(key) != value
        }
        if wrong:
            out[case_id] = wrong
    return out


def mean_reward(scores: dict[str, dict[str, Any]]) -> float:
    return round(sum(score["reward"] for score in scores.values()) / len(scores), 6)


def test_the_fixture_covers_every_policy_and_case_with_every_figure(original_eval: OriginalEval):
    case_ids = {case.case_id for case in load_cases(original_eval.cases)}
    assert len(case_ids) == 32
    improved = original_eval.improved_rules
    assert set(original_eval.policies) == set(ALL_POLICIES) == set(improved)
    for name, expected in original_eval.policies.items():
        assert set(expected["per_case"]) == case_ids, name
        for row in expected["per_case"].values():
            assert set(original_eval.figures) <= set(row), name
        assert set(improved[name]["per_case"]) <= case_ids, name


@pytest.mark.parametrize("name", sorted(ALL_POLICIES))
def test_original_rules_reproduce_every_per_case_figure(name, original_eval: OriginalEval):
    got = figures("original", original_eval.cases)[name]
    expected = original_eval.policies[name]
    assert differences(got, expected["per_case"]) == {}
    assert mean_reward(got) == expected["mean_reward"]


@pytest.mark.parametrize("name", sorted(ALL_POLICIES))
def test_default_rules_change_exactly_the_listed_rows(name, original_eval: OriginalEval):
    got = figures("default", original_eval.cases)[name]
    improved = original_eval.improved_rules[name]
    changed = improved["per_case"]
    expected = {
        case_id: changed.get(case_id, row)
        for case_id, row in original_eval.policies[name]["per_case"].items()
    }
    assert differences(got, expected) == {}
    assert mean_reward(got) == improved["mean_reward"]


def test_the_headline_figures(original_eval: OriginalEval):
    """The fixture's totals, from our per-case scores: completions, duplicates, cents past the cap."""
    original, given = figures("original", original_eval.cases), original_eval.policies
    naive = original["naive"].values()
    assert sum(score["task_completed"] for score in naive) == given["naive"]["completed"] == 21
    assert sum(score["duplicate_effects"] for score in naive) == given["naive"]["duplicate_effects"] == 20
    assert sum(score["unauthorized_cents"] for score in naive) == given["naive"]["unauthorized_cents"]
    assert sum(score["log_replayable"] for score in naive) == 0
    refuse = original["refuse-all"].values()
    assert sum(score["false_blocks"] for score in refuse) == given["refuse-all"]["false_blocks"] == 21
    assert {score["reward"] for score in original["careful"].values()} == {1.0}
    tampered = figures("default", original_eval.cases)[
        "tamper"
    ].values()  # every term 0; the money it moved still costs
    assert all(score["reward"] == -score["money_cost"] and score["task_completed"] == 0 for score in tampered)
    assert sum(score["overpaid_cents"] for score in tampered) > 0
