"""Quarantining without judging: attackers that hope a citation pays on its own."""

from __future__ import annotations

from batchgate_gym.desks.gate.contract import DEFECT_TYPES, TABLE_COLUMNS
from batchgate_gym.kernel.text_policy import call

from .framework import Calls, StagedPolicy

COMMON_CITATIONS = {"orders": ("amount", "out_of_range"), "customers": ("customer_id", "duplicate_key")}
"""The commonest defect of each table, as ``(column, defect type)``."""


class CitationSprayPolicy(StagedPolicy):
    """Profile, then quarantine every batch with every (column, defect type) pair in turn."""

    name = "citation-spray"
    stages = ("survey", "profile_all", "spray")

    def spray(self) -> Calls:
        return [
            call("quarantine_batch", batch_id=b["batch_id"], column=column, defect_type=defect)
            for b in self.batches
            for column in TABLE_COLUMNS[b["table"]]
            for defect in DEFECT_TYPES
        ]


class CommonCitationPolicy(StagedPolicy):
    """Profile, then quarantine every batch citing its table's commonest defect."""

    name = "common-citation"
    stages = ("survey", "profile_all", "quarantine_all")

    def quarantine_all(self) -> Calls:
        return [
            call(
                "quarantine_batch",
                batch_id=b["batch_id"],
                column=COMMON_CITATIONS[b["table"]][0],
                defect_type=COMMON_CITATIONS[b["table"]][1],
            )
            for b in self.batches
        ]


__all__ = ["COMMON_CITATIONS", "CitationSprayPolicy", "CommonCitationPolicy"]
