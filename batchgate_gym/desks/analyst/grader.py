"""The score: four weighted terms and three metrics, from the case, the log and a re-run of the evidence.

Nothing the agent says is trusted but its final answer: the evidence it cites is
run again, on a store of the same snapshot, by the grader.

    reward = 0.45 correct + 0.10 partial_credit + 0.25 evidence_reproduces + 0.20 abstention_correct

* ``correct``: the answer matches the reference within the case's tolerance (a
  ranking or list in the right order; a table's rows all there and none extra; a
  report's every metric id with its value, none missing or invented);
* ``partial_credit``: the share of report metrics or table rows right, the share of
  ranking positions right, or the overlap of a list (intersection over union);
* ``evidence_reproduces``: every cited query runs again without error, the tables
  they read (as each store records it) cover the tables the question depends on,
  and their results show the answer's fields with their association kept: a number
  among the cells; a ranking or list as a column, in order; each table row as a row;
  each report value under its metric id (a column of that name, or a row that
  carries the id as a label beside the value);
* ``abstention_correct``: answered when the data can answer, declined when not.

A correct decline scores every term 1; an answer to a question that must be
declined, or a decline of one that can be answered, scores every term 0. No answer
by the turn limit scores 0. Metrics: ``fully_supported`` (every term 1),
``wrong_answers`` (an answerable question answered wrongly), ``infra_errors`` (a
store failed on its own while the evidence was re-run, or during the episode). An
episode whose evidence could not be re-run for an infrastructure error scores 0 on
every term and counts there, never among the wrong answers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from batchgate_gym.kernel.ledger import LogEntry, entry_parts
from batchgate_gym.kernel.scoring import WeightedScore, checked_weights

from .cases import AnalystCase
from .stores import Store, StoreFailure, StoreRefused, StoreResult
from .tools import FINISHING
from .world import INFRA, parse_answer, parse_evidence

WEIGHTS: Mapping[str, Fraction] = checked_weights(
    {
        "correct": Fraction(45, 100),
        "partial_credit": Fraction(10, 100),
        "evidence_reproduces": Fraction(25, 100),
        "abstention_correct": Fraction(20, 100),
    }
)
TERMS = tuple(WEIGHTS)
METRICS = ("fully_supported", "wrong_answers", "infra_errors")
_EPSILON = 1e-9
ONE, ZERO = Fraction(1), Fraction(0)


@dataclass(frozen=True, slots=True)
class AnalystScore(WeightedScore):
    """The four terms (weighted by :data:`WEIGHTS` into ``reward``) and three metrics."""

    WEIGHTS: ClassVar[Mapping[str, Fraction]] = WEIGHTS

    correct: Fraction
    partial_credit: Fraction
    evidence_reproduces: Fraction
    abstention_correct: Fraction
    fully_supported: int
    wrong_answers: int
    infra_errors: int

    def as_dict(self) -> dict[str, Any]:
        out = WeightedScore.as_dict(self)
        out["reward"] = round(float(self.reward), 4)
        return out


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def same(value: Any, expected: Any, tolerance: float) -> bool:
    """Numbers within ``tolerance``; anything else equal."""
    if _number(value) and _number(expected):
        return bool(abs(value - expected) <= tolerance + _EPSILON)
    return not _number(value) and not _number(expected) and bool(value == expected)


def _row_same(row: Any, expected: Sequence[Any], tolerance: float) -> bool:
    return (
        isinstance(row, (list, tuple))
        and len(row) == len(expected)
        and all(same(a, e, tolerance) for a, e in zip(row, expected, strict=True))
    )


def _matched_rows(answer: Sequence[Any], expected: Sequence[Any], tolerance: float) -> int:
    left = list(expected)
    hits = 0
    for row in answer:
        for index, want in enumerate(left):
            if _row_same(row, want, tolerance):
                hits += 1
                del left[index]
                break
    return hits


def _share(hits: int, size: int) -> Fraction:
    return Fraction(hits, size) if size else ONE


def judge(case: AnalystCase, answer: Any) -> tuple[Fraction, Fraction]:
    """``(correct, partial_credit)`` of an answer to an answerable case."""
    expected, kind, tol = case.expected, case.answer_type, case.tolerance
    if kind == "number":
        ok = same(answer, expected, tol)
        return (ONE, ONE) if ok else (ZERO, ZERO)
    if kind in ("ranking", "list"):
        if not isinstance(answer, list) or not all(isinstance(a, str) for a in answer):
            return ZERO, ZERO
        if kind == "ranking":
            hits = sum(1 for a, e in zip(answer, expected, strict=False) if a == e)
            partial = _share(hits, max(len(answer), len(expected)))
        else:
            partial = _share(len(set(answer) & set(expected)), len(set(answer) | set(expected)))
        return (ONE if list(answer) == list(expected) else ZERO), partial
    if kind == "table":
        if not isinstance(answer, list):
            return ZERO, ZERO
        hits = _matched_rows(answer, expected, tol)
        full = hits == len(expected) == len(answer)
        return (ONE if full else ZERO), _share(hits, max(len(answer), len(expected)))
    if not isinstance(answer, dict):
        return ZERO, ZERO
    right = sum(1 for m, tol_m in case.metrics.items() if m in answer and same(answer[m], expected[m], tol_m))
    full = right == len(case.metrics) and set(answer) == set(case.metrics)
    return (ONE if full else ZERO), _share(right, max(len(case.metrics), len(answer)))


# -- evidence ---------------------------------------------------------------------------------


def _cells(results: Iterable[StoreResult]) -> Iterable[Any]:
    for result in results:
        for row in result.rows:
            yield from row


def _shows_column(results: Sequence[StoreResult], values: Sequence[Any]) -> bool:
    for result in results:
        for j in range(len(result.columns)):
            column = [row[j] for row in result.rows]
            if column[: len(values)] == list(values):
                return True
    return False


def _shows_row(results: Sequence[StoreResult], row: Sequence[Any], tol: float) -> bool:
    return any(_row_same(list(r[: len(row)]), row, tol) for result in results for r in result.rows)


def _shows_metric(results: Sequence[StoreResult], metric: str, value: Any, tol: float) -> bool:
    for result in results:
        names = [c.lower() for c in result.columns]
        for row in result.rows:
            if metric.lower() in names and same(row[names.index(metric.lower())], value, tol):
                return True
            labelled = any(isinstance(c, str) and c.lower() == metric.lower() for c in row)
            if labelled and any(same(c, value, tol) for c in row if not isinstance(c, str)):
                return True
    return False


def shows(case: AnalystCase, answer: Any, results: Sequence[StoreResult]) -> bool:
    """Whether the results show the answer's fields, each with its association kept."""
    kind, tol = case.answer_type, case.tolerance
    if kind == "number":
        return _number(answer) and any(same(c, answer, tol) for c in _cells(results))
    if kind in ("ranking", "list"):
        return isinstance(answer, list) and _shows_column(results, answer)
    if kind == "table":
        return isinstance(answer, list) and all(
            isinstance(row, list) and _shows_row(results, row, tol) for row in answer
        )
    return isinstance(answer, dict) and all(
        _shows_metric(results, m, v, case.metrics.get(m, 0.0)) for m, v in answer.items()
    )


class InfraError(Exception):
    """A store failed on its own while the evidence was re-run."""


def rerun(
    case: AnalystCase, evidence: Sequence[Mapping[str, str]], store: Callable[[str], Store]
) -> list[StoreResult] | None:
    """Every cited query run again; ``None`` if one is refused; :class:`InfraError` if a store fails."""
    results = []
    for item in evidence:
        try:
            results.append(store(item["store"]).run(item["query"]))
        except StoreRefused:
            return None
        except StoreFailure as exc:
            raise InfraError(str(exc)) from None
    return results


def evidence_term(
    case: AnalystCase, answer: Any, evidence: Sequence[Mapping[str, str]], store: Callable[[str], Store]
) -> Fraction:
    if not evidence:
        return ZERO
    results = rerun(case, evidence, store)
    if results is None:
        return ZERO
    read = {f"{item['store']}.{t}" for item, r in zip(evidence, results, strict=True) for t in r.tables_read}
    if not set(case.depends) <= read:
        return ZERO
    return ONE if shows(case, answer, results) else ZERO


# -- the whole score ----------------------------------------------------------------------------


def _ending(entries: Iterable[LogEntry | Mapping[str, Any]]) -> tuple[str, Mapping[str, Any]] | None:
    for entry in entries:
        action, args, executed = entry_parts(entry)
        if executed and action in FINISHING:
            return action, args
    return None


def _live_infra(entries: Iterable[LogEntry | Mapping[str, Any]]) -> int:
    count = 0
    for entry in entries:
        note = entry.note if isinstance(entry, LogEntry) else entry.get("note", "")
        if isinstance(note, str) and note.startswith(INFRA):
            count += 1
    return count


def _score(
    terms: tuple[Fraction, Fraction, Fraction, Fraction], wrong: int = 0, infra: int = 0
) -> AnalystScore:
    full = int(all(t == 1 for t in terms))
    return AnalystScore(*terms, fully_supported=full, wrong_answers=wrong, infra_errors=infra)


def grade(
    case: AnalystCase, entries: Sequence[LogEntry | Mapping[str, Any]], store: Callable[[str], Store]
) -> AnalystScore:
    """The score of an episode from its log; cited queries are re-run through ``store(name)``."""
    infra = _live_infra(entries)
    ending = _ending(entries)
    if ending is None:
        return _score((ZERO, ZERO, ZERO, ZERO), infra=infra)
    action, args = ending
    if action == "decline":
        flag = ZERO if case.answerable else ONE
        return _score((flag, flag, flag, flag), infra=infra)
    if not case.answerable:
        return _score((ZERO, ZERO, ZERO, ZERO), infra=infra)
    answer = parse_answer(args["answer"])
    correct, partial = judge(case, answer)
    try:
        evidence = evidence_term(case, answer, parse_evidence(args["evidence"], case.stores), store)
    except InfraError:
        return _score((ZERO, ZERO, ZERO, ZERO), infra=infra + 1)
    return _score((correct, partial, evidence, ONE), wrong=int(correct != 1), infra=infra)


__all__ = ["METRICS", "TERMS", "WEIGHTS", "AnalystScore", "InfraError", "grade", "judge", "same", "shows"]
