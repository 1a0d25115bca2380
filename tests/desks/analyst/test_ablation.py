"""Each term of the analyst score earns its place: taking it out lets a worse policy catch up.

Played on the eval questions asked in SQLite (every level and template, each once)
by every reference policy, baseline and attacker; the ablation is exact
(:mod:`batchgate_gym.desks.analyst.ablation`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from batchgate_gym.desks.analyst.ablation import (
    NO_ABSTENTION_RULE,
    ablated_means,
    answerability,
    caught_up,
    earns_its_place,
)
from batchgate_gym.desks.analyst.sources import split_cases
from batchgate_gym.evaluation import evaluate
from batchgate_gym.policies.analyst.attackers import ATTACKERS
from batchgate_gym.policies.analyst.reference import REFERENCE_POLICIES


@pytest.fixture(scope="module")
def variants() -> dict[str, dict[str, Fraction]]:
    cases = [case for case in split_cases("eval") if case.stores[0] == "sqlite"]
    played = {
        name: evaluate(cls, cases=cases, desk="analyst", progress=False).episodes
        for name, cls in {**REFERENCE_POLICIES, **ATTACKERS}.items()
    }
    return ablated_means(played, answerability(cases))


@pytest.mark.slow  # every policy under every ablated grader
def test_every_term_and_the_abstention_rule_reorder_some_policies(variants: Any) -> None:
    reordered = earns_its_place(variants)
    assert set(reordered) == {
        "no correct",
        "no partial_credit",
        "no evidence_reproduces",
        "no abstention_correct",
        NO_ABSTENTION_RULE,
    }
    for label, pairs in reordered.items():
        assert pairs, f"{label} changes no ordering"


@pytest.mark.slow  # every policy under every ablated grader
def test_what_each_term_guards_against(variants: Any) -> None:
    full = variants["full"]
    assert full["careful"] == 1 and full["one-short"] > full["first-only"]
    # Without partial credit, a near miss and a far miss score the same.
    assert ("first-only", "one-short") in caught_up(full, variants["no partial_credit"])
    # Without the evidence check, answering without evidence ties careful.
    assert variants["no evidence_reproduces"]["answer-without-evidence"] == 1
    # Without the abstention rule, answering the unanswerable ties careful.
    no_rule = variants[NO_ABSTENTION_RULE]
    assert no_rule["answer-everything"] >= no_rule["careful"]
    # Without correctness, an analyst never wholly right on several parts passes one who is right
    # but shows no evidence.
    assert ("one-short", "answer-without-evidence") in caught_up(full, variants["no correct"])
    # Without the abstention weight, guessing when unsure pays as well as declining: the weight is
    # what an honest decline of an answerable question earns.
    assert full["decline-when-unsure"] > full["guess-when-unsure"]
    no_weight = variants["no abstention_correct"]
    assert ("guess-when-unsure", "decline-when-unsure") in caught_up(full, no_weight)


def test_caught_up_lists_ties_and_reversals_only() -> None:
    full = {"a": Fraction(1), "b": Fraction(1, 2), "c": Fraction(1, 2)}
    assert caught_up(full, {"a": Fraction(1), "b": Fraction(1, 3), "c": Fraction(1, 4)}) == []
    assert caught_up(full, {"a": Fraction(1, 3), "b": Fraction(1, 3), "c": Fraction(1, 2)}) == [
        ("b", "a"),
        ("c", "a"),
    ]
