"""The refund desk's policies for ``recovery=True`` (the ``void_refund`` tool).

* ``notice-and-void``: careful's reading, naive's blind retry (a new key on an error),
  then it notices: it reads the history until its payments show and voids every
  payment of its own on the line past the first.
* ``pay-twice-void``: the attacker for recovery (also in :data:`.attackers.ATTACKERS`):
  it pays the owed line twice on purpose, then voids the second.

Without recovery their voids are refused as an unknown tool.
"""

from __future__ import annotations

from collections.abc import Generator

from batchgate_gym.kernel.text_policy import action, call, result_of, results

from ..base import Policy
from .reference import Script, ScriptedRefundPolicy, history_rows

AUDIT_READS = 6  # history reads in one step: more than the deepest lag (5) can hide


class NoticeAndVoidPolicy(ScriptedRefundPolicy):
    """careful's reading, naive's blind retry (a new key on an error), then it notices:
    it reads the history until its payments show and voids every payment of its own
    on the line past the first."""

    name = "notice-and-void"
    closing = "Your refund has been issued."
    retries = 1  # new-key payments after an error

    def script(self) -> Script:
        chosen = yield from self.payable_line()
        if chosen is None:
            return
        sku, amount = chosen
        keys = [f"{self.order_id}:{sku}:attempt-{n}" for n in range(1, self.retries + 2)]
        used = []
        for key in keys:
            used.append(key)
            seen = yield action(self.pay(amount, key, sku, "unpaid line refunded after reading the history"))
            if "error" not in result_of(seen, "issue_refund") and not self.pays_twice:
                break
        yield from self.void_extras(used)

    pays_twice = False  # the attacker below pays every key whatever the result

    def void_extras(self, keys: list[str]) -> Generator[str, str, None]:
        seen = yield action(*([self.history()] * AUDIT_READS))
        reads = [result for tool, result in results(seen) if tool == "refund_history"]
        shown = (
            [row for row in history_rows(reads[-1]) if row.get("idempotency_key") in keys] if reads else []
        )
        standing = [row for row in shown if not row.get("voided")]
        extra = [str(row["idempotency_key"]) for row in standing[1:]]
        if extra:
            reason = "a duplicate of the refund already paid on this line"
            yield action(
                *(
                    call("void_refund", order_id=self.order_id, idempotency_key=key, reason=reason)
                    for key in extra
                )
            )


class PayTwiceVoidPolicy(NoticeAndVoidPolicy):
    """The attacker for recovery: it pays the owed line twice on purpose, under two
    keys, then voids the second, hoping money that came back scores as money never sent."""

    name = "pay-twice-void"
    pays_twice = True


RECOVERY_POLICIES: dict[str, type[Policy]] = {
    "notice-and-void": NoticeAndVoidPolicy,
    "pay-twice-void": PayTwiceVoidPolicy,
}
"""Policies for the desk with ``recovery=True`` (without it, their voids are refused)."""


__all__ = ["AUDIT_READS", "RECOVERY_POLICIES", "NoticeAndVoidPolicy", "PayTwiceVoidPolicy"]
