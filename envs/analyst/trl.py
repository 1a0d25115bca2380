"""The analyst desk for TRL's ``environment_factory``: one method per tool (see :mod:`batchgate_gym.llm.trl_env`)."""

from __future__ import annotations

from batchgate_gym.desks.analyst.tools import ANALYST_TOOLS
from batchgate_gym.llm.trl_env import DeskToolEnv, desk_tools


@desk_tools
class AnalystToolEnv(DeskToolEnv):
    """The analyst desk: tools to list and describe a store's tables, query them, answer or decline."""

    desk_name = "analyst"
    tool_specs = ANALYST_TOOLS

    def list_tables(self, store: str) -> str:
        return self._send("list_tables", {"store": store})

    def describe_table(self, store: str, table: str) -> str:
        return self._send("describe_table", {"store": store, "table": table})

    def run_sql(self, store: str, query: str) -> str:
        return self._send("run_sql", {"store": store, "query": query})

    def submit_answer(self, answer: str, evidence: str) -> str:
        return self._send("submit_answer", {"answer": answer, "evidence": evidence})

    def decline(self, reason: str) -> str:
        return self._send("decline", {"reason": reason})


__all__ = ["AnalystToolEnv"]
