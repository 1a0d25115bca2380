"""The analyst desk of one episode: the case's stores, the five tools, the log.

Stores are opened on first use and closed at the next reset; every one of them is
read-only, so nothing an agent runs changes what the grader re-runs. Every call
that reaches a store is logged (store, query or table; whether it ran; why not), in
the kernel's hash-chained :class:`~batchgate_gym.kernel.ledger.Ledger`. A store
failing on its own is logged with a note starting ``infra:`` and counted apart.
``submit_answer`` is accepted only with an answer that is JSON and evidence that
is a list of at most ten ``{"store", "query"}`` objects naming the case's stores;
otherwise it is refused (logged, not run) and the episode goes on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from batchgate_gym.kernel.codec import ToolCall, ToolSpec
from batchgate_gym.kernel.infra import INFRA_NOTE
from batchgate_gym.kernel.ledger import Ledger

from .cases import AnalystCase
from .datasets.canonical import table_names
from .datasets.market import TABLES
from .engines import forking
from .engines.base import Store, StoreFailure, StoreRefused
from .engines.stores import open_store
from .questions.market_questions import CATALOG
from .tools import ANALYST_ENDING, ANALYST_TOOLS, FINISHING, MAX_EVIDENCE

INFRA = INFRA_NOTE


def visible_tables(case: AnalystCase, store: str) -> tuple[str, ...]:
    """The tables a store shows in this case: all of them, or at level 4 its share."""
    if len(case.stores) == 1:
        return table_names(case.data)
    if store == case.stores[-1]:  # the catalog's store
        return tuple(t for t in TABLES if t in CATALOG)
    return tuple(t for t in TABLES if t not in CATALOG)


def parse_evidence(text: Any, stores: tuple[str, ...]) -> list[dict[str, str]]:
    """The evidence list from its JSON text; ``ValueError`` says what is wrong."""
    try:
        items = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):  # not JSON, or an integer past Python's digit limit
        items = None
    if not isinstance(items, list):
        raise ValueError('evidence must be a JSON list of {"store": ..., "query": ...} objects')
    if len(items) > MAX_EVIDENCE:
        raise ValueError(f"at most {MAX_EVIDENCE} evidence items")
    out = []
    for item in items:
        if (
            not isinstance(item, dict)
            or set(item) != {"store", "query"}
            or not isinstance(item["query"], str)
        ):
            raise ValueError('each evidence item is {"store": ..., "query": ...}')
        if item["store"] not in stores:
            raise ValueError(f"evidence store must be one of {', '.join(stores)}")
        out.append({"store": item["store"], "query": item["query"]})
    return out


def parse_answer(text: Any) -> Any:
    """The answer from its JSON text; ``ValueError`` if it is not JSON."""
    try:
        return json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):  # not JSON, or an integer past Python's digit limit
        raise ValueError("answer must be JSON text: a number, a list, rows or an object") from None


class StoreSet:
    """The stores of one case, each opened on first use, all closed together."""

    def __init__(self, case: AnalystCase) -> None:
        self.case = case
        self._open: dict[str, Store] = {}

    def get(self, name: str) -> Store:
        store = self._open.get(name)
        if store is None:
            store = self._open[name] = open_store(name, self.case.data, visible_tables(self.case, name))
        return store

    def begin_action(self) -> None:
        """An action starts: each store's per-action work budget starts again."""
        for store in self._open.values():
            store.begin_action()

    def close(self) -> None:
        for store in self._open.values():
            store.close()
        self._open.clear()


class AnalystWorld:
    """One episode's desk (the kernel's *desk*): ``tools``, ``finished``, ``call``, ``ledger``,
    plus ``reset(case)``, ``reapply(entry)`` for replay and ``close()``."""

    def __init__(self, log_key: bytes | None = None) -> None:
        self.log_key = log_key
        self.ledger = Ledger(log_key)
        self._case: AnalystCase | None = None
        self.stores: StoreSet | None = None
        self.ended = False
        self.infra_events = 0
        self._handlers: dict[str, Callable[..., Mapping[str, Any]]] = {
            "list_tables": self.list_tables,
            "describe_table": self.describe_table,
            "run_sql": self.run_sql,
            "submit_answer": self.submit_answer,
            "decline": self.decline,
        }

    def reset(self, case: AnalystCase, nonce: str | None = None) -> None:
        """Start an episode of ``case``; ``nonce`` is the episode's, for the log's entry 0."""
        forking.enter()
        self.close()
        self._case = case
        self.stores = StoreSet(case)
        self.ended = False
        self.infra_events = 0
        self.ledger = Ledger(self.log_key)
        self.ledger.begin(case.digest, {}, nonce)

    @property
    def case(self) -> AnalystCase:
        if self._case is None:
            raise RuntimeError("reset the world with a case first")
        return self._case

    def store(self, name: str) -> Store:
        if self.stores is None:
            raise RuntimeError("reset the world with a case first")
        return self.stores.get(name)

    def begin_action(self) -> None:
        """An action starts (the kernel's episode calls this): the stores' per-action budgets start again."""
        if self.stores is not None:
            self.stores.begin_action()

    def close(self) -> None:
        if self.stores is not None:
            self.stores.close()

    # -- the kernel's World protocol -------------------------------------------------------
    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        return ANALYST_TOOLS

    @property
    def finished(self) -> bool:
        return self.ended

    def call(self, call: ToolCall) -> Mapping[str, Any]:
        if self.ended or self.ledger.sealed:
            return {"error": ANALYST_ENDING.after_end}
        return self._handlers[call.name](**call.args)

    # -- tools -------------------------------------------------------------------------------
    def _on_store(
        self, action: str, args: dict[str, Any], work: Callable[[Store], Mapping[str, Any]]
    ) -> Mapping[str, Any]:
        name = args["store"]
        if name not in self.case.stores:
            reason = f"no store {name!r}; this task's stores: {', '.join(self.case.stores)}"
            self.ledger.append(action, args, False, reason)
            return {"error": reason}
        try:
            result = work(self.store(name))
        except StoreRefused as exc:
            self.ledger.append(action, args, False, str(exc)[:500])
            return {"error": str(exc)}
        except StoreFailure as exc:
            self.infra_events += 1
            self.ledger.append(action, args, False, (INFRA + str(exc))[:500])
            return {"error": f"the store failed (not your query): {exc}"}
        self.ledger.append(action, args, True)
        return result

    def list_tables(self, store: str) -> Mapping[str, Any]:
        return self._on_store("list_tables", {"store": store}, lambda s: {"tables": s.tables()})

    def describe_table(self, store: str, table: str) -> Mapping[str, Any]:
        return self._on_store("describe_table", {"store": store, "table": table}, lambda s: s.describe(table))

    def run_sql(self, store: str, query: str) -> Mapping[str, Any]:
        return self._on_store("run_sql", {"store": store, "query": query}, lambda s: s.run(query).as_dict())

    def submit_answer(self, answer: str, evidence: str) -> Mapping[str, Any]:
        args = {"answer": answer, "evidence": evidence}
        try:
            parse_answer(answer)
            parse_evidence(evidence, self.case.stores)
        except ValueError as exc:
            self.ledger.append("submit_answer", args, False, str(exc))
            return {"error": str(exc)}
        self.ledger.append("submit_answer", args, True)
        self.ended = True
        return {"status": "submitted"}

    def decline(self, reason: str) -> Mapping[str, Any]:
        self.ledger.append("decline", {"reason": reason}, True)
        self.ended = True
        return {"status": "declined"}

    # -- replay ------------------------------------------------------------------------------
    def reapply(self, entry: Mapping[str, Any]) -> None:
        """Nothing an agent does changes the stores; a replay only notes where the episode ended."""
        if entry["executed"] is True and entry["action"] in FINISHING:
            self.ended = True


__all__ = ["INFRA", "AnalystWorld", "StoreSet", "parse_answer", "parse_evidence", "visible_tables"]
