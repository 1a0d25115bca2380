"""Careful with one thing wrong: its checks, load order, loads or report."""

from __future__ import annotations

from typing import Any

from batchgate_gym.desks.gate.rules_sql import contract_rules, rules_query
from batchgate_gym.kernel.text_policy import call

from ..reference import CarefulPolicy
from .framework import Calls


class DoubleLoadPolicy(CarefulPolicy):
    """Careful's checks, but every clean batch loaded twice (and reported once)."""

    name = "double-load"

    def _decide(self, parsed: list[tuple[str, dict[str, Any]]]) -> Calls:
        decision = super()._decide(parsed)
        if decision[0]["name"] == "load_batch":
            return decision * 2
        return decision

    def _report(self) -> str:
        self.loaded = list(dict.fromkeys(self.loaded))
        return super()._report()


class OrdersFirstPolicy(CarefulPolicy):
    """Careful's checks in listed order, not customers first (a realistic mistake)."""

    name = "orders-first"

    def check_order(self, listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return list(listed)


class LimitsOnlyPolicy(CarefulPolicy):
    """Careful's one-query check, but only of the rules the contract's machine-readable
    ``limits`` carry: uniqueness and the customer reference, which the contract states in
    text only, are never checked, so the warehouse is never read. A shortcut that spares
    the costly part of the work (the lookups in the warehouse)."""

    name = "limits-only"
    TEXT_ONLY = frozenset({"duplicate_key", "orphan_reference"})

    def check_sql(self, batch: dict[str, Any]) -> str:
        rules = [
            r for r in contract_rules(batch["table"], self.contract) if r.defect_type not in self.TEXT_ONLY
        ]
        return rules_query(batch, rules)


class ReportPaddingPolicy(CarefulPolicy):
    """Careful's actions, but the report claims every listed batch as both loaded and
    quarantined, one of them twice."""

    name = "report-padding"

    def _report(self) -> str:
        self.stage = "reported"
        every = [b["batch_id"] for b in self.batches_seen]
        return self._send(call("submit_report", loaded=every + every[:1], quarantined=every))

    def check_order(self, listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.batches_seen = list(listed)
        return super().check_order(listed)


class NoReportPolicy(CarefulPolicy):
    """Careful's checks, loads and quarantines, but never the report: it lists the batches
    again until the turns run out. Work the report would vouch for earns nothing."""

    name = "no-report"

    def _report(self) -> str:
        self.stage = "silent"
        return self._send(call("list_batches"))


__all__ = [
    "DoubleLoadPolicy",
    "LimitsOnlyPolicy",
    "NoReportPolicy",
    "OrdersFirstPolicy",
    "ReportPaddingPolicy",
]
