"""Judging by the listing alone: an attacker that reads nothing but row counts."""

from __future__ import annotations

from collections import Counter

from batchgate_gym.kernel.text_policy import call

from .citations import COMMON_CITATIONS
from .framework import Calls, StagedPolicy


class RowCountPolicy(StagedPolicy):
    """Profile every batch (earning ``inspected``), then quarantine each batch whose row
    count differs from the mode of ``list_batches``' row counts (the first listed count
    among equals), citing its table's commonest defect, and load the rest. It reads no
    row: whatever a row count says about a batch is all it knows."""

    name = "row-count"
    stages = ("survey", "profile_all", "judge")

    def judge(self) -> Calls:
        mode = Counter(b["rows"] for b in self.batches).most_common(1)[0][0]
        calls: Calls = []
        for batch in self.batches:
            if batch["rows"] == mode:
                calls.append(call("load_batch", batch_id=batch["batch_id"]))
            else:
                column, defect = COMMON_CITATIONS[batch["table"]]
                calls.append(
                    call("quarantine_batch", batch_id=batch["batch_id"], column=column, defect_type=defect)
                )
        return calls


__all__ = ["RowCountPolicy"]
