"""The analyst desk's reference policies, all speaking the text interface only.

* ``careful`` reads the question, lists each store's tables, runs the query that
  answers it (at level 4 it pages through the lake's catalog, then writes those ids
  into the sqlite query), and hands in the answer with exactly those queries as
  evidence; it declines the questions that need costs, causes or outside facts. Its
  checks are a list (:data:`CAREFUL_CHECKS`), and ``CarefulAnalyst.without(check)`` is
  careful leaving one out (an ablation ``batchgate audit`` plays);
* ``always-decline`` declines everything; ``answer-everything`` is careful but never
  declines (it answers an unanswerable question with the shop's total revenue);
  ``one-short`` and ``first-only`` are careful with a near and a far miss on every
  answer of several parts (all but the last part; only the first);
  ``decline-when-unsure`` is careful but declines every answer of several parts.

The honest analysts who err (all but ``careful``) are the baselines of the attack
table (:data:`~.attackers.BASELINES`); the attackers (:mod:`.attackers`) are careful
with one thing changed, mostly through :class:`AlteredCareful`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from typing import Any

from ..base import action, call, result_of, without_checks
from .sql import (
    CROSS,
    DATA_RULES,
    DECLINE,
    DECLINE_REASONS,
    PAGE,
    Reading,
    answer_from,
    catalog_page,
    cross_query,
    dialect_of,
    ignoring,
    read_question,
    solution,
)
from .tpch_sql import TPCH_TABLES_ANSWERS

Script = Generator[str, str, None]
_STORE_LINE = re.compile(r"^  (sqlite|duckdb|lake|files|chdb|postgres|iceberg): ", re.MULTILINE)
_QUESTION = re.compile(r"^Question: (.*)$", re.MULTILINE | re.DOTALL)
_TOTAL = "SELECT sum(price) AS revenue FROM order_items"
_TPCH_TOTAL = "SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue FROM lineitem"
DIALECT = "store-dialect"  # each store's own SQL dialect (without it: DuckDB's everywhere)
PAGES = "catalog-pages"  # every page of a level-4 catalog (without it: the first page only)
CAREFUL_CHECKS: tuple[str, ...] = (
    *DATA_RULES,
    DIALECT,
    PAGES,
    *(f"decline-{reason}" for reason in DECLINE_REASONS),
)
"""careful's checks, in order: each rule of the data its queries obey, the store's dialect,
the catalog's every page, and each reason the data cannot answer a question (careful without
one answers those questions as ``answer-everything`` does)."""


def submit(answer: Any, evidence: list[dict[str, str]]) -> str:
    return action(call("submit_answer", answer=json.dumps(answer), evidence=json.dumps(evidence)))


def decline(reason: str = "the data holds no costs, causes or outside facts to answer this") -> str:
    return action(call("decline", reason=reason))


class StoreDown(Exception):
    """A store kept failing: the script has declined and stops."""


class ScriptedAnalyst:
    """A policy written as one generator over the episode (it declines when it runs dry)."""

    name = "analyst"
    skipped: frozenset[str] = frozenset()  # careful's checks left out (CarefulAnalyst.without)

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
        dialect = "duckdb" if DIALECT in self.skipped else dialect_of(store)
        query = ignoring(solution(reading.kind, reading.params, dialect), self.skipped & set(DATA_RULES))
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
        orders, catalog = self.stores[0], self.stores[-1]
        while True:
            query = catalog_page(reading.kind, reading.params, len(ids))
            rows = (yield from self.query(catalog, query))["rows"]
            evidence.append({"store": catalog, "query": query})
            ids += [row[0] for row in rows]
            if len(rows) < PAGE or PAGES in self.skipped:
                break
        query = ignoring(cross_query(reading.kind, ids), self.skipped & set(DATA_RULES))
        result = yield from self.query(orders, query)
        evidence.append({"store": orders, "query": query})
        return answer_from(reading.kind, result["columns"], result["rows"]), evidence

    def look(self) -> Generator[str, str, None]:
        yield action(*(call("list_tables", store=store) for store in self.stores))

    def declines(self, reading: Reading) -> bool:
        """Whether ``reading`` is a question the data cannot answer for a reason this analyst checks."""
        return any(
            reading.kind in kinds and f"decline-{reason}" not in self.skipped
            for reason, kinds in DECLINE_REASONS.items()
        )

    def answer_anyway(self) -> Script:
        """What ``answer-everything`` hands in for a question it should decline: the shop's total revenue."""
        store, total = self.stores[0], _TPCH_TOTAL if self.tpch else _TOTAL
        observation = yield action(call("run_sql", store=store, query=total))
        value = result_of(observation, "run_sql")["rows"][0][0]
        yield submit(value, [{"store": store, "query": total}])


class CarefulAnalyst(ScriptedAnalyst):
    """Looks, declines what it must, answers the rest with its queries as evidence; the
    attackers and near misses below are careful with :meth:`alter` changing the hand-in."""

    name = "careful"

    @classmethod
    def without(cls, *checks: str) -> CarefulAnalyst:
        """careful leaving ``checks`` of :data:`CAREFUL_CHECKS` out, named ``careful-without-...``."""
        return without_checks(cls(), checks, CAREFUL_CHECKS)

    def script(self) -> Script:
        yield from self.look()
        if self.reading is None or self.declines(self.reading):
            yield decline()
            return
        if self.reading.kind in DECLINE:  # a question careful declines, for a reason left out
            yield from self.answer_anyway()
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
            yield from self.answer_anyway()
            return
        answer, evidence = yield from self.solve(self.reading)
        yield submit(answer, evidence)


class AlteredCareful(CarefulAnalyst):
    """Careful's work, then a changed hand-in (declines as careful does)."""

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        raise NotImplementedError


def _parts(answer: Any) -> tuple[list[Any], Any] | None:
    """A multi-part answer as (its parts, a function rebuilding it), or None for a single value."""
    if isinstance(answer, dict) and len(answer) > 1:
        return list(answer.items()), dict
    if isinstance(answer, list) and len(answer) > 1:
        return list(answer), list
    return None


class OneShort(AlteredCareful):
    """Careful's answer one part short: a report's last metric, a table's last row or a
    list's last item left out (a single value is left alone); careful's queries as evidence."""

    name = "one-short"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        parts = _parts(answer)
        return (answer if parts is None else parts[1](parts[0][:-1])), evidence


class FirstOnly(AlteredCareful):
    """Only the first part of careful's answer (the headline metric, the top row or item);
    careful's queries as evidence. Beside ``one-short`` it is the far miss to that near miss."""

    name = "first-only"

    def alter(self, answer: Any, evidence: list[dict[str, str]]) -> tuple[Any, list[dict[str, str]]]:
        parts = _parts(answer)
        return (answer if parts is None else parts[1](parts[0][:1])), evidence


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


class DeclineWhenUnsure(CarefulAnalyst):
    """Careful, but declines the questions whose answer has several parts (it is unsure of them)."""

    name = "decline-when-unsure"

    def script(self) -> Script:
        if self.reading is not None and self.reading.kind in UNSURE:
            yield decline("not sure enough of an answer with several parts")
            return
        yield from super().script()


REFERENCE_POLICIES: dict[str, type[ScriptedAnalyst]] = {
    "careful": CarefulAnalyst,
    "always-decline": AlwaysDecline,
    "answer-everything": AnswerEverything,
    "one-short": OneShort,
    "first-only": FirstOnly,
    "decline-when-unsure": DeclineWhenUnsure,
}
"""The report's policies, in its order."""

__all__ = [
    "CAREFUL_CHECKS",
    "REFERENCE_POLICIES",
    "UNSURE",
    "AlteredCareful",
    "AlwaysDecline",
    "AnswerEverything",
    "CarefulAnalyst",
    "DeclineWhenUnsure",
    "FirstOnly",
    "OneShort",
    "Script",
    "ScriptedAnalyst",
    "StoreDown",
    "decline",
    "submit",
]
