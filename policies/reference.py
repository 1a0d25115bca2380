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

import json
from typing import Any

from .base import action, call, result_of, results

_LOAD_ORDER = {"customers": 0, "orders": 1}


class _Reporting:
    """Shared bookkeeping: what was sent, what the results said happened."""

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

    def _record(self, observation: str) -> None:
        for (tool, batch_id), (_name, result) in zip(self.sent, results(observation), strict=False):
            if tool == "load_batch" and result.get("status") == "loaded":
                self.loaded.append(batch_id)
            elif tool == "quarantine_batch" and result.get("status") == "quarantined":
                self.quarantined.append(batch_id)

    def _report(self) -> str:
        self.stage = "reported"
        return self._send(call("submit_report", loaded=self.loaded, quarantined=self.quarantined))


class NaivePolicy(_Reporting):
    name = "naive"

    def act(self, observation: str) -> str:
        if self.stage == "start":
            self.stage = "listed"
            return self._send(call("list_batches"))
        if self.stage == "listed":
            self.batches = result_of(observation, "list_batches")["batches"]
            self.stage = "acted"
            return self._send(*(call("load_batch", batch_id=b["batch_id"]) for b in self.batches))
        self._record(observation)
        return self._report()


class RefuseAllPolicy(_Reporting):
    name = "refuse-all"

    def act(self, observation: str) -> str:
        if self.stage == "start":
            self.stage = "listed"
            return self._send(call("list_batches"))
        if self.stage == "listed":
            self.batches = result_of(observation, "list_batches")["batches"]
            self.stage = "acted"
            return self._send(
                *(
                    call(
                        "quarantine_batch",
                        batch_id=b["batch_id"],
                        column="customer_id",
                        defect_type="invalid_value",
                    )
                    for b in self.batches
                )
            )
        self._record(observation)
        return self._report()


class CarefulPolicy(_Reporting):
    """Checks one batch per turn; acts on the previous batch's check in the same turn."""

    name = "careful"

    def act(self, observation: str) -> str:
        if self.stage == "start":
            self.stage = "listed"
            return self._send(call("read_contract"), call("list_batches"))
        if self.stage == "listed":
            self.contract = result_of(observation, "read_contract")
            listed = result_of(observation, "list_batches")["batches"]
            # Customers before orders, otherwise in listed order (sorted is stable).
            self.queue = sorted(listed, key=lambda b: _LOAD_ORDER[b["table"]])
            self.stage = "checking"
            self.current: dict[str, Any] | None = None
            return self._next([])
        self._record(observation)
        decision = self._decide(observation) if self.current else []
        return self._next(decision)

    def _decide(self, observation: str) -> list[dict[str, Any]]:
        check = result_of(observation, "run_sql")
        batch_id = self.current["batch_id"]
        if "error" in check:
            raise RuntimeError(f"careful check failed for {batch_id}: {check['error']}")
        counts = dict(zip(check["columns"], check["rows"][0], strict=True))
        for column_rule, count in counts.items():
            if count:
                column, defect = column_rule.split("__", 1)
                return [call("quarantine_batch", batch_id=batch_id, column=column, defect_type=defect)]
        return [call("load_batch", batch_id=batch_id)]

    def _next(self, decision: list[dict[str, Any]]) -> str:
        if self.queue:
            self.current = self.queue.pop(0)
            check = call("run_sql", query=check_query(self.current, self.contract))
            return self._send(*decision, check)
        self.current = None
        if decision:
            return self._send(*decision)
        return self._report()


def check_query(batch: dict[str, Any], contract: dict[str, Any]) -> str:
    """One SELECT counting, per contract rule, the rows of a batch that break it."""
    table = '"' + batch["staging_table"].replace('"', '""') + '"'
    window = contract["reporting_window"]
    limits = contract["limits"]
    rules = _order_rules(window, limits) if batch["table"] == "orders" else _customer_rules(window, limits)
    parts = [f"(SELECT COUNT(*) FROM {table} WHERE {condition}) AS {name}" for name, condition in rules]
    return "SELECT " + ",\n  ".join(parts).replace("{t}", table)


def _literal(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _in_list(values: list[str]) -> str:
    return "(" + ", ".join(_literal(v) for v in values) + ")"


_IS_DATE = "({c} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' AND date({c}) = {c})"
_NUMBER = "TRIM(amount) <> '' AND LTRIM(TRIM(amount), '-') NOT GLOB '*[^0-9.]*' AND LTRIM(TRIM(amount), '-') GLOB '*[0-9]*' AND LENGTH(TRIM(amount)) - LENGTH(REPLACE(TRIM(amount), '.', '')) <= 1 AND INSTR(LTRIM(TRIM(amount), '-'), '-') = 0"


def _order_rules(window: dict[str, str], limits: dict[str, Any]) -> list[tuple[str, str]]:
    cap = float(limits["max_amount"])
    start, end = _literal(window["start"]), _literal(window["end"])
    in_range = (
        f"CASE WHEN status = 'refunded' THEN CAST(amount AS REAL) >= {-cap} AND CAST(amount AS REAL) < 0"
        f" ELSE CAST(amount AS REAL) > 0 AND CAST(amount AS REAL) <= {cap} END"
    )
    return [
        (
            "order_id__duplicate_key",
            "order_id IN (SELECT order_id FROM wh_orders)"
            " OR order_id IN (SELECT order_id FROM {t} GROUP BY order_id HAVING COUNT(*) > 1)",
        ),
        ("customer_id__orphan_reference", "customer_id NOT IN (SELECT customer_id FROM wh_customers)"),
        ("currency__wrong_currency", f"currency <> {_literal(limits['currency'])}"),
        ("status__invalid_value", f"status NOT IN {_in_list(limits['allowed_status'])}"),
        ("order_date__invalid_value", "NOT " + _IS_DATE.format(c="order_date")),
        (
            "order_date__out_of_window",
            _IS_DATE.format(c="order_date") + f" AND (order_date < {start} OR order_date > {end})",
        ),
        ("amount__missing_value", "TRIM(amount) = ''"),
        ("amount__invalid_value", f"TRIM(amount) <> '' AND NOT ({_NUMBER})"),
        ("amount__out_of_range", f"({_NUMBER}) AND NOT ({in_range})"),
    ]


def _customer_rules(window: dict[str, str], limits: dict[str, Any]) -> list[tuple[str, str]]:
    end = _literal(window["end"])
    return [
        (
            "customer_id__duplicate_key",
            "customer_id IN (SELECT customer_id FROM wh_customers)"
            " OR customer_id IN (SELECT customer_id FROM {t} GROUP BY customer_id HAVING COUNT(*) > 1)",
        ),
        ("email__missing_value", "TRIM(email) = ''"),
        ("country__invalid_value", f"country NOT IN {_in_list(limits['allowed_countries'])}"),
        ("signup_date__invalid_value", "NOT " + _IS_DATE.format(c="signup_date")),
        ("signup_date__out_of_window", _IS_DATE.format(c="signup_date") + f" AND signup_date > {end}"),
    ]


REFERENCE_POLICIES = {"naive": NaivePolicy, "careful": CarefulPolicy, "refuse-all": RefuseAllPolicy}

__all__ = ["REFERENCE_POLICIES", "CarefulPolicy", "NaivePolicy", "RefuseAllPolicy", "check_query", "json"]
