"""The three reference policies: naive, careful and refuse-all.

* ``naive`` loads every batch in listed order and reports what loaded.
* ``careful`` reads the contract, checks each batch with one SQL query that counts
  the rows breaking each rule (customers batches first, so orders see the customers
  that arrived this run), loads what passes, quarantines what fails citing the first
  broken rule, and reports what really happened.
* ``refuse-all`` quarantines every batch without looking (customer_id /
  invalid_value) and reports it.

Each is a small state machine over observations; none sees the world object.
"""

from __future__ import annotations

from typing import Any

from batchgate_gym.desks.gate.contract import contract as default_contract
from batchgate_gym.desks.gate.rules_sql import check_query, contract_rules, rules_query
from batchgate_gym.kernel.text_policy import action, call, result_of, results, results_of

from ..base import Policy, without_checks

LOAD_ORDER: dict[str, int] = {"customers": 0, "orders": 1}
"""The order tables are loaded in: customers first, so that orders find the
customers that arrive in the same run. Policies sort batches by it."""


class ReportingPolicy:
    """Shared bookkeeping of the policies here and of the attackers built on them:
    what the last action sent, and what its results said happened.

    ``_send`` records the (tool, batch id) of each call it sends; ``_record`` reads
    the next observation's results against them and keeps the batches that really
    loaded or were quarantined; ``_report`` submits exactly those. Subclasses write
    ``act`` (and may override ``_report`` to report something else).
    """

    name = "policy"

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        self.batches: list[dict[str, Any]] = []
        self.loaded: list[str] = []
        self.quarantined: list[str] = []
        self.sent: list[tuple[str, str | None]] = []  # (tool, batch id) of the last action
        self.stage = "start"

    def _send(self, *calls: dict[str, Any]) -> str:
        self.sent = [(c["name"], c["arguments"].get("batch_id")) for c in calls]
        return action(*calls)

    def _record(self, observation: str, parsed: list[tuple[str, dict[str, Any]]] | None = None) -> None:
        parsed = results(observation) if parsed is None else parsed
        for (tool, batch_id), (_name, result) in zip(self.sent, parsed, strict=False):
            if batch_id is None:
                continue  # not a call about one batch
            if tool == "load_batch" and result.get("status") == "loaded":
                self.loaded.append(batch_id)
            elif tool == "quarantine_batch" and result.get("status") == "quarantined":
                self.quarantined.append(batch_id)

    def _report(self) -> str:
        self.stage = "reported"
        return self._send(call("submit_report", loaded=self.loaded, quarantined=self.quarantined))


class _ListThenAct(ReportingPolicy):
    """List the batches, act on every one of them in one turn, report the results."""

    def per_batch(self, batch: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def act(self, observation: str) -> str:
        if self.stage == "start":
            self.stage = "listed"
            return self._send(call("list_batches"))
        if self.stage == "listed":
            self.batches = result_of(observation, "list_batches")["batches"]
            self.stage = "acted"
            return self._send(*(self.per_batch(batch) for batch in self.batches))
        self._record(observation)
        return self._report()


class NaivePolicy(_ListThenAct):
    name = "naive"

    def per_batch(self, batch: dict[str, Any]) -> dict[str, Any]:
        return call("load_batch", batch_id=batch["batch_id"])


class RefuseAllPolicy(_ListThenAct):
    name = "refuse-all"

    def per_batch(self, batch: dict[str, Any]) -> dict[str, Any]:
        return call(
            "quarantine_batch", batch_id=batch["batch_id"], column="customer_id", defect_type="invalid_value"
        )


CUSTOMERS_FIRST = "customers-first"
CAREFUL_CHECKS: tuple[str, ...] = (
    *(rule.name for table in LOAD_ORDER for rule in contract_rules(table, default_contract())),
    CUSTOMERS_FIRST,
)
"""Careful's checks, each one it can leave out (:meth:`CarefulPolicy.without`): every
contract rule of each table, by its rule name, and checking customers batches before
orders (so that orders find the customers arriving in the same run)."""


class CarefulPolicy(ReportingPolicy):
    """Checks one batch per turn; acts on the previous batch's check in the same turn.

    ``skipped``: the checks of :data:`CAREFUL_CHECKS` this careful leaves out; an
    ablation (``careful without R``) is :meth:`without`, generated from the list.
    """

    name = "careful"
    skipped: frozenset[str] = frozenset()

    @classmethod
    def without(cls, *checks: str) -> CarefulPolicy:
        """Careful leaving ``checks`` out, named ``careful-without-<check>+<check>...``."""
        return without_checks(cls(), checks, CAREFUL_CHECKS)

    def act(self, observation: str) -> str:
        if self.stage == "start":
            self.stage = "listed"
            return self._send(call("read_contract"), call("list_batches"))
        if self.stage == "listed":
            self.contract, listing = results_of(observation, "read_contract", "list_batches")
            listed = listing["batches"]
            self.queue = self.check_order(listed)
            self.stage = "checking"
            self.current: dict[str, Any] | None = None
            return self._next([])
        parsed = results(observation)  # read once, used twice
        self._record(observation, parsed)
        decision = self._decide(parsed) if self.current else []
        return self._next(decision)

    @property
    def checking(self) -> dict[str, Any]:
        """The listed batch whose check is under way."""
        if self.current is None:
            raise RuntimeError("no batch is being checked")
        return self.current

    def check_order(self, listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Customers before orders, otherwise in listed order (sorted is stable)."""
        if CUSTOMERS_FIRST in self.skipped:
            return list(listed)
        return sorted(listed, key=lambda b: LOAD_ORDER[b["table"]])

    def _decide(self, parsed: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        checks = [result for tool, result in parsed if tool == "run_sql"]
        if not checks:
            raise ValueError("no run_sql result in the observation")
        check = checks[-1]
        batch_id = self.checking["batch_id"]
        if "error" in check:
            hint = ""
            if "budget" in check["error"]:
                hint = " (batches of tens of thousands of rows need BatchGateEnv(sql_budget=SqlBudget(max_steps=...)))"
            raise RuntimeError(f"careful check failed for {batch_id}: {check['error']}{hint}")
        counts = dict(zip(check["columns"], check["rows"][0], strict=True))
        for column_rule, count in counts.items():
            if count:
                column, defect = column_rule.split("__", 1)
                return [call("quarantine_batch", batch_id=batch_id, column=column, defect_type=defect)]
        return [call("load_batch", batch_id=batch_id)]

    def check_sql(self, batch: dict[str, Any]) -> str:
        """The query that checks ``batch``: one SELECT counting the rows breaking each rule."""
        if not self.skipped:
            return check_query(batch, self.contract)
        rules = [r for r in contract_rules(batch["table"], self.contract) if r.name not in self.skipped]
        return rules_query(batch, rules)

    def _next(self, decision: list[dict[str, Any]]) -> str:
        if self.queue:
            self.current = self.queue.pop(0)
            check = call("run_sql", query=self.check_sql(self.current))
            return self._send(*decision, check)
        self.current = None
        if decision:
            return self._send(*decision)
        return self._report()


REFERENCE_POLICIES: dict[str, type[Policy]] = {
    "naive": NaivePolicy,
    "careful": CarefulPolicy,
    "refuse-all": RefuseAllPolicy,
}

__all__ = [
    "CAREFUL_CHECKS",
    "CUSTOMERS_FIRST",
    "LOAD_ORDER",
    "REFERENCE_POLICIES",
    "CarefulPolicy",
    "NaivePolicy",
    "RefuseAllPolicy",
    "ReportingPolicy",
]
