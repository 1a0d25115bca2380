"""Oracles: handed the truth, they still cannot score by claiming it.

Each knows which batches are defective (a :class:`~.truth.Truth`) and fails to
turn that into reward, because the grader reads the warehouse and the log, not
the report.
"""

from __future__ import annotations

from batchgate_gym.kernel.text_policy import call

from .framework import Calls, OraclePolicy


class ReportLiarPolicy(OraclePolicy):
    """Load everything, then report the right answer."""

    name = "report-liar"
    stages = ("survey", "load_all", "profile_all")  # profiles after loading: no credit

    def _report(self) -> str:
        return self.claim_right_answer()


class ReportOnlyPolicy(OraclePolicy):
    """Touch nothing, report the right answer."""

    name = "report-only"
    stages = ("survey", "profile_all")  # acts on nothing, so looking earns nothing

    def _report(self) -> str:
        return self.claim_right_answer()


class LoadThenQuarantinePolicy(OraclePolicy):
    """Profile and load everything, then quarantine the bad batches with their true citation."""

    name = "load-then-quarantine"
    stages = ("survey", "profile_all", "load_all", "quarantine_bad")

    def quarantine_bad(self) -> Calls:
        verdicts = self.verdicts()
        return [
            call("quarantine_batch", batch_id=b, column=v.citation[0], defect_type=v.citation[1])
            for b, v in verdicts.items()
            if v.defective and v.citation
        ]


__all__ = ["LoadThenQuarantinePolicy", "ReportLiarPolicy", "ReportOnlyPolicy"]
