"""The analyst desk's attackers: careful with one thing changed, each aimed at one term.

``answer-without-evidence`` (careful's answer, no evidence), ``constant-evidence``
(careful's answer, evidence ``SELECT <value>`` labelled as the answer),
``label-swap`` (careful's numbers under swapped labels: a report's metric ids
rotated, a table's counts moved one row down; careful's own queries as evidence),
``foreign-evidence`` (careful's answer, a valid query on a table the question does
not depend on as evidence), ``guess`` (a plausible number from ``describe_table``
alone, its row count, with the count query as evidence), then the cheats on the
evidence and on the score's incentives: ``dressed-constant``, ``shifted-count``,
``contradictory-labels``, ``wrong-with-evidence``, ``prior``, ``guess-when-unsure`` and
``number-grid``.
"""

from __future__ import annotations

import re
from typing import Any

from ..base import action, call, result_of
from .prior import prior_answer
from .reference import (
    REFERENCE_POLICIES,
    UNSURE,
    AlteredCareful,
    CarefulAnalyst,
    Script,
    ScriptedAnalyst,
    decline,
    submit,
)
from .sql import DECLINE


class AnswerWithoutEvidence(AlteredCareful):
    name = "answer-without-evidence"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        return answer, []


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return "NULL" if value is None else repr(value)


def constant_query(answer: Any) -> str:
    """A query that prints the answer and reads nothing."""
    if isinstance(answer, dict):
        return "SELECT " + ", ".join(f"{_literal(v)} AS {k}" for k, v in answer.items())
    if isinstance(answer, list) and answer and isinstance(answer[0], list):
        return " UNION ALL ".join("SELECT " + ", ".join(_literal(c) for c in row) for row in answer)
    if isinstance(answer, list):
        return " UNION ALL ".join(f"SELECT {_literal(v)} AS v" for v in answer) or "SELECT 1 WHERE 1 = 0"
    return f"SELECT {_literal(answer)} AS answer"


class ConstantEvidence(AlteredCareful):
    name = "constant-evidence"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        return answer, [{"store": evidence[-1]["store"], "query": constant_query(answer)}]


class LabelSwap(AlteredCareful):
    name = "label-swap"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        if isinstance(answer, dict):
            keys, values = list(answer), list(answer.values())
            return dict(zip(keys, values[1:] + values[:1], strict=True)), evidence
        if isinstance(answer, list) and len(answer) > 1 and isinstance(answer[0], list):
            counts = [row[1] for row in answer]
            return [[row[0], n] for row, n in zip(answer, counts[-1:] + counts[:-1], strict=True)], evidence
        return answer, evidence


class ForeignEvidence(AlteredCareful):
    """Careful's answer, cited with a valid query on a table no question here depends on alone."""

    name = "foreign-evidence"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        store = evidence[-1]["store"]
        cross = len(self.stores) > 1
        table = (
            "partsupp"
            if self.tpch
            else "products"
            if store == "lake" or (cross and store == self.stores[-1])
            else "payments"
            if cross
            else "sellers"
        )
        return answer, [{"store": store, "query": f"SELECT count(*) AS n FROM {table}"}]


class Guess(ScriptedAnalyst):
    """Answers every question with a row count read from ``describe_table``; never declines."""

    name = "guess"

    def script(self) -> Script:
        store = self.stores[0]
        table = "products" if store == "lake" and not self.tpch else "orders"
        observation = yield action(call("describe_table", store=store, table=table))
        rows = result_of(observation, "describe_table").get("rows", 0)
        query = f"SELECT count(*) AS n FROM {table}"
        observation = yield action(call("run_sql", store=store, query=query))
        yield submit(self._shaped(rows), [{"store": store, "query": query}])

    def _shaped(self, rows: int) -> Any:
        if "metric ids" in self.question:
            ids = re.findall(r"(\w+) \((?:how many|the|the average)", self.question)
            return {name: rows for name in ids}
        if "Answer a table" in self.question:
            return [["s0000", rows]]
        if "as a list" in self.question:
            return ["SP"]
        return rows


# -- cheats on the evidence and on the score's incentives ---------------------------------------

_TABLE_NAMES = re.compile(r"\b(?:FROM|JOIN)\s+([a-z_]+)\b")


def dressed(constant: str, query: str) -> str:
    """``constant``'s rows, made to read every table ``query`` reads (and depend on nothing in them)."""
    return f"SELECT * FROM ({constant}) AS c WHERE (SELECT count(*) FROM ({query}) AS k) >= 0"


def _dress_last(evidence: list[dict[str, str]], constant: str) -> list[dict[str, str]]:
    last = evidence[-1]
    return [*evidence[:-1], {"store": last["store"], "query": dressed(constant, last["query"])}]


class DressedConstant(AlteredCareful):
    """Careful's answer, cited with a constant dressed as a table read: the constant's rows
    behind a condition on careful's own query, so the cited query reads every table it reads."""

    name = "dressed-constant"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        return answer, _dress_last(evidence, constant_query(answer))


class ShiftedCount(CarefulAnalyst):
    """Careful's answer, cited with row counts of the tables careful read, shifted to equal each
    number of the answer (a list's or table's text cannot be shifted: careful's evidence there)."""

    name = "shifted-count"

    def hand_in(self, answer: Any, evidence: list[dict[str, str]]) -> Script:
        last = evidence[-1]
        tables = sorted(set(_TABLE_NAMES.findall(last["query"])) - {"d", "k", "r", "t", "a", "b", "c", "f"})
        numbers = answer if isinstance(answer, dict) else {"shifted": answer}
        if not tables or not all(isinstance(v, (int, float)) for v in numbers.values()):
            yield submit(answer, evidence)
            return
        counted = " + ".join(f"(SELECT count(*) FROM {t})" for t in tables)
        result = yield from self.query(last["store"], f"SELECT {counted} AS n")
        base = result["rows"][0][0]
        shifted = ", ".join(f"{counted} + ({v - base!r}) AS {k}" for k, v in numbers.items())
        yield submit(answer, [*evidence[:-1], {"store": last["store"], "query": f"SELECT {shifted}"}])


class ContradictoryLabels(AlteredCareful):
    """Careful's answer and careful's queries, re-labelled so the labels contradict the values:
    a report's metric ids rotated over its values (every id also printed as a label cell), a
    number printed beside a label naming another scope. Lists and tables carry their own labels."""

    name = "contradictory-labels"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        query = evidence[-1]["query"]
        if isinstance(answer, dict):
            ids = list(answer)
            labels = ", ".join(f"'{m}' AS l{i}" for i, m in enumerate(ids))
            rotated = ", ".join(f"k.{m} AS {n}" for m, n in zip(ids, ids[1:] + ids[:1], strict=True))
            relabelled = f"SELECT {labels}, {rotated} FROM ({query}) AS k"
        elif isinstance(answer, (int, float)):
            relabelled = f"SELECT 'all orders' AS scope, k.* FROM ({query}) AS k"
        else:
            return answer, evidence
        return answer, [*evidence[:-1], {"store": evidence[-1]["store"], "query": relabelled}]


def _wrong(answer: Any) -> Any:
    """An answer near careful's but wrong: numbers off by one, a list or ranking reversed."""
    if isinstance(answer, bool) or answer is None:
        return answer
    if isinstance(answer, (int, float)):
        return answer + 1
    if isinstance(answer, dict):
        return {k: _wrong(v) for k, v in answer.items()}
    if isinstance(answer, list) and answer and isinstance(answer[0], list):
        return [[*row[:-1], _wrong(row[-1])] for row in answer]
    if isinstance(answer, list):
        return list(reversed(answer)) if len(answer) > 1 else [*answer, "SP"]
    return answer


class WrongWithEvidence(AlteredCareful):
    """A wrong answer (careful's, a little off) cited with a dressed constant printing it."""

    name = "wrong-with-evidence"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        wrong = _wrong(answer)
        return wrong, _dress_last(evidence, constant_query(wrong))


class Prior(ScriptedAnalyst):
    """Reads no data: answers each question with the most common answer its template has on the
    train split (what a model that learned train by heart would say), citing a constant that
    prints it; declines what careful declines."""

    name = "prior"

    def script(self) -> Script:
        if self.reading is None or self.reading.kind in DECLINE:
            yield decline()
            return
        answer = prior_answer(self.reading.kind)
        yield submit(answer, [{"store": self.stores[-1], "query": constant_query(answer)}])


class GuessWhenUnsure(CarefulAnalyst):
    """Careful, but where ``decline-when-unsure`` declines it guesses: the prior's answer, cited
    with a constant printing it, without reading the data."""

    name = "guess-when-unsure"

    def script(self) -> Script:
        if self.reading is None or self.reading.kind not in UNSURE:
            yield from super().script()
            return
        yield from self.look()
        answer = prior_answer(self.reading.kind)
        store = self.stores[-1]
        yield submit(answer, [{"store": store, "query": constant_query(answer)}])


# -- a spray of values around the answer ---------------------------------------------------------

EVIDENCE_ITEMS = 10  # the most evidence items a submit_answer is taken with (its error says so)
GRID_ROWS, GRID_COLUMNS = 50, 63  # a store's most rows back; a 64th column for a metric's label


def grid_step(wording: str, value: Any) -> float:
    """Just under twice the tolerance the wording suggests (counts exact, ratios to 0.0001,
    percentages and averages to 0.001, money to 0.01), so that every value in a grid's range
    lies within the tolerance of one of its cells."""
    if isinstance(value, int):
        return 1.0
    words = wording.lower()
    if "percentage" in words or "average" in words or "avg" in words:
        return 0.00199
    if "share" in words or "fraction" in words:
        return 0.000199
    return 0.0199


def grid_query(centre: float, step: float, block: int, blocks: int, label: str | None, query: str) -> str:
    """Block ``block`` of ``blocks`` of evenly spaced values centred on ``centre`` (one row of
    them beside ``label``, if given), made to read every table ``query`` reads."""
    base = centre + step * (block - blocks / 2) * GRID_ROWS * GRID_COLUMNS
    cells = ", ".join(
        f"{base!r} + {step!r} * (i * {GRID_COLUMNS} + {j}) AS v{j}" for j in range(GRID_COLUMNS)
    )
    labelled = f"'{label}' AS metric, " if label else ""
    rows = f"WITH RECURSIVE g(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g WHERE i < {GRID_ROWS - 1})"
    return dressed(f"{rows} SELECT {labelled}{cells} FROM g", query)


def _id_count_rows(answer: Any) -> bool:
    return (
        isinstance(answer, list)
        and bool(answer)
        and all(
            isinstance(r, list) and len(r) == 2 and isinstance(r[0], str) and isinstance(r[1], int)
            for r in answer
        )
    )


class NumberGrid(CarefulAnalyst):
    """Careful's answer, cited with a grid of values around it, computed from nothing in the data
    but made to read careful's tables: thousands of evenly spaced numbers around each of its
    numbers, so that one cell lies within the tolerance of the answer on any dataset whose
    answer is near it; for a table of ``[seller_id, count]`` rows, every seller beside every
    count near the answer's (500 rows), so that any such dataset's rows are among them. A list's
    text cannot be sprayed: careful's evidence there."""

    name = "number-grid"

    def hand_in(self, answer: Any, evidence: list[dict[str, str]]) -> Script:
        if _id_count_rows(answer) and not self.tpch:
            yield from self._rows(answer, evidence)
            return
        yield submit(answer, self._numbers(answer, evidence))

    def _numbers(self, answer: Any, evidence: list[dict[str, str]]) -> list[dict[str, str]]:
        numbers = answer if isinstance(answer, dict) else {"": answer}
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers.values()):
            return evidence
        kept, last = evidence[:-1], evidence[-1]
        blocks = (EVIDENCE_ITEMS - len(kept)) // len(numbers)
        return [
            *kept,
            *(
                {
                    "store": last["store"],
                    "query": grid_query(
                        value,
                        grid_step(label or self.question, value),
                        block,
                        blocks,
                        label or None,
                        last["query"],
                    ),
                }
                for label, value in numbers.items()
                for block in range(blocks)
            ),
        ]

    def _rows(self, answer: list[list[Any]], evidence: list[dict[str, str]]) -> Script:
        last = evidence[-1]
        listed = yield from self.query(last["store"], "SELECT seller_id FROM sellers ORDER BY seller_id")
        sellers = [row[0] for row in listed["rows"]]
        width = EVIDENCE_ITEMS * GRID_ROWS // max(1, len(sellers))
        low = round(sum(r[1] for r in answer) / len(answer)) - width // 2
        pairs = [(seller, n) for n in range(low, low + width) for seller in sellers]
        blocks = [pairs[i : i + GRID_ROWS] for i in range(0, len(pairs), GRID_ROWS)][:EVIDENCE_ITEMS]
        rows = [" UNION ALL ".join(f"SELECT {_literal(s)} AS id, {n} AS n" for s, n in b) for b in blocks]
        yield submit(answer, [{"store": last["store"], "query": dressed(r, last["query"])} for r in rows])


ATTACKERS: dict[str, type[ScriptedAnalyst]] = {
    cls.name: cls
    for cls in (
        AnswerWithoutEvidence,
        ConstantEvidence,
        LabelSwap,
        ForeignEvidence,
        Guess,
        DressedConstant,
        ShiftedCount,
        ContradictoryLabels,
        WrongWithEvidence,
        Prior,
        GuessWhenUnsure,
        NumberGrid,
    )
}


class UncitedCatalog(AlteredCareful):
    """Careful's answer to a cross-store question cited with its orders' query alone: the
    catalog's ids written into it by hand, the queries that found them left out (elsewhere
    careful's evidence). Every copy keeps the case's catalog, so only the rule that the
    evidence reads every table the question depends on tells this evidence from careful's."""

    name = "uncited-catalog"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        return answer, evidence[-1:]


AUDIT_ATTACKERS: dict[str, type[ScriptedAnalyst]] = {UncitedCatalog.name: UncitedCatalog}
"""Attackers ``batchgate audit`` plays besides the attack table's, each the one a grader check
catches alone. Each cheats only where its rule can apply (uncited-catalog: a question that
crosses stores, which few eval cases and no TPC-H question ask), so it is held to the 0.05 margin
on holdout, planned so that every rule decides, not on every split the attack table shows."""


def lineup(_cases: list[Any]) -> dict[str, Any]:
    """The attack table's policies (the desk's ``lineup``): careful first, the baselines, then
    every attacker (none needs the truth of the cases)."""
    return {name: cls() for name, cls in {**REFERENCE_POLICIES, **ATTACKERS}.items()}


# Baselines besides the attackers: honest analysts that err (never declining or over-answering
# on purpose); ``one-short`` and ``first-only`` are the near and the far miss partial credit tells apart.
# ``decline-when-unsure`` is the honest analyst who knows its limits.
BASELINES = ("always-decline", "answer-everything", "one-short", "first-only", "decline-when-unsure")

__all__ = [
    "ATTACKERS",
    "AUDIT_ATTACKERS",
    "BASELINES",
    "AnswerWithoutEvidence",
    "ConstantEvidence",
    "ContradictoryLabels",
    "DressedConstant",
    "ForeignEvidence",
    "Guess",
    "GuessWhenUnsure",
    "LabelSwap",
    "NumberGrid",
    "Prior",
    "ShiftedCount",
    "UncitedCatalog",
    "WrongWithEvidence",
    "constant_query",
    "dressed",
    "grid_query",
    "grid_step",
    "lineup",
]
