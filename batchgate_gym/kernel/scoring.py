"""Scores made of weighted terms, in exact fractions.

A desk's score is a frozen dataclass whose *terms* (each a :class:`~fractions.Fraction`
in ``[0, 1]``) are combined with fixed weights into one reward, next to *metrics*
(counts, amounts, flags) that are shown but not weighted. Fractions, not floats,
so that a mean over many cases prints the same digits on every Python.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping
from fractions import Fraction
from numbers import Rational
from typing import Any, ClassVar

_DENOMINATOR_LIMIT = 1_000_000  # terms are k/n with small n: recovered exactly from floats


@functools.lru_cache(maxsize=4096)
def exact(value: float) -> Fraction:
    """The fraction a term's float stands for; each value worked out once (terms repeat:
    0, 1, a half), as an evaluation would otherwise build one per term per episode."""
    return Fraction(value).limit_denominator(_DENOMINATOR_LIMIT)


def checked_weights(weights: Mapping[str, Fraction]) -> Mapping[str, Fraction]:
    """``weights`` itself, once checked: positive fractions (not floats) that sum to exactly 1."""
    if not weights:
        raise ValueError("a score needs at least one weighted term")
    for name, weight in weights.items():
        if not isinstance(weight, Fraction) or weight <= 0:
            raise ValueError(f"the weight of {name!r} must be a positive Fraction, not {weight!r}")
    total = sum(weights.values(), Fraction(0))
    if total != 1:
        raise ValueError(f"the weights sum to {total}, not 1")
    return weights


def weighted_sum(weights: Mapping[str, Fraction], terms: Mapping[str, Fraction]) -> Fraction:
    """The reward: every term times its weight, summed exactly.

    Summed over one growing denominator in plain integers and reduced once at the
    end (a Fraction reduces after every operation, which costs more than the sum);
    the value is the same exact fraction. A term that is not rational (a float) is
    summed the plain way, as a float.
    """
    if not all(_rational(terms[name]) for name in weights):
        return sum((weight * terms[name] for name, weight in weights.items()), Fraction(0))
    return Fraction(*_summed(weights.values(), [terms[name] for name in weights]))


def _summed(weights: Iterable[Fraction], terms: Iterable[Fraction | int]) -> tuple[int, int]:
    """The exact weighted sum of rational terms as a numerator and a denominator, not reduced."""
    numerator, denominator = 0, 1
    for weight, term in zip(weights, terms, strict=True):
        top = weight.numerator * term.numerator
        bottom = weight.denominator * term.denominator
        numerator, denominator = numerator * bottom + top * denominator, denominator * bottom
    return numerator, denominator


def _rational(value: object) -> bool:
    """``isinstance(value, Rational)``, asked of the abstract class only for what is neither
    a Fraction nor an int (an ABC check costs more than the sum it guards)."""
    return type(value) is Fraction or type(value) is int or isinstance(value, Rational)


class WeightedScore:
    """Base of a frozen dataclass score: ``reward`` and ``as_dict`` from its ``WEIGHTS``.

    The subclass declares ``WEIGHTS`` (term name -> weight, see :func:`checked_weights`)
    and one field per term, plus any metric fields; ``DEDUCTED`` names a metric field
    (a Fraction) the reward is the weighted sum less, if any.
    """

    __slots__ = ()
    WEIGHTS: ClassVar[Mapping[str, Fraction]]
    REWARD_DIGITS: ClassVar[int | None] = None  # decimals ``as_dict`` shows the reward with (None: all)
    DEDUCTED: ClassVar[str | None] = None  # the field taken off the weighted sum (None: nothing)

    @property
    def reward(self) -> Fraction:
        total = weighted_sum(self.WEIGHTS, {name: getattr(self, name) for name in self.WEIGHTS})
        deduction = 0 if self.DEDUCTED is None else getattr(self, self.DEDUCTED)
        return total - deduction if deduction else total

    def as_dict(self) -> dict[str, Any]:
        """The reward (rounded to :attr:`REWARD_DIGITS` if set), then each term (as floats,
        in weight order), then each metric as it is."""
        terms = [getattr(self, name) for name in self.WEIGHTS]
        reward = _float_reward(self, terms)
        out: dict[str, Any] = {
            "reward": reward if self.REWARD_DIGITS is None else round(reward, self.REWARD_DIGITS)
        }
        for name, term in zip(self.WEIGHTS, terms, strict=True):
            out[name] = term.numerator / term.denominator if type(term) is Fraction else float(term)
        for name in _metric_names(type(self)):
            out[name] = getattr(self, name)
        return out


def _float_reward(score: WeightedScore, terms: list[Any]) -> float:
    """``float(score.reward)``, without a Fraction made on the way when every term (and the
    deduction) is one: the sum's numerator over its denominator, unreduced, is the same
    float, as Python rounds an integer division correctly whatever the pair's common
    factors (and ``float()`` of a Fraction is that division)."""
    deduction = 0 if score.DEDUCTED is None else getattr(score, score.DEDUCTED)
    if type(deduction) not in _EXACT or not all(type(term) is Fraction for term in terms):
        return float(score.reward)
    numerator, denominator = _summed(score.WEIGHTS.values(), terms)
    if deduction:
        numerator = numerator * deduction.denominator - deduction.numerator * denominator
        denominator *= deduction.denominator
    return numerator / denominator


_EXACT = (Fraction, int)


def _metric_names(score: type[WeightedScore]) -> tuple[str, ...]:
    """The fields of a score class that are not weighted terms, in declaration order."""
    names = _METRIC_NAMES.get(score)
    if names is None:
        fields = dataclasses.fields(score)  # type: ignore[arg-type]
        names = _METRIC_NAMES[score] = tuple(f.name for f in fields if f.name not in score.WEIGHTS)
    return names


_METRIC_NAMES: dict[type, tuple[str, ...]] = {}  # score class -> its metric field names


__all__ = ["WeightedScore", "checked_weights", "weighted_sum"]
