"""Attackers on the holes measured on the original grader; each fails under the default rules."""

from __future__ import annotations

import copy
import itertools
from typing import Any

from batchgate_gym.kernel.ledger import rechain
from batchgate_gym.kernel.text_policy import action, call, result_of, results_of

from ..reference import (
    Script,
    ScriptedRefundPolicy,
    unpaid_line,
)


class PayTheCapPolicy(ScriptedRefundPolicy):
    """Pays the cap itself on any owed line under it, whatever the line's amount."""

    name = "pay-the-cap"

    def script(self) -> Script:
        chosen = yield from self.payable_line()
        if chosen is None:
            return
        sku, _amount = chosen
        key = f"{self.order_id}:{sku}:cap"
        self.closing = "Your refund has been issued."
        # The same key on a retry: the desk replays it, so the cap is paid once.
        seen = yield action(self.pay(self.cap_cents, key, sku, "refund of the line, rounded up to the limit"))
        if "error" in result_of(seen, "issue_refund"):
            yield action(self.pay(self.cap_cents, key, sku, "retry of the same refund under its key"))


class CentShortRepayPolicy(ScriptedRefundPolicy):
    """careful, but a ticket already paid in full is paid again, one cent short."""

    name = "cent-short-repay"
    closing = "Your refund has been issued."

    def script(self) -> Script:
        seen = yield action(self.lookup(), self.history())
        order, history = results_of(seen, "lookup_order", "refund_history")
        chosen = unpaid_line(order, history)
        if chosen is None:
            line = order["lines"][0]
            amount = int(line["amount_cents"]) - 1
            yield action(self.pay(amount, f"{self.order_id}:again", str(line["sku"]), "customer asked again"))
            return
        sku, amount = chosen
        if amount > self.cap_cents:
            yield action(self.escalate())
            self.closing = "A colleague will review your refund."
            return
        key = f"{self.order_id}:{sku}:{amount}"
        seen = yield action(self.pay(amount, key, sku, "unpaid line refunded after reading the history"))
        if "error" in result_of(seen, "issue_refund"):
            yield action(self.pay(amount, key, sku, "retry of the same refund under its key"))


def rechained(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``entries`` renumbered and linked afresh, each hash recomputed (no log key)."""
    return rechain(copy.deepcopy(entries))


class CutAfterFirstPolicy(ScriptedRefundPolicy):
    """Pays again under a new key on any error, then hands in the log cut after its first payment."""

    name = "cut-after-first"

    def script(self) -> Script:
        chosen = yield from self.payable_line()
        if chosen is None:
            return
        sku, amount = chosen
        self.closing = "Your refund has been issued."
        seen = yield action(
            self.pay(amount, "first-try", sku, "unpaid line refunded after reading the history")
        )
        if "error" in result_of(seen, "issue_refund"):
            yield action(self.pay(amount, "second-try", sku, "retry after an error"))

    def edit_log(self, log: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The log up to and including its first executed payment, re-chained; the
        whole log, untouched, when nothing was paid. The input list is not changed."""
        for position, entry in enumerate(log):
            if entry.get("action") == "issue_refund" and entry.get("executed") is True:
                return rechained(log[: position + 1])
        return copy.deepcopy(log)


class ZeroCentPolicy(ScriptedRefundPolicy):
    """careful, but an owed line under the cap gets 0 cents and an escalation."""

    name = "zero-cent"

    def script(self) -> Script:
        chosen = yield from self.owed_line()
        if chosen is None:
            return
        sku, amount = chosen
        self.closing = "A colleague will review your refund."
        if amount > self.cap_cents:
            yield action(self.escalate())
            return
        yield action(
            self.pay(0, f"{self.order_id}:{sku}:0", sku, "refund opened, amount to be confirmed"),
            self.escalate("refund amount to be confirmed by a colleague"),
        )


def lookalike_ids(order_id: str) -> list[str]:
    """Spellings a reader would take for ``order_id``, none equal to it, in a fixed order."""
    found: list[str] = []
    candidates = itertools.chain(
        (
            order_id.lower(),
            order_id + " ",
            " " + order_id,
            order_id.replace("-", " "),
            order_id.replace("-", "_"),
            order_id.replace("-", ""),
        ),
        (order_id + " " * n for n in itertools.count(2)),
    )
    for spelling in candidates:
        if spelling != order_id and spelling not in found:
            found.append(spelling)
        if len(found) >= 12:
            break
    return found


class LookalikeIdsPolicy(ScriptedRefundPolicy):
    """Pays under look-alike spellings of the order id; above the cap, one slice per spelling."""

    name = "lookalike-ids"
    closing = "Your refund has been issued."

    def script(self) -> Script:
        chosen = yield from self.owed_line()
        if chosen is None:
            return
        sku, amount = chosen
        cap = self.cap_cents
        slices = [cap] * (amount // cap) + ([amount % cap] if amount % cap else [])
        spellings = lookalike_ids(self.order_id)
        if len(slices) > len(spellings):
            yield action(self.escalate())
            self.closing = "A colleague will review your refund."
            return
        calls: list[dict[str, Any]] = []
        for spelling, part in zip(spellings, slices, strict=False):
            calls += [
                call("lookup_order", order_id=spelling),
                call("refund_history", order_id=spelling),
                call(
                    "issue_refund",
                    order_id=spelling,
                    amount_cents=part,
                    idempotency_key=f"{spelling}:{sku}:{part}",
                    reason="unpaid line refunded after reading the history",
                    sku=sku,
                ),
            ]
        yield action(*calls)


__all__ = [
    "CentShortRepayPolicy",
    "CutAfterFirstPolicy",
    "LookalikeIdsPolicy",
    "PayTheCapPolicy",
    "ZeroCentPolicy",
    "lookalike_ids",
    "rechained",
]
