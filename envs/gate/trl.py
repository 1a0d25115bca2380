"""The batch gate for TRL's ``environment_factory``: one method per tool (see :mod:`batchgate_gym.llm.trl_env`)."""

from __future__ import annotations

from batchgate_gym.desks.gate.tools import GATE_TOOLS
from batchgate_gym.llm.trl_env import DeskToolEnv, desk_tools


@desk_tools
class GateToolEnv(DeskToolEnv):
    """The batch gate: tools to read the contract, inspect and load or quarantine batches, and report."""

    desk_name = "gate"
    tool_specs = GATE_TOOLS

    def read_contract(self) -> str:
        return self._send("read_contract", {})

    def list_batches(self) -> str:
        return self._send("list_batches", {})

    def profile_batch(self, batch_id: str) -> str:
        return self._send("profile_batch", {"batch_id": batch_id})

    def run_sql(self, query: str) -> str:
        return self._send("run_sql", {"query": query})

    def load_batch(self, batch_id: str) -> str:
        return self._send("load_batch", {"batch_id": batch_id})

    def quarantine_batch(self, batch_id: str, column: str, defect_type: str) -> str:
        return self._send(
            "quarantine_batch", {"batch_id": batch_id, "column": column, "defect_type": defect_type}
        )

    def submit_report(self, loaded: list[str], quarantined: list[str]) -> str:
        return self._send("submit_report", {"loaded": loaded, "quarantined": quarantined})


__all__ = ["GateToolEnv"]
