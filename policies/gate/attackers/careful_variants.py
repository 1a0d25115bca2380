"""Careful with one thing wrong: its checks, but a bad load order, load or report."""

from __future__ import annotations

from typing import Any

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


__all__ = ["DoubleLoadPolicy", "OrdersFirstPolicy", "ReportPaddingPolicy"]
