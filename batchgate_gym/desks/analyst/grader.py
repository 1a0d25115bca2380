"""The score: four weighted terms and three metrics, from the case, the log and re-runs of the evidence.

Nothing the agent says is trusted but its final answer: the evidence it cites is
run again by the grader, on a store of the same snapshot and on counterfactual
copies of the dataset (:mod:`.counterfactual`).

    reward = 0.45 correct + 0.10 partial_credit + 0.25 evidence_reproduces + 0.20 abstention_correct

* ``correct``: the answer matches the reference within the case's tolerance (a
  ranking or list in the right order; a table's rows all there and none extra; a
  report's every metric id with its value, none missing or invented);
* ``partial_credit``: the share of report metrics or table rows right, the share of
  ranking positions right, or the overlap of a list (intersection over union);
* ``evidence_reproduces``: for a correct answer only: every cited query runs again
  without error (the stores refuse functions whose value changes from run to run,
  ``random()``, ``now()`` ...), the tables they read (as each store records it)
  cover the tables the question depends on, their results show the answer's fields
  with their association kept, and the same queries re-run on each counterfactual
  copy show that copy's own reference the same way and in the same place (the same
  evidence item, column, and row: a row labelled by the question's parameters by its
  label, any other by its position; a table as the first rows of one result),
  so a spray of values around the answer, which shows each dataset's answer somewhere,
  shows none. Shown means: a number among
  the cells of a row whose text cells, if any, are the question's own parameters;
  a ranking or list as a column, in order; a table's rows as the first rows of one
  result, each once, in any order; each report
  value under its metric id (a column of that name, or a row whose one text cell
  is the id beside the value);
* ``abstention_correct``: the decision was not wrong: a right answer, a decline of
  a question the data cannot answer, or a decline of one it can.

So, for a question the data can answer, a wrong answer earns at most its partial
credit (under 0.10), an honest decline 0.20, a right answer 0.75 and with evidence
that computes it 1: wrong < decline < right. A correct decline of a question the
data cannot answer scores every term 1; an answer to it scores every term 0. No
answer by the turn limit scores 0. Metrics: ``fully_supported`` (every term 1),
``wrong_answers`` (an answerable question answered wrongly), ``infra_errors`` (a
store failed on its own while the evidence was re-run, or during the episode). An
episode whose evidence could not be re-run for an infrastructure error scores 0 on
every term and counts there, never among the wrong answers.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from batchgate_gym.kernel.grader_checks import GraderChecks
from batchgate_gym.kernel.ledger import LogEntry, canonical_json, entry_parts
from batchgate_gym.kernel.scoring import WeightedScore, checked_weights

from . import counterfactual
from .cases import AnalystCase
from .engines.base import Store, StoreFailure, StoreRefused, StoreResult
from .tools import FINISHING
from .world import INFRA, parse_answer, parse_evidence, visible_tables

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
CHECKS = GraderChecks(
    "analyst",
    {
        "answer-matches": "an answer is right only if it matches the reference within the tolerance",
        "answer-complete": "an answer of several parts is right only with every part there and none extra",
        "unanswerable-answered": "an answer to a question the data cannot answer scores 0",
        "answerable-declined": "a decline of a question the data can answer earns the abstention term only",
        "evidence-cited": "a right answer earns evidence only if it cites queries",
        "evidence-reads-dependencies": "the cited queries read every table the question depends on",
        "evidence-shows-answer": "the cited queries' results show the answer's fields, each in one place",
        "evidence-on-copies": "re-run on each counterfactual copy, they show its own reference in that place",
    },
)
"""The grader's rules, named; a test or ``batchgate audit`` can switch one off (kernel.grader_checks)."""


@dataclass(frozen=True, slots=True)
class AnalystScore(WeightedScore):
    """The four terms (weighted by :data:`WEIGHTS` into ``reward``) and three metrics."""

    WEIGHTS: ClassVar[Mapping[str, Fraction]] = WEIGHTS
    REWARD_DIGITS: ClassVar[int | None] = 4

    correct: Fraction
    partial_credit: Fraction
    evidence_reproduces: Fraction
    abstention_correct: Fraction
    fully_supported: int
    wrong_answers: int
    infra_errors: int


def _number(value: Any) -> bool:
    """A finite JSON number (an integer of any size is one; NaN and the infinities are not)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def same(value: Any, expected: Any, tolerance: float) -> bool:
    """Numbers within ``tolerance``; anything else equal (any JSON value, however large, is compared)."""
    if _number(value) and _number(expected):
        try:
            return bool(abs(value - expected) <= tolerance + _EPSILON)
        except OverflowError:  # an integer past any float: no reference is that far out
            return False
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
    if not CHECKS.on("answer-matches"):
        return ONE, ONE
    correct, partial = _judged(case, answer)
    if correct != 1 and not CHECKS.on("answer-complete") and _parts_right(case, answer):
        return ONE, partial
    return correct, partial


def _parts_right(case: AnalystCase, answer: Any) -> bool:
    """Whether each part of an answer of several parts is right (some may be missing)."""
    expected, kind, tol = case.expected, case.answer_type, case.tolerance
    if kind == "report" and isinstance(answer, dict) and answer:
        return all(m in case.metrics and same(v, expected[m], case.metrics[m]) for m, v in answer.items())
    if kind == "table" and isinstance(answer, list) and answer:
        return _matched_rows(answer, expected, tol) == len(answer)
    if kind in ("ranking", "list") and isinstance(answer, list) and answer:
        return all(isinstance(a, str) for a in answer) and answer == [e for e in expected if e in answer]
    return False


def _judged(case: AnalystCase, answer: Any) -> tuple[Fraction, Fraction]:
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


def _text(cell: Any) -> bool:
    return isinstance(cell, str)


# Where a field of the answer is shown: the evidence item, then how (a column; a number in a
# row; a metric's column or label row), the row by its key and the column by its index. The
# evidence computes a field when one place shows it on the case's data and that copy's own
# reference on every counterfactual copy: a spray of values around the answer (a grid of
# numbers, or of candidate table rows, reading the right tables) shows the answer somewhere on
# each dataset, but never in the same place.
Place = tuple[Any, ...]
Places = frozenset[Place]


def _row_keys(rows: Sequence[Sequence[Any]]) -> list[tuple[tuple[str, ...], int]]:
    """Each row's key: its text cells (lower case) and how many earlier rows had the same ones.

    A row labelled by the question's parameter keeps its key whatever other groups a copy has;
    an unlabelled row is known by its position among the unlabelled rows."""
    seen: Counter[tuple[str, ...]] = Counter()
    keys = []
    for row in rows:
        texts = tuple(c.lower() for c in row if _text(c))
        keys.append((texts, seen[texts]))
        seen[texts] += 1
    return keys


def _column_places(results: Sequence[StoreResult], values: Sequence[Any]) -> Places:
    return frozenset(
        (item, "column", j)
        for item, result in enumerate(results)
        for j in range(len(result.columns))
        if [row[j] for row in result.rows][: len(values)] == list(values)
    )


def _rows_shown(results: Sequence[StoreResult], rows: Sequence[Any], tol: float) -> Places:
    """A table's rows shown as the first rows of one result, each once, in any order; its place
    is that result (a table's rows are its own labels and differ from dataset to dataset, so a
    spray of candidate rows shows them, but not first)."""
    if not all(isinstance(row, list) for row in rows):
        return frozenset()
    width = len(rows[0]) if rows else 0
    return frozenset(
        ("rows", item)
        for item, result in enumerate(results)
        if len(result.rows) >= len(rows)
        and _matched_rows(rows, [list(r[:width]) for r in result.rows[: len(rows)]], tol) == len(rows)
    )


def _number_places(results: Sequence[StoreResult], value: Any, tol: float, labels: set[str]) -> Places:
    """Cells equal to ``value`` in rows whose text cells, if any, all name the question's parameters."""
    found: set[Place] = set()
    for item, result in enumerate(results):
        for row, key in zip(result.rows, _row_keys(result.rows), strict=True):
            if set(key[0]) <= labels:
                found.update(
                    (item, "cell", key, j) for j, c in enumerate(row) if not _text(c) and same(c, value, tol)
                )
    return frozenset(found)


def _metric_places(results: Sequence[StoreResult], metric: str, value: Any, tol: float) -> Places:
    """``value`` under its metric id: in a column of that name, or beside that id as the row's one text cell."""
    wanted = metric.lower()
    found: set[Place] = set()
    for item, result in enumerate(results):
        names = [c.lower() for c in result.columns]
        for row, key in zip(result.rows, _row_keys(result.rows), strict=True):
            if wanted in names and same(row[names.index(wanted)], value, tol):
                found.add((item, "metric", key, names.index(wanted)))
            if list(key[0]) == [wanted]:
                found.update(
                    (item, "labelled", key, j)
                    for j, c in enumerate(row)
                    if not _text(c) and same(c, value, tol)
                )
    return frozenset(found)


def _parameter_labels(case: AnalystCase) -> set[str]:
    return {str(v).lower() for v in case.params.values()}


def places(case: AnalystCase, answer: Any, results: Sequence[StoreResult]) -> tuple[Places, ...]:
    """Where the results show each of the answer's fields with its association kept: one set of
    places per field (a report's metrics in sorted order), empty where the field is not shown."""
    kind, tol = case.answer_type, case.tolerance
    if kind == "number":
        shown = (
            _number_places(results, answer, tol, _parameter_labels(case)) if _number(answer) else frozenset()
        )
        return (shown,)
    if kind in ("ranking", "list"):
        return (_column_places(results, answer) if isinstance(answer, list) else frozenset(),)
    if kind == "table":
        return (_rows_shown(results, answer, tol) if isinstance(answer, list) else frozenset(),)
    if not isinstance(answer, dict) or not answer:
        return (frozenset(),)
    return tuple(_metric_places(results, m, answer[m], case.metrics.get(m, 0.0)) for m in sorted(answer))


def shows(case: AnalystCase, answer: Any, results: Sequence[StoreResult]) -> bool:
    """Whether the results show the answer's fields, each with its association kept."""
    return all(places(case, answer, results))


class InfraError(Exception):
    """A store failed on its own while the evidence was re-run."""


def rerun(evidence: Sequence[Mapping[str, str]], store: Callable[[str], Store]) -> list[StoreResult] | None:
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


# Verdicts on the copies, per case, evidence and places: the queries are deterministic (the rest
# is refused above) and the copies a function of the case, so the same evidence gets the same
# verdict; kept so that policies citing the same queries do not re-run them. No failure is kept.
_VERDICTS: dict[tuple[str, str, tuple[Places, ...], tuple[str, ...]], bool] = {}
_VERDICTS_KEPT = 4096


def _holds_on_copies(
    case: AnalystCase, answer: Any, evidence: Sequence[Mapping[str, str]], shown: tuple[Places, ...]
) -> bool:
    """The cited queries, re-run on each counterfactual copy, show that copy's own reference in a
    place where they showed the answer on the case's data (one place per field, on every copy)."""
    fields = tuple(sorted(answer)) if isinstance(answer, dict) else ()
    key = (case.digest, canonical_json(list(evidence)), shown, fields)
    if key not in _VERDICTS:
        if len(_VERDICTS) >= _VERDICTS_KEPT:
            _VERDICTS.pop(next(iter(_VERDICTS)))
        _VERDICTS[key] = _run_on_copies(case, fields, evidence, shown)
    return _VERDICTS[key]


def _run_on_copies(
    case: AnalystCase,
    fields: tuple[str, ...],
    evidence: Sequence[Mapping[str, str]],
    shown: tuple[Places, ...],
) -> bool:
    visible = {name: visible_tables(case, name) for name in case.stores}
    common = list(shown)
    try:
        for copy in counterfactual.copies(case):
            with counterfactual.stores_of(copy, visible) as store:
                results = rerun(evidence, store)
                if results is None:
                    return False
                found = places(case, _fields_of(copy.expected, fields), results)
                common = [mine & theirs for mine, theirs in zip(common, found, strict=True)]
                if not all(common):
                    return False
    except StoreFailure as exc:  # a copy's store could not start
        raise InfraError(str(exc)) from None
    return True


def _fields_of(reference: Any, fields: tuple[str, ...]) -> Any:
    """A report's reference on the answer's fields (all of them, unless a grader check is off)."""
    return {m: reference.get(m) for m in fields} if fields else reference


def evidence_term(
    case: AnalystCase, answer: Any, evidence: Sequence[Mapping[str, str]], store: Callable[[str], Store]
) -> Fraction:
    """1 if the evidence computes the (correct) answer: on the case's data and, in the same
    places, on every copy."""
    if not evidence:
        return ZERO if CHECKS.on("evidence-cited") else ONE
    results = rerun(evidence, store)
    if results is None:
        return ZERO
    read = {f"{item['store']}.{t}" for item, r in zip(evidence, results, strict=True) for t in r.tables_read}
    if not set(case.depends) <= read and CHECKS.on("evidence-reads-dependencies"):
        return ZERO
    if not CHECKS.on("evidence-shows-answer"):
        return ONE
    shown = places(case, answer, results)
    if not all(shown):
        return ZERO
    if not CHECKS.on("evidence-on-copies"):
        return ONE
    return ONE if _holds_on_copies(case, answer, evidence, shown) else ZERO


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
        if case.answerable and CHECKS.on("answerable-declined"):  # honest, and worth less than a right answer
            return _score((ZERO, ZERO, ZERO, ONE), infra=infra)
        return _score((ONE, ONE, ONE, ONE), infra=infra)
    if not case.answerable:
        return _score(
            (ZERO, ZERO, ZERO, ZERO) if CHECKS.on("unanswerable-answered") else (ONE, ONE, ONE, ONE),
            infra=infra,
        )
    answer = parse_answer(args["answer"])
    correct, partial = judge(case, answer)
    if correct != 1:  # a wrong answer keeps its partial credit only: less than a decline
        return _score((ZERO, partial, ZERO, ZERO), wrong=1, infra=infra)
    try:
        evidence = evidence_term(case, answer, parse_evidence(args["evidence"], case.stores), store)
    except InfraError:
        return _score((ZERO, ZERO, ZERO, ZERO), infra=infra + 1)
    return _score((ONE, ONE, evidence, ONE), infra=infra)


__all__ = [
    "CHECKS",
    "METRICS",
    "TERMS",
    "WEIGHTS",
    "AnalystScore",
    "InfraError",
    "grade",
    "judge",
    "places",
    "same",
    "shows",
]
