"""Weighted scores: exact weights, reward and the dict a report prints."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from fractions import Fraction
from typing import ClassVar

import pytest

from batchgate_gym.kernel.scoring import WeightedScore, checked_weights, weighted_sum

_WEIGHTS = checked_weights({"speed": Fraction(1, 3), "care": Fraction(2, 3)})


@dataclasses.dataclass(frozen=True, slots=True)
class Toy(WeightedScore):
    WEIGHTS: ClassVar[Mapping[str, Fraction]] = _WEIGHTS

    care: Fraction
    misses: int
    speed: Fraction
    done: bool


def test_reward_is_the_exact_weighted_sum_of_the_terms():
    toy = Toy(care=Fraction(1, 2), misses=3, speed=Fraction(1, 7), done=True)
    assert toy.reward == Fraction(1, 3) * Fraction(1, 7) + Fraction(2, 3) * Fraction(1, 2)
    assert type(toy.reward) is Fraction
    assert weighted_sum(_WEIGHTS, {"speed": Fraction(1), "care": Fraction(1)}) == 1


def test_as_dict_gives_reward_then_terms_in_weight_order_then_metrics_in_field_order():
    toy = Toy(care=Fraction(1, 2), misses=3, speed=Fraction(1), done=False)
    out = toy.as_dict()
    assert list(out) == ["reward", "speed", "care", "misses", "done"]
    assert out == {"reward": 2 / 3, "speed": 1.0, "care": 0.5, "misses": 3, "done": False}
    assert type(out["speed"]) is float and type(out["misses"]) is int


def test_a_replaced_term_changes_the_reward():
    toy = Toy(care=Fraction(0), misses=0, speed=Fraction(0), done=True)
    assert dataclasses.replace(toy, care=Fraction(1)).reward == Fraction(2, 3)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({}, "at least one"),
        ({"a": 0.5, "b": Fraction(1, 2)}, "positive Fraction"),
        ({"a": Fraction(0), "b": Fraction(1)}, "positive Fraction"),
        ({"a": Fraction(1, 2), "b": Fraction(1, 3)}, "sum to 5/6"),
    ],
)
def test_weights_must_be_positive_fractions_summing_to_one(weights, message):
    with pytest.raises(ValueError, match=message):
        checked_weights(weights)


def test_the_integer_sum_is_the_fraction_sum_exactly():
    weights = {"a": Fraction(1, 2), "b": Fraction(1, 5), "c": Fraction(3, 20), "d": Fraction(3, 20)}
    for seed in range(300):
        terms = {name: Fraction((seed * (i + 3)) % 11, 1 + (seed + i) % 9) for i, name in enumerate(weights)}
        plain = sum((weight * terms[name] for name, weight in weights.items()), Fraction(0))
        summed = weighted_sum(weights, terms)
        assert type(summed) is Fraction and summed == plain
        assert (summed.numerator, summed.denominator) == (plain.numerator, plain.denominator)
