"""One warehouse, one staging area and one hash-chained log shared by N gate agents.

The team world is the single-agent :class:`GateWorld` (same database, same loader,
same SQL guard, same refusals) with three additions: every log entry names the
agent that made the call (an ``agent`` field in its args), batches can be claimed
(the first claim wins; loading or quarantining a batch someone else claimed is
refused and logged), and each agent keeps its own report. Nothing else changes,
so two unclaimed loads of one batch really both reach the warehouse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from batchgate_gym.kernel.codec import ToolCall, ToolSpec
from batchgate_gym.kernel.sqlguard import SqlBudget
from batchgate_gym.kernel.team import AGENT_DONE_ACTION, AttributedLedger

from ..cases import Case
from ..world import GateWorld
from .tools import TEAM_TOOLS

ASSIGN_ACTION = "assign_lists"


def agent_names(n_agents: int) -> tuple[str, ...]:
    if n_agents < 1:
        raise ValueError("a team needs at least one agent")
    return tuple(f"gate_{i}" for i in range(n_agents))


class TeamWorld(GateWorld):
    """The shared warehouse and the nine team tools; calls are made *as* an agent."""

    ledger: AttributedLedger  # every ledger of this world comes from new_ledger below

    def __init__(
        self, agents: Sequence[str], budget: SqlBudget | None = None, log_key: bytes | None = None
    ) -> None:
        self.agents = tuple(agents)
        super().__init__(budget, log_key)
        self._handlers["claim_batch"] = self.claim_batch
        self._handlers["wait"] = self.wait
        self.lists: dict[str, tuple[str, ...]] = {}
        self.claims: dict[str, str] = {}
        self.reports: dict[str, tuple[list[str], list[str]]] = {}

    def reset(  # type: ignore[override]  # the deal comes before the nonce
        self, case: Case, lists: Mapping[str, Sequence[str]] | None = None, nonce: str | None = None
    ) -> None:
        """Restore the case and deal the agents' lists (every batch to everyone if none given)."""
        every = tuple(batch.batch_id for batch in case.batches)
        dealt = {agent: tuple(lists.get(agent, ())) if lists else every for agent in self.agents}
        strangers = sorted(set(lists or ()) - set(self.agents))
        unknown = sorted({b for ids in dealt.values() for b in ids} - set(every))
        if strangers or unknown:
            raise ValueError(f"lists name unknown agents {strangers} or unknown batches {unknown}")
        super().reset(case, nonce)
        self.lists = dealt
        self.claims = {}
        self.reports = {}
        self.ledger.append(ASSIGN_ACTION, {"lists": {a: list(ids) for a, ids in self.lists.items()}}, True)

    def new_ledger(self) -> AttributedLedger:
        return AttributedLedger(self.log_key)

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        return TEAM_TOOLS

    @property
    def finished(self) -> bool:
        return len(self.reports) == len(self.agents)

    @property
    def acting(self) -> str:
        agent = self.ledger.agent
        if agent is None:
            raise RuntimeError("team tools are called through call_as(agent, call)")
        return agent

    def finished_for(self, agent: str) -> bool:
        return agent in self.reports

    def call_as(self, agent: str, call: ToolCall) -> Mapping[str, Any]:
        with self.ledger.acting(agent):
            return self._handlers[call.name](**call.args)

    # -- the two new tools -------------------------------------------------------------
    def claim_batch(self, batch_id: str) -> dict[str, Any]:
        args = {"batch_id": batch_id}
        refused = self._unknown("claim_batch", args, batch_id)
        if refused:
            return refused
        owner = self.claims.setdefault(batch_id, self.acting)
        if owner != self.acting:
            self.ledger.append("claim_batch", args, False, f"claimed by {owner}")
            return {"status": "taken", "batch_id": batch_id, "owner": owner}
        self.ledger.append("claim_batch", args, True)
        return {"status": "claimed", "batch_id": batch_id, "owner": owner}

    def wait(self) -> dict[str, Any]:
        self.ledger.append("wait", {}, True)
        return {"status": "waited"}

    # -- the tools whose meaning depends on the agent ---------------------------------
    def list_batches(self) -> dict[str, Any]:
        self.ledger.append("list_batches", {}, True)
        listed = {entry["batch_id"]: entry for entry in self.prepared_case.listing["batches"]}
        return {
            "batches": [dict(listed[batch_id]) for batch_id in self.lists[self.acting]],
            "staging": [self._board_entry(entry) for entry in self.prepared_case.listing["batches"]],
        }

    def _board_entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        batch_id = entry["batch_id"]
        return {
            **entry,
            "lists": [agent for agent in self.agents if batch_id in self.lists[agent]],
            "claimed_by": self.claims.get(batch_id),
            "loaded": self.load_counts.get(batch_id, 0),
            "quarantined": batch_id in self.quarantined,
        }

    def load_batch(self, batch_id: str) -> dict[str, Any]:
        return self._claimed_elsewhere("load_batch", {"batch_id": batch_id}) or super().load_batch(batch_id)

    def quarantine_batch(self, batch_id: str, column: str, defect_type: str) -> dict[str, Any]:
        args = {"batch_id": batch_id, "column": column, "defect_type": defect_type}
        return self._claimed_elsewhere("quarantine_batch", args) or super().quarantine_batch(**args)

    def _claimed_elsewhere(self, action: str, args: dict[str, Any]) -> dict[str, Any] | None:
        owner = self.claims.get(args["batch_id"])
        if owner is None or owner == self.acting:
            return None
        return self._refuse(action, args, f"batch {args['batch_id']!r} is claimed by {owner}")

    def submit_report(self, loaded: list[str], quarantined: list[str]) -> dict[str, Any]:
        # The single-agent world keeps one report: hand it this agent's, then keep what it stored.
        self.report = self.reports.get(self.acting)
        result = super().submit_report(loaded, quarantined)
        if self.report is not None:
            self.reports[self.acting] = self.report
        self.report = None
        return result


__all__ = ["AGENT_DONE_ACTION", "AttributedLedger", "TeamWorld", "agent_names"]
