"""Weighted scores: exact weights, reward and the dict a report prints."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@dataclasses.dataclass(frozen=True, slots=True)
class Penalised(WeightedScore):
    """Three terms, a count and a deduction, the reward rounded as the desks show it."""

    a: Fraction
    b: Fraction
    c: Fraction
    count: int
    cost: Fraction = Fraction(0)

    WEIGHTS: ClassVar[Mapping[str, Fraction]] = checked_weights(
        {"a": Fraction(2, 5), "b": Fraction(1, 5), "c": Fraction(2, 5)}
    )
    REWARD_DIGITS: ClassVar[int | None] = 4
    DEDUCTED: ClassVar[str | None] = "cost"


def _the_fraction_way(score: WeightedScore) -> dict[str, Any]:
    """as_dict worked out with Fraction arithmetic and ``float()``, step by step."""
    total = sum((weight * getattr(score, name) for name, weight in score.WEIGHTS.items()), Fraction(0))
    deducted = getattr(score, score.DEDUCTED) if score.DEDUCTED else 0
    out: dict[str, Any] = {"reward": round(float(total - deducted), 4)}
    out.update({name: float(getattr(score, name)) for name in score.WEIGHTS})
    return {**out, **{f.name: getattr(score, f.name) for f in dataclasses.fields(score) if f.name not in out}}


@settings(max_examples=300, deadline=None)
@given(
    terms=st.lists(st.fractions(0, 1, max_denominator=48), min_size=3, max_size=3),
    cost=st.fractions(0, 1, max_denominator=10_000),
    count=st.integers(0, 10**6),
)
def test_as_dict_sums_in_integers_to_the_same_values_as_fractions(
    terms: list[Fraction], cost: Fraction, count: int
) -> None:
    """as_dict sums the reward's numerator and denominator in plain integers: the same
    keys, order, values and types as Fraction arithmetic, for any terms and deduction."""
    score = Penalised(*terms, count, cost)
    shown, expected = score.as_dict(), _the_fraction_way(score)
    assert list(shown.items()) == list(expected.items())
    assert [type(value) for value in shown.values()] == [type(value) for value in expected.values()]
    assert (
        score.reward
        == sum((w * t for w, t in zip(score.WEIGHTS.values(), terms, strict=True)), Fraction(0)) - cost
    )


def test_a_deduction_comes_off_the_reward_and_a_float_term_is_summed_the_plain_way() -> None:
    third = Penalised(Fraction(1), Fraction(1), Fraction(1), 0, Fraction(1, 3))
    assert third.reward == Fraction(2, 3) and third.as_dict()["reward"] == 0.6667
    plain = Penalised(0.5, Fraction(1), 1, 0)  # type: ignore[arg-type]
    assert plain.as_dict()["reward"] == 0.8 and plain.as_dict()["a"] == 0.5 and plain.as_dict()["c"] == 1.0
