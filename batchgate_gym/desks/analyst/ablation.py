"""Does each term earn its place? Every policy's mean reward with one term taken out, and what that reorders.

Three terms only add weight, so taking one out means dropping its weight and
renormalising the rest. The abstention term is different: its rule reaches the
whole episode (a wrong decision to answer or decline zeroes every term, a right
decline earns every term), so besides dropping its weight, the table takes its rule
out: without it a question the data cannot answer has nothing to be graded
against, so it pays nobody (a decline is no answer; an answer has no reference to
match — at most its evidence would reproduce, which only helps the over-answerer).

A term earns its place when taking it out ties or reverses the order of two
policies the full score tells apart: a worse policy catching up with a better one.
Everything is exact (fractions), so a tie is a tie.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Protocol

from .grader import WEIGHTS

NO_ABSTENTION_RULE = "no abstention rule"


class TermsOfCase(Protocol):
    """What the ablation reads of an episode: its case and its terms."""

    case_id: str
    terms: dict[str, float]


def _exact(value: float) -> Fraction:
    return Fraction(value).limit_denominator(10**6)


def _episode_reward(terms: Mapping[str, float], kept: Mapping[str, Fraction]) -> Fraction:
    total = sum(kept.values(), Fraction(0))
    return sum((w * _exact(terms[t]) for t, w in kept.items()), Fraction(0)) / total


def ablated_means(
    episodes: Mapping[str, Sequence[TermsOfCase]], answerable: Mapping[str, bool]
) -> dict[str, dict[str, Fraction]]:
    """``{variant: {policy: mean reward}}`` for the full score, each term's weight dropped, and
    the abstention rule dropped (``answerable`` maps each case id to whether it can be answered)."""
    variants: dict[str, dict[str, Fraction]] = {}
    for dropped in (None, *WEIGHTS):
        kept = {t: w for t, w in WEIGHTS.items() if t != dropped}
        label = "full" if dropped is None else f"no {dropped}"
        variants[label] = {
            name: sum((_episode_reward(e.terms, kept) for e in runs), Fraction(0)) / len(runs)
            for name, runs in episodes.items()
        }
    kept = {t: w for t, w in WEIGHTS.items() if t != "abstention_correct"}
    variants[NO_ABSTENTION_RULE] = {
        name: sum(
            (_episode_reward(e.terms, kept) for e in runs if answerable[e.case_id]),
            Fraction(0),
        )
        / len(runs)
        for name, runs in episodes.items()
    }
    return variants


def caught_up(full: Mapping[str, Fraction], ablated: Mapping[str, Fraction]) -> list[tuple[str, str]]:
    """Pairs ``(worse, better)`` the full score orders strictly that the ablated score ties or reverses."""
    return [
        (worse, better)
        for better in full
        for worse in full
        if full[better] > full[worse] and ablated[worse] >= ablated[better]
    ]


def earns_its_place(variants: Mapping[str, Mapping[str, Fraction]]) -> dict[str, list[tuple[str, str]]]:
    """For each ablated variant, the pairs it ties or reverses (empty: the term changed no ordering)."""
    full = variants["full"]
    return {label: caught_up(full, means) for label, means in variants.items() if label != "full"}


def describe(pairs: Iterable[tuple[str, str]], limit: int = 3) -> str:
    """A short phrase for a table cell: ``worse >= better`` for the first few pairs."""
    pairs = list(pairs)
    if not pairs:
        return "none"
    shown = "; ".join(f"{worse} ≥ {better}" for worse, better in pairs[:limit])
    return shown + (f" (+{len(pairs) - limit} more)" if len(pairs) > limit else "")


def answerability(cases: Iterable[Any]) -> dict[str, bool]:
    return {case.case_id: bool(case.answerable) for case in cases}


__all__ = ["NO_ABSTENTION_RULE", "ablated_means", "answerability", "caught_up", "describe", "earns_its_place"]
