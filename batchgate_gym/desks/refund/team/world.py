"""One refund desk shared by N workers: one queue, one payment provider, one ledger, one log.

The team world is the single desk (:class:`~..world.RefundWorld`: the same tools,
lying provider, lagging ledger and refusals) with the calls made *as* a worker:

* every log entry names the worker (the kernel's attributed ledger);
* each worker works its own list of the queue's tickets; its reply to one brings
  its next, and its reply to its last ends its part (the episode ends when every
  worker's part has);
* the provider scopes idempotency keys to the caller, as providers scope them to
  an account's credentials: a key protects one worker from paying twice, never two
  workers from each paying once;
* ``claim_order`` holds an order for the first worker to claim it; under the default
  rules a worker may claim only the order of the ticket it is working (a claim of any
  other is refused and logged), and the desk refuses (and logs) a payment, void or
  escalation on an order another worker holds.

Nothing else changes, so two workers who read an empty (or lagging) ledger and both
pay really both move money.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from batchgate_gym.kernel.codec import ToolCall, ToolSpec
from batchgate_gym.kernel.ledger import LogIntegrityError
from batchgate_gym.kernel.team import AGENT_KEY, AttributedLedger

from ..cases import RefundCase
from ..tools import REFUND_ENDING, REPLY_ACTION, VOID_ACTION
from ..world import RefundWorld, next_ticket_result
from .tools import CLAIM_ACTION, WAIT_ACTION, team_tools

_HELD_ACTIONS = ("issue_refund", "escalate", VOID_ACTION)


class RefundTeamWorld(RefundWorld):
    """The shared desk; :meth:`call_as` runs a call as one worker."""

    ledger: AttributedLedger

    def __init__(
        self,
        agents: Sequence[str],
        rules: str = "default",
        log_key: bytes | None = None,
        recovery: bool = False,
    ) -> None:
        self.agents = tuple(agents)
        super().__init__(rules=rules, log_key=log_key, recovery=recovery)
        self._handlers[CLAIM_ACTION] = self.claim_order
        self._handlers[WAIT_ACTION] = self.wait
        self.lists: dict[str, tuple[int, ...]] = {}
        self.places: dict[str, int] = {}
        self.claims: dict[Any, str] = {}
        self.acting: str | None = None

    def log_settings(self) -> dict[str, Any]:
        """The desk's settings, the workers and the deal: all a replay needs to rebuild the team."""
        lists = {worker: list(tickets) for worker, tickets in self.lists.items()}
        return {**super().log_settings(), "workers": list(self.agents), "lists": lists}

    def reset(  # type: ignore[override]  # the deal comes before the nonce
        self, case: RefundCase, lists: Mapping[str, Sequence[int]] | None = None, nonce: str | None = None
    ) -> None:
        """Reset to ``case`` and give each worker its tickets (indexes into ``case.tickets``;
        without ``lists``, every worker the first ticket)."""
        count = len(case.tickets)
        if lists is not None and set(lists) != set(self.agents):
            raise ValueError(f"lists must name exactly the workers {list(self.agents)}")
        dealt: dict[str, tuple[int, ...]] = {
            worker: tuple(lists[worker]) if lists is not None else (0,) for worker in self.agents
        }
        for worker, tickets in dealt.items():
            if not tickets or not all(type(i) is int and 0 <= i < count for i in tickets):
                raise ValueError(
                    f"lists[{worker!r}] must be ticket indexes in 0..{count - 1}, not {tickets!r}"
                )
        self.lists = dealt  # before the reset: entry 0 records the deal
        super().reset(case, nonce)
        self.places = dict.fromkeys(self.agents, 0)
        self.claims = {}
        self.acting = None

    def new_ledger(self) -> AttributedLedger:  # every ledger of this world names its worker
        return AttributedLedger(self.log_key)

    # -- who is acting -----------------------------------------------------------------
    def _enter(self, worker: str) -> None:
        self.acting = worker
        self.ticket_index = self.lists[worker][min(self.places[worker], len(self.lists[worker]) - 1)]

    def key_scope(self, key: Any) -> Any:
        return (self.acting, key)

    def finished_for(self, worker: str) -> bool:
        return self.places.get(worker, 0) >= len(self.lists.get(worker, ()))

    @property
    def finished(self) -> bool:
        return all(self.finished_for(worker) for worker in self.agents)

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        return team_tools(self.recovery)

    def call_as(self, worker: str, call: ToolCall) -> Mapping[str, Any]:
        if self.ledger.sealed or self.finished_for(worker):
            return {"error": REFUND_ENDING.after_end}
        self._enter(worker)
        with self.ledger.acting(worker):
            held = self._held_by_another(call)
            if held is not None:
                return self._refuse(call.name, dict(call.args), held)
            return self._handlers[call.name](**call.args)

    def _held_by_another(self, call: ToolCall) -> str | None:
        holder = self.claims.get(call.args.get("order_id"))
        if self.original or call.name not in _HELD_ACTIONS or holder in (None, self.acting):
            return None
        return f"order {call.args.get('order_id')!r} is claimed by {holder}"

    # -- the two team tools, and the reply -------------------------------------------------
    def claim_order(self, order_id: Any) -> Mapping[str, Any]:
        args = {"order_id": order_id}
        problem = self._id_problem(order_id) or self._claim_problem(order_id)
        if problem:
            return self._refuse(CLAIM_ACTION, args, problem)
        holder = self.claims.setdefault(order_id, str(self.acting))
        self.ledger.append(CLAIM_ACTION, args, holder == self.acting)
        if holder == self.acting:
            return {"status": "claimed", "order_id": order_id}
        return {"status": "held", "order_id": order_id, "by": holder}

    def _claim_problem(self, order_id: Any) -> str | None:
        """Why the default rules refuse this claim: a worker may claim only the order of
        the ticket it is working, so that no worker can hold the rest of the queue."""
        own = self.ticket.order.order_id
        if self.original or order_id == own:
            return None
        return f"a worker may claim only the order of its own ticket, {own!r}"

    def wait(self) -> Mapping[str, Any]:
        return {"status": "waited"}

    def _next_ticket(self) -> bool:
        worker = str(self.acting)
        self.places[worker] += 1
        if self.finished_for(worker):
            self.replied = self.finished
            return False
        self._enter(worker)
        return True

    def reply(self, message: Any) -> Mapping[str, Any]:
        self.ledger.append(REPLY_ACTION, {"message": message}, True)
        if self._next_ticket():
            return {"status": "sent", **next_ticket_result(self.ticket)}
        return {"status": "sent"}

    # -- replay ------------------------------------------------------------------------
    def reapply(self, entry: Mapping[str, Any]) -> None:
        """Re-do a verified entry as the worker it names (claims included)."""
        args = entry["args"]
        action = entry["action"]
        if not isinstance(args, Mapping):
            return
        worker = args.get(AGENT_KEY)
        if worker not in self.agents:
            if entry["executed"] is True and action in self._handlers:
                raise LogIntegrityError(f"entry {entry['seq']}: a call by no worker of this team")
            return
        if self.finished_for(worker):
            if entry["executed"] is True and action in self._handlers:
                raise LogIntegrityError(f"entry {entry['seq']}: a call after the worker's last reply")
            return
        self._enter(worker)
        if action == CLAIM_ACTION and entry["executed"] is True:
            if self._claim_problem(args.get("order_id")) is not None:
                raise LogIntegrityError(
                    f"entry {entry['seq']}: a claim of an order not on the worker's ticket"
                )
            if self.claims.setdefault(args.get("order_id"), worker) != worker:
                raise LogIntegrityError(f"entry {entry['seq']}: a claim of an order another worker holds")
            return
        held = self.claims.get(args.get("order_id"), worker) != worker and not self.original
        if entry["executed"] is True and action in _HELD_ACTIONS and held:
            raise LogIntegrityError(f"entry {entry['seq']}: a call on an order another worker holds")
        super().reapply(entry)


__all__ = ["RefundTeamWorld"]
