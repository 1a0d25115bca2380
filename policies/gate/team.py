"""Reference policies for the team environment, one instance per agent, text only.

* ``careful-with-claims`` coordinates through the shared board: it claims every
  batch on its list first, then checks and decides only the batches it won
  (customers before orders). When an orders batch shows rows whose customer is
  not in the warehouse while some customers batch is still pending, it waits
  (polls the board) until every customers batch is loaded or quarantined, then
  checks again before deciding.
* ``careful-without-claims`` is the single-agent careful policy run on each
  agent's own list, in its own order, blind to the others: a batch on two lists
  can be loaded twice, or quarantined as a duplicate after the other agent loaded
  it, and orders can be checked before another agent's customers arrive.
* ``naive`` is the single-agent naive policy: load everything on your list.

The team's ``list_batches`` answers with the agent's own list under ``batches``,
so the single-agent policies run unchanged.
"""

from __future__ import annotations

from typing import Any

from batchgate_gym.desks.gate.rules_sql import check_query
from batchgate_gym.kernel.text_policy import call, result_of, results, results_of

from ..base import Policy
from .reference import CarefulPolicy, NaivePolicy

_ORPHANS = "customer_id__orphan_reference"


class CarefulWithoutClaims(CarefulPolicy):
    name = "careful-without-claims"


class CarefulWithClaims(CarefulPolicy):
    """Careful, plus claims first and a wait for pending customers before judging orphans."""

    name = "careful-with-claims"

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        super().reset(observation, info)
        self.rechecked: str | None = None  # the batch checked again after waiting

    def act(self, observation: str) -> str:
        if self.stage == "listed":
            return self._claim(observation)
        if self.stage == "claiming":
            return self._start_checking(observation)
        if self.stage == "waiting":
            return self._poll_or_recheck(observation)
        if self.stage == "checking" and self.current and self._must_wait(observation):
            self._record(observation)
            self.stage = "waiting"
            return self._send(call("list_batches"))
        return super().act(observation)

    def _claim(self, observation: str) -> str:
        self.contract, listing = results_of(observation, "read_contract", "list_batches")
        self.mine = listing["batches"]
        if not self.mine:
            return self._report()
        self.stage = "claiming"
        return self._send(*(call("claim_batch", batch_id=b["batch_id"]) for b in self.mine))

    def _start_checking(self, observation: str) -> str:
        won = {
            r["batch_id"]
            for tool, r in results(observation)
            if tool == "claim_batch" and r.get("status") == "claimed"
        }
        self.queue = self.check_order([b for b in self.mine if b["batch_id"] in won])
        self.stage = "checking"
        self.current = None
        return self._next([])

    def _must_wait(self, observation: str) -> bool:
        """Orphan rows found, and not yet re-checked after the customers settled."""
        check = result_of(observation, "run_sql")
        if "error" in check or _ORPHANS not in check.get("columns", []):
            return False
        orphans = check["rows"][0][check["columns"].index(_ORPHANS)]
        return bool(orphans) and self.rechecked != self.checking["batch_id"]

    def _poll_or_recheck(self, observation: str) -> str:
        board = result_of(observation, "list_batches")["staging"]
        if any(_pending_customers(entry) for entry in board):
            return self._send(call("list_batches"))
        self.stage = "checking"
        self.rechecked = self.checking["batch_id"]
        return self._send(call("run_sql", query=check_query(self.checking, self.contract)))


def _pending_customers(entry: dict[str, Any]) -> bool:
    """A customers batch someone will still load or quarantine."""
    return (
        entry["table"] == "customers" and entry["lists"] and not entry["loaded"] and not entry["quarantined"]
    )


TEAM_POLICIES: dict[str, type[Policy]] = {
    "careful-with-claims": CarefulWithClaims,
    "careful-without-claims": CarefulWithoutClaims,
    "naive": NaivePolicy,
}

__all__ = ["TEAM_POLICIES", "CarefulWithClaims", "CarefulWithoutClaims"]
