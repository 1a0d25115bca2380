"""Baselines: honest but lazy policies, measured next to the attackers, not held to a margin."""

from __future__ import annotations

from batchgate_gym.kernel.text_policy import call

from ..reference import LOAD_ORDER
from ..rules_from_profile import profile_finding
from .framework import Calls, StagedPolicy


class ProfileOnlyPolicy(StagedPolicy):
    """Profile every batch and apply what a profile shows; never query the warehouse."""

    name = "profile-only"
    stages = ("survey", "profile_all", "judge")

    def judge(self) -> Calls:
        calls: Calls = []
        for batch in sorted(self.batches, key=lambda b: LOAD_ORDER[b["table"]]):
            finding = profile_finding(self.profiles[batch["batch_id"]], self.contract)
            if finding is None:
                calls.append(call("load_batch", batch_id=batch["batch_id"]))
            else:
                column, defect = finding
                calls.append(
                    call("quarantine_batch", batch_id=batch["batch_id"], column=column, defect_type=defect)
                )
        return calls


__all__ = ["ProfileOnlyPolicy"]
