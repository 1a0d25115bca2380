"""The analyst desk's reference agents and attackers, all speaking the text interface only.

* ``careful`` reads the question, lists each store's tables, runs the query that
  answers it (at level 4 it pages through the lake's catalog, then writes those ids
  into the sqlite query), and hands in the answer with exactly those queries as
  evidence; it declines the questions that need costs, causes or outside facts;
* ``always-decline`` declines everything; ``answer-everything`` is careful but never
  declines (it answers an unanswerable question with the shop's total revenue);
  ``one-short`` and ``first-only`` are careful with a near and a far miss on every
  answer of several parts (all but the last part; only the first);
* attackers, each aimed at one term: ``answer-without-evidence`` (careful's answer,
  no evidence), ``constant-evidence`` (careful's answer, evidence ``SELECT <value>``
  labelled as the answer), ``label-swap`` (careful's numbers under swapped labels:
  a report's metric ids rotated, a table's counts moved one row down; careful's
  own queries as evidence), ``foreign-evidence`` (careful's answer, a valid query
  on a table the question does not depend on as evidence) and ``guess`` (a
  plausible number from ``describe_table`` alone, its row count, with the count
  query as evidence).
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from typing import Any

from ..base import action, call, result_of
from .prior import prior_answer
from .sql import (
    CROSS,
    DECLINE,
    PAGE,
    Reading,
    answer_from,
    catalog_page,
    cross_query,
    read_question,
    solution,
)
from .tpch_sql import TPCH_TABLES_ANSWERS

Script = Generator[str, str, None]
_STORE_LINE = re.compile(r"^  (sqlite|duckdb|lake|files|chdb): ", re.MULTILINE)
_DIALECTS = {"sqlite": "sqlite", "chdb": "clickhouse"}
_QUESTION = re.compile(r"^Question: (.*)$", re.MULTILINE | re.DOTALL)
_TOTAL = "SELECT sum(price) AS revenue FROM order_items"
_TPCH_TOTAL = "SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue FROM lineitem"


def submit(answer: Any, evidence: list[dict[str, str]]) -> str:
    return action(call("submit_answer", answer=json.dumps(answer), evidence=json.dumps(evidence)))


def decline(reason: str = "the data holds no costs, causes or outside facts to answer this") -> str:
    return action(call("decline", reason=reason))


class StoreDown(Exception):
    """A store kept failing: the script has declined and stops."""


class ScriptedAnalyst:
    """A policy written as one generator over the episode (it declines when it runs dry)."""

    name = "analyst"

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        self.stores = _STORE_LINE.findall(observation.split("Tools:")[0])
        found = _QUESTION.search(observation)
        self.question = found.group(1).strip() if found else ""
        self.reading = read_question(self.question)
        self.tpch = self.question.startswith("TPC-H")
        self._script: Script | None = self.script()
        self._started = False

    def act(self, observation: str) -> str:
        if self._script is None:
            return decline("nothing more to do")
        try:
            if not self._started:
                self._started = True
                return next(self._script)
            return self._script.send(observation)
        except (StopIteration, StoreDown):
            self._script = None
            return decline("nothing more to do")

    def script(self) -> Script:
        raise NotImplementedError
        yield ""

    # -- careful's work, shared by the attackers ------------------------------------------
    def solve(self, reading: Reading) -> Generator[str, str, tuple[Any, list[dict[str, str]]]]:
        """Run the queries that answer ``reading``; return (answer, the queries as evidence)."""
        if reading.kind in CROSS:
            return (yield from self._solve_cross(reading))
        store = self.stores[0]
        query = solution(reading.kind, reading.params, _DIALECTS.get(store, "duckdb"))
        result = yield from self.query(store, query)
        answer = answer_from(reading.kind, result["columns"], result["rows"])
        return answer, [{"store": store, "query": query}]

    def query(self, store: str, query: str) -> Generator[str, str, dict[str, Any]]:
        """One query's result; a store that fails twice ends the episode with a decline."""
        for _ in range(2):
            observation = yield action(call("run_sql", store=store, query=query))
            result = result_of(observation, "run_sql")
            if "error" not in result:
                return result
        yield decline(f"the {store} store failed: {result['error']}")
        raise StoreDown(store)

    def _solve_cross(self, reading: Reading) -> Generator[str, str, tuple[Any, list[dict[str, str]]]]:
        ids: list[str] = []
        evidence = []
        while True:
            query = catalog_page(reading.kind, reading.params, len(ids))
            rows = (yield from self.query("lake", query))["rows"]
            evidence.append({"store": "lake", "query": query})
            ids += [row[0] for row in rows]
            if len(rows) < PAGE:
                break
        query = cross_query(reading.kind, ids)
        result = yield from self.query("sqlite", query)
        evidence.append({"store": "sqlite", "query": query})
        return answer_from(reading.kind, result["columns"], result["rows"]), evidence

    def look(self) -> Generator[str, str, None]:
        yield action(*(call("list_tables", store=store) for store in self.stores))


class CarefulAnalyst(ScriptedAnalyst):
    """Looks, declines what it must, answers the rest with its queries as evidence; the
    attackers and near misses below are careful with :meth:`alter` changing the hand-in."""

    name = "careful"

    def script(self) -> Script:
        yield from self.look()
        if self.reading is None or self.reading.kind in DECLINE:
            yield decline()
            return
        answer, evidence = yield from self.solve(self.reading)
        yield from self.hand_in(answer, evidence)

    def hand_in(self, answer: Any, evidence: list[dict[str, str]]) -> Script:
        """The last step: careful submits what it found (an attacker may change it, or look again)."""
        yield submit(*self.alter(answer, evidence))

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        return answer, evidence


class AlwaysDecline(ScriptedAnalyst):
    name = "always-decline"

    def script(self) -> Script:
        yield decline()


class AnswerEverything(ScriptedAnalyst):
    """Careful's answers, and the shop's total revenue for what careful would decline."""

    name = "answer-everything"

    def script(self) -> Script:
        yield from self.look()
        if self.reading is None or self.reading.kind in DECLINE:
            store, total = self.stores[0], _TPCH_TOTAL if self.tpch else _TOTAL
            observation = yield action(call("run_sql", store=store, query=total))
            value = result_of(observation, "run_sql")["rows"][0][0]
            yield submit(value, [{"store": store, "query": total}])
            return
        answer, evidence = yield from self.solve(self.reading)
        yield submit(answer, evidence)


class _Altered(CarefulAnalyst):
    """Careful's work, then a changed hand-in (declines as careful does)."""

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        raise NotImplementedError


class AnswerWithoutEvidence(_Altered):
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


class ConstantEvidence(_Altered):
    name = "constant-evidence"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        return answer, [{"store": evidence[-1]["store"], "query": constant_query(answer)}]


class LabelSwap(_Altered):
    name = "label-swap"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        if isinstance(answer, dict):
            keys, values = list(answer), list(answer.values())
            return dict(zip(keys, values[1:] + values[:1], strict=True)), evidence
        if isinstance(answer, list) and len(answer) > 1 and isinstance(answer[0], list):
            counts = [row[1] for row in answer]
            return [[row[0], n] for row, n in zip(answer, counts[-1:] + counts[:-1], strict=True)], evidence
        return answer, evidence


def _parts(answer: Any) -> tuple[list[Any], Any] | None:
    """A multi-part answer as (its parts, a function rebuilding it), or None for a single value."""
    if isinstance(answer, dict) and len(answer) > 1:
        return list(answer.items()), dict
    if isinstance(answer, list) and len(answer) > 1:
        return list(answer), list
    return None


class OneShort(_Altered):
    """Careful's answer one part short: a report's last metric, a table's last row or a
    list's last item left out (a single value is left alone); careful's queries as evidence."""

    name = "one-short"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        parts = _parts(answer)
        return (answer if parts is None else parts[1](parts[0][:-1])), evidence


class FirstOnly(_Altered):
    """Only the first part of careful's answer (the headline metric, the top row or item);
    careful's queries as evidence. Beside ``one-short`` it is the far miss to that near miss."""

    name = "first-only"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        parts = _parts(answer)
        return (answer if parts is None else parts[1](parts[0][:1])), evidence


class ForeignEvidence(_Altered):
    """Careful's answer, cited with a valid query on a table no question here depends on alone."""

    name = "foreign-evidence"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        store = evidence[-1]["store"]
        table = (
            "partsupp"
            if self.tpch
            else "products"
            if store == "lake"
            else "sellers"
            if store != "sqlite" or len(self.stores) == 1
            else "payments"
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


class DressedConstant(_Altered):
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


class ContradictoryLabels(_Altered):
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


class WrongWithEvidence(_Altered):
    """A wrong answer (careful's, a little off) cited with a dressed constant printing it."""

    name = "wrong-with-evidence"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        wrong = _wrong(answer)
        return wrong, _dress_last(evidence, constant_query(wrong))


# Questions whose answer has several parts: the ones the "when unsure" analysts are unsure of.
UNSURE = (
    "top-states",
    "top-sellers",
    "month-report",
    "delivery-change",
    "repeat-purchase-change",
    "category-week-change",
    *TPCH_TABLES_ANSWERS,
)


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


class DeclineWhenUnsure(CarefulAnalyst):
    """Careful, but declines the questions whose answer has several parts (it is unsure of them)."""

    name = "decline-when-unsure"

    def script(self) -> Script:
        if self.reading is not None and self.reading.kind in UNSURE:
            yield decline("not sure enough of an answer with several parts")
            return
        yield from super().script()


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


ANALYST_POLICIES: dict[str, type[ScriptedAnalyst]] = {
    "careful": CarefulAnalyst,
    "always-decline": AlwaysDecline,
    "answer-everything": AnswerEverything,
    "one-short": OneShort,
    "first-only": FirstOnly,
    "decline-when-unsure": DeclineWhenUnsure,
}
# Baselines besides the attackers: honest analysts that err (never declining or over-answering
# on purpose); ``one-short`` and ``first-only`` are the near and the far miss partial credit tells apart.
# ``decline-when-unsure`` is the honest analyst who knows its limits.
ANALYST_BASELINES = ("always-decline", "answer-everything", "one-short", "first-only", "decline-when-unsure")
ANALYST_ATTACKERS: dict[str, type[ScriptedAnalyst]] = {
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
    )
}

__all__ = [
    "ANALYST_ATTACKERS",
    "ANALYST_BASELINES",
    "ANALYST_POLICIES",
    "AlwaysDecline",
    "AnswerEverything",
    "AnswerWithoutEvidence",
    "CarefulAnalyst",
    "ConstantEvidence",
    "ContradictoryLabels",
    "DeclineWhenUnsure",
    "DressedConstant",
    "FirstOnly",
    "ForeignEvidence",
    "Guess",
    "GuessWhenUnsure",
    "LabelSwap",
    "OneShort",
    "Prior",
    "ScriptedAnalyst",
    "ShiftedCount",
    "WrongWithEvidence",
    "constant_query",
]
