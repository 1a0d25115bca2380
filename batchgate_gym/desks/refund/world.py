"""The refund desk of one episode and what its four tools (five with recovery) and the reply do.

The state: the ticket's order (the only one ``lookup_order`` knows), the ledger of
refunds made before the episode (read-only; in-flight rows count as paid), this
episode's payments and escalations, the idempotency keys it has used (each with the
amount it first paid), and the ledger's lag budget (under the
``stale_after_write`` fault the case's ``tool_faults.lag_reads``, 1 when absent as
in the original; else 0): each history read of an order this episode has paid on
spends one, and sees none of the episode's payments while any is left. A ticket's
first ``tool_faults.unsent_payments`` payments (0 when absent) never reach the
provider: each is logged as not executed, moves nothing, keeps no key and answers
with the same timeout as a payment that went through, so an error is no proof
either way and only a history read (or the same key again) tells. The cap is
the case's own (``cap_cents``, 5000 unless the case names another); no tool
enforces it; nothing paid can be taken back. Every call that changes or reads the
desk is logged *before* it takes effect, in the kernel's hash-chained
:class:`~batchgate_gym.kernel.ledger.Ledger`.

A case may carry a queue of further tickets over the same ledger (``case.queue``).
Then the reply to one ticket brings the next (its order id and text in the reply's
result) and only the reply to the last ends the episode. Keys, payments and the
ledger are the episode's, shared by every ticket; the faults and the lag are each
ticket's own: a payment made under a ticket stays missing from history reads of
its order (whichever ticket reads it) until that ticket's lag budget is spent.

With ``recovery=True`` (default rules only) ``void_refund`` takes back a standing
payment of the episode named by its order and key (only the caller's own: the key
scope is :meth:`RefundWorld.key_scope`, per worker in the team desk); it is logged
before the money comes back and answers a timeout under the ticket's timeout fault.

Two rule sets. ``rules="original"`` behaves exactly as the original desk. The
default rules add: ``issue_refund`` refuses (logged with ``executed: false``, no
money) unless the order is the ticket's, the amount an int above 0, the key a
non-empty string, the reason a string and the sku a line of the order (left out
only on a one-line order, which means that line); the other tools refuse ids and
reasons that are not strings, and escalating another order; and once the agent has
replied, the desk refuses every call without logging it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from batchgate_gym.kernel.codec import ToolCall, ToolSpec
from batchgate_gym.kernel.ledger import Ledger, LogIntegrityError

from .cases import LedgerRow, RefundCase, lag_reads, unsent_payments
from .tools import REFUND_ENDING, REPLY_ACTION, VOID_ACTION, desk_tools

RULES = ("default", "original")
MIN_ESCALATION_REASON = 8  # characters, once trimmed

TIMEOUT = "timeout_but_executes"
NOTE_FAILS = "succeeds_but_note_write_fails"
STALE = "stale_after_write"


# What a case caches: each ticket's lag reads and unsent payments, checked before anything changes.
_BUDGETS = "refund world: each ticket's lag reads and unsent payments"
TIMEOUT_ANSWER = {"error": "timeout waiting for payment provider", "status": "unknown"}
UNSENT_NOTE = "not sent: the payment never reached the provider"  # the log's reason; the agent sees a timeout


def effect_id(order_id: object, sku: object, amount_cents: object) -> str:
    """``<order_id>:<sku or ORDER>:<amount_cents>``, each part as Python's ``str`` gives it."""
    return f"{order_id!s}:{(sku or 'ORDER')!s}:{amount_cents!s}"


def row_effect_id(row: LedgerRow) -> str:
    return effect_id(row.order_id, row.sku, row.amount_cents)


@dataclass(frozen=True, slots=True)
class Payment:
    """Money that moved: one executed ``issue_refund``, as logged (``sku`` is ``None`` for none).

    ``position`` is the entry's place in the log (its ``seq``), so that a grader can
    ask what was read before it.
    """

    order_id: Any
    amount_cents: Any
    sku: Any
    idempotency_key: Any
    reason: Any
    effect_id: str
    position: int

    @classmethod
    def from_args(cls, args: Mapping[str, Any], position: int) -> Payment:
        logged = args.get("effect_id")
        order_id, amount, sku = args.get("order_id"), args.get("amount_cents"), args.get("sku")
        return cls(
            order_id=order_id,
            amount_cents=amount,
            sku=sku,
            idempotency_key=args.get("idempotency_key"),
            reason=args.get("reason"),
            effect_id=logged if isinstance(logged, str) else effect_id(order_id, sku, amount),
            position=position,
        )

    def log_args(self) -> dict[str, Any]:
        return {
            "order_id": self.order_id,
            "amount_cents": self.amount_cents,
            "sku": self.sku,
            "idempotency_key": self.idempotency_key,
            "effect_id": self.effect_id,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class Escalation:
    order_id: Any
    reason: str
    position: int


def next_ticket_result(ticket: RefundCase) -> dict[str, Any]:
    """What a reply returns when another ticket waits: its order id and the customer's text."""
    return {"next_ticket": {"order_id": ticket.order.order_id, "message": ticket.prompt}}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _budgets(case: RefundCase) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Each ticket's lag reads and unsent payments (a bad value raises ``ValueError``)."""
    tickets = case.tickets
    return tuple([lag_reads(t) for t in tickets]), tuple([unsent_payments(t) for t in tickets])


class RefundWorld:
    """One episode's refund desk (the kernel's *desk*): ``tools``, ``finished``,
    ``call`` and ``ledger``, plus ``reset(case)`` and ``reapply(entry)`` for replay.

    ``rules`` is ``"default"`` or ``"original"``; ``hints`` only changes the task
    text but is recorded with the rules in the log's entry 0; ``log_key`` chains the
    log with HMAC.
    """

    def __init__(
        self,
        rules: str = "default",
        hints: bool = False,
        log_key: bytes | None = None,
        recovery: bool = False,
    ) -> None:
        if rules not in RULES:
            raise ValueError(f"rules must be one of {list(RULES)}, not {rules!r}")
        if not isinstance(hints, bool):
            raise ValueError(f"hints must be a bool, not {type(hints).__name__}")
        if not isinstance(recovery, bool):
            raise ValueError(f"recovery must be a bool, not {type(recovery).__name__}")
        if recovery and rules == "original":
            raise ValueError(
                "recovery needs the default rules: the original desk had no way to take money back"
            )
        self.rules = rules
        self.hints = hints
        self.recovery = recovery
        self.log_key = log_key
        self.ledger = self.new_ledger()
        self._case: RefundCase | None = None
        self._handlers: dict[str, Callable[..., Mapping[str, Any]]] = {
            "lookup_order": self.lookup_order,
            "refund_history": self.refund_history,
            "issue_refund": self.issue_refund,
            "escalate": self.escalate,
            VOID_ACTION: self.void_refund,
            REPLY_ACTION: self.reply,
        }
        self._clear()

    def new_ledger(self) -> Ledger:
        """The log each reset begins (a team world's names the agent of each entry)."""
        return Ledger(self.log_key)

    @property
    def original(self) -> bool:
        return self.rules == "original"

    def log_settings(self) -> dict[str, Any]:
        """What entry 0 records, for a replay to rebuild the same desk (``recovery``
        only when on, so that every other log begins as before)."""
        settings: dict[str, Any] = {"rules": self.rules, "hints": self.hints}
        if self.recovery:
            settings["recovery"] = True
        return settings

    def _clear(self) -> None:
        self.payments: list[Payment] = []
        self.paid_under: list[int] = []  # the ticket each payment was made under, by index
        self.voided: set[int] = set()  # indexes into payments of those taken back
        self.escalations: list[Escalation] = []
        self.used_keys: list[tuple[Any, Any]] = []  # (key, the amount it first paid), in order
        self.lag_budgets: list[int] = []  # per ticket: history reads that still miss its payments
        self.unsent_budgets: list[int] = []  # per ticket: payments still to be lost before the provider
        self.ticket_index = 0
        self.replied = False

    def reset(self, case: RefundCase, nonce: str | None = None) -> None:
        """Start an episode of ``case``; ``nonce`` is the episode's, for the log's entry 0."""
        budgets, unsent = case.derived(_BUDGETS, lambda: _budgets(case))
        self._case = case
        self._clear()
        self.lag_budgets = list(budgets)
        self.unsent_budgets = list(unsent)
        self.ledger = self.new_ledger()
        self.ledger.begin(case.digest, self.log_settings(), nonce)

    @property
    def lag_budget(self) -> int:
        """History reads that will still miss the current ticket's payments."""
        return self.lag_budgets[self.ticket_index]

    @property
    def case(self) -> RefundCase:
        if self._case is None:
            raise RuntimeError("reset the world with a case first")
        return self._case

    @property
    def ticket(self) -> RefundCase:
        """The ticket being worked: the case itself, or one of its queue after a reply
        (``case.tickets[ticket_index]``, read without building that tuple on every call)."""
        case, index = self.case, self.ticket_index
        return case if index == 0 else case.queue[index - 1]

    @property
    def cap_cents(self) -> int:
        """The most the agent may refund on the ticket's order by itself: the case's cap."""
        return self.case.cap_cents

    # -- the kernel's World protocol -----------------------------------------------
    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        return desk_tools(self.recovery)

    @property
    def finished(self) -> bool:
        return self.replied

    def call(self, call: ToolCall) -> Mapping[str, Any]:
        if self.ledger.sealed or (self.replied and not self.original):
            # After the end nothing reaches the desk, and nothing more is logged.
            return {"error": REFUND_ENDING.after_end}
        return self._handlers[call.name](**call.args)

    # -- tools -------------------------------------------------------------------------
    def _refuse(self, action: str, args: dict[str, Any], reason: str) -> dict[str, Any]:
        self.ledger.append(action, args, False, reason)
        return {"error": reason}

    def _id_problem(self, order_id: object) -> str | None:
        if not self.original and not isinstance(order_id, str):
            return f"order_id must be a string, not {type(order_id).__name__}"
        return None

    def lookup_order(self, order_id: Any) -> Mapping[str, Any]:
        args = {"order_id": order_id}
        problem = self._id_problem(order_id)
        if problem:
            return self._refuse("lookup_order", args, problem)
        self.ledger.append("lookup_order", args, True)
        order = self.ticket.order
        if order_id != order.order_id:
            return {"error": "no such order"}
        return {
            "order_id": order.order_id,
            "customer_id": order.customer_id,
            "total_cents": order.total_cents,
            "lines": [{"sku": line.sku, "amount_cents": line.amount_cents} for line in order.lines],
        }

    def refund_history(self, order_id: Any) -> Mapping[str, Any]:
        args = {"order_id": order_id}
        problem = self._id_problem(order_id)
        if problem:
            return self._refuse("refund_history", args, problem)
        self.ledger.append("refund_history", args, True)
        rows = [row.as_dict() for row in self.case.ledger if row.order_id == order_id]
        mine = [i for i, p in enumerate(self.payments) if p.order_id == order_id]
        # The ledger has not caught up with payments made under a ticket whose lag is
        # left: each read that would have shown them spends one and misses them.
        lagging = {self.paid_under[i] for i in mine if self.lag_budgets[self.paid_under[i]] > 0}
        for t in lagging:
            self.lag_budgets[t] -= 1
        rows += [self._history_row(i) for i in mine if self.paid_under[i] not in lagging]
        return {"order_id": order_id, "refunds": rows}

    def _history_row(self, index: int) -> dict[str, Any]:
        payment = self.payments[index]
        row = {
            "order_id": payment.order_id,
            "amount_cents": payment.amount_cents,
            "sku": payment.sku,
            "idempotency_key": payment.idempotency_key,
            "day": 0,
        }
        if index in self.voided:
            row["voided"] = True
        return row

    def refund_problem(self, order_id: Any, amount_cents: Any, key: Any, reason: Any, sku: Any) -> str | None:
        """Why the default rules refuse this payment, or ``None``: they allow it."""
        order = self.ticket.order
        if order_id != order.order_id or not isinstance(order_id, str):
            return f"order_id must be the ticket's order, {order.order_id!r}"
        if not _is_int(amount_cents) or amount_cents <= 0:
            return "amount_cents must be a whole number of cents above 0"
        if not isinstance(key, str) or not key:
            return "idempotency_key must be a non-empty string"
        if not isinstance(reason, str):
            return "reason must be a string"
        if sku == "" and len(order.lines) > 1:
            return "this order has several lines: name the sku to refund"
        if sku != "" and order.line(sku) is None:
            return f"sku must be a line of the order: {', '.join(line.sku for line in order.lines)}"
        return None

    def issue_refund(
        self, order_id: Any, amount_cents: Any, idempotency_key: Any, reason: Any, sku: Any = ""
    ) -> Mapping[str, Any]:
        if not self.original:
            problem = self.refund_problem(order_id, amount_cents, idempotency_key, reason, sku)
            if problem:
                args = {
                    "order_id": order_id,
                    "amount_cents": amount_cents,
                    "sku": sku,
                    "idempotency_key": idempotency_key,
                    "reason": reason,
                }
                return self._refuse("issue_refund", args, problem)
            if sku == "":
                sku = self.ticket.order.lines[0].sku  # a one-line order: the line is implied
        scoped = self.key_scope(idempotency_key)
        for used, first_amount in self.used_keys:
            if used == scoped:
                return {"status": "ok", "replayed": True, "amount_cents": first_amount}
        for row in self.case.ledger:
            if row.idempotency_key == idempotency_key:
                return {"status": "already_done", "replayed": True, "amount_cents": row.amount_cents}
        logged_sku = None if sku == "" else sku
        if self.unsent_budgets[self.ticket_index] > 0:
            return self._lost(order_id, amount_cents, logged_sku, idempotency_key, reason)
        payment = Payment(
            order_id=order_id,
            amount_cents=amount_cents,
            sku=logged_sku,
            idempotency_key=idempotency_key,
            reason="" if reason is None else reason,
            effect_id=effect_id(order_id, logged_sku, amount_cents),
            position=len(self.ledger),
        )
        self.ledger.append("issue_refund", payment.log_args(), True)  # logged before the money moves
        self._record_payment(payment)
        fault = self.ticket.tool_faults.get("issue_refund")
        if fault == TIMEOUT:
            return dict(TIMEOUT_ANSWER)
        if fault == NOTE_FAILS:
            return {
                "error": "refund posted, but writing the CRM note failed",
                "status": "ok_note_failed",
                "amount_cents": amount_cents,
            }
        return {"status": "ok", "amount_cents": amount_cents}

    def _lost(self, order_id: Any, amount_cents: Any, sku: Any, key: Any, reason: Any) -> Mapping[str, Any]:
        """A payment that never reached the provider: logged as not executed (no effect id:
        nothing moved), its key not kept, answered with the timeout of one that went through."""
        self.unsent_budgets[self.ticket_index] -= 1
        args = {
            "order_id": order_id,
            "amount_cents": amount_cents,
            "sku": sku,
            "idempotency_key": key,
            "reason": "" if reason is None else reason,
        }
        self.ledger.append("issue_refund", args, False, UNSENT_NOTE)
        return dict(TIMEOUT_ANSWER)

    def key_scope(self, key: Any) -> Any:
        """What the provider remembers a key as: the key itself here (one caller)."""
        return key

    def _record_payment(self, payment: Payment) -> None:
        self.payments.append(payment)
        self.paid_under.append(self.ticket_index)
        self.used_keys.append((self.key_scope(payment.idempotency_key), payment.amount_cents))

    def escalate(self, order_id: Any, reason: Any) -> Mapping[str, Any]:
        args = {"order_id": order_id, "reason": reason}
        if not self.original:
            problem = self._id_problem(order_id)
            if problem is None and not isinstance(reason, str):
                problem = f"reason must be a string, not {type(reason).__name__}"
            if problem:
                return self._refuse("escalate", args, problem)
        if not isinstance(reason, str) or len(reason.strip()) < MIN_ESCALATION_REASON:
            return {"error": "a reason is required"}  # not logged
        if not self.original and order_id != self.ticket.order.order_id:
            return self._refuse(
                "escalate", args, f"only the ticket's order, {self.ticket.order.order_id!r}, can be escalated"
            )
        self.ledger.append("escalate", args, True)
        self.escalations.append(Escalation(order_id, reason, len(self.ledger) - 1))
        return {"status": "escalated"}

    def void_refund(self, order_id: Any, idempotency_key: Any, reason: Any) -> Mapping[str, Any]:
        """Take back this episode's standing payment with this order and key. Under the
        ticket's timeout fault the void goes through and the provider reports a timeout."""
        args = {"order_id": order_id, "idempotency_key": idempotency_key, "reason": reason}
        index = self.standing_payment(order_id, idempotency_key)
        if index is None:
            return self._refuse(
                VOID_ACTION, args, "no payment of this episode stands under that order and key"
            )
        payment = self.payments[index]
        self.ledger.append(VOID_ACTION, args, True)  # logged before the money comes back
        self.voided.add(index)
        if self.ticket.tool_faults.get("issue_refund") == TIMEOUT:
            return dict(TIMEOUT_ANSWER)
        return {"status": "voided", "amount_cents": payment.amount_cents}

    def standing_payment(self, order_id: Any, key: Any) -> int | None:
        """The index of the payment a void of ``order_id`` and ``key`` takes back, if any."""
        scoped = self.key_scope(key)  # a caller takes back only what its own key paid
        return next(
            (
                i
                for i, (p, (used, _)) in enumerate(zip(self.payments, self.used_keys, strict=True))
                if i not in self.voided and p.order_id == order_id and used == scoped
            ),
            None,
        )

    def reply(self, message: Any) -> Mapping[str, Any]:
        self.ledger.append(REPLY_ACTION, {"message": message}, True)
        if self._next_ticket():
            return {"status": "sent", **next_ticket_result(self.ticket)}
        return {"status": "sent"}

    def _next_ticket(self) -> bool:
        """Move on after a reply: to the queue's next ticket (True), or end the episode."""
        if self.ticket_index + 1 < len(self.case.tickets):
            self.ticket_index += 1
            return True
        self.replied = True
        return False

    # -- replay ------------------------------------------------------------------------
    def reapply(self, entry: Mapping[str, Any]) -> None:
        """Re-do what a verified entry did: record each payment, escalation and the reply.

        A payment entry must be one this desk would have paid: a key not used before
        (else the desk would have answered with a replay), the effect id its arguments
        give, and under the default rules arguments the rules allow, made before the reply.
        """
        if entry["executed"] is not True:
            return
        action, args, seq = entry["action"], entry["args"], entry["seq"]
        if action == REPLY_ACTION:
            self._next_ticket()
        elif action == "escalate":
            self.escalations.append(Escalation(args["order_id"], args["reason"], seq))
        elif action == VOID_ACTION:
            index = (
                self.standing_payment(args["order_id"], args["idempotency_key"]) if self.recovery else None
            )
            if index is None:
                raise LogIntegrityError(f"entry {seq}: a void of no standing payment")
            self.voided.add(index)
        elif action == "issue_refund":
            if self.replied and not self.original:
                raise LogIntegrityError(f"entry {seq}: a payment after the reply")
            payment = Payment.from_args(args, seq)
            if payment.effect_id != effect_id(payment.order_id, payment.sku, payment.amount_cents):
                raise LogIntegrityError(f"entry {seq}: the effect id disagrees with the payment")
            key = payment.idempotency_key
            if any(used == self.key_scope(key) for used, _ in self.used_keys) or any(
                row.idempotency_key == key for row in self.case.ledger
            ):
                raise LogIntegrityError(f"entry {seq}: a reused key pays nothing, yet the entry paid")
            if not self.original:
                problem = self.refund_problem(
                    payment.order_id, payment.amount_cents, key, payment.reason, payment.sku
                )
                if problem:
                    raise LogIntegrityError(f"entry {seq}: the desk would have refused this payment")
            self._record_payment(payment)


__all__ = [
    "RULES",
    "TIMEOUT_ANSWER",
    "UNSENT_NOTE",
    "Escalation",
    "Payment",
    "RefundWorld",
    "effect_id",
    "next_ticket_result",
    "row_effect_id",
]
