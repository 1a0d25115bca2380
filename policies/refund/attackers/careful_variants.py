"""careful with one thing wrong: the payment tool's answers ignored, or every owed line paid
one cent short."""

from __future__ import annotations

from batchgate_gym.kernel.text_policy import action

from ..reference import (
    CarefulRefundPolicy,
    Script,
)


class IgnoreErrorsPolicy(CarefulRefundPolicy):
    """careful, except that it sends each payment once and never reads the answer."""

    name = "ignore-errors"

    def pay_once(self, sku: str, amount: int) -> Script:
        reason = "unpaid line refunded after reading the history"
        yield action(self.pay(amount, f"{self.order_id}:{sku}:{amount}", sku, reason))
        self.closing = "Your refund has been issued."


class ShortPayPolicy(CarefulRefundPolicy):
    """careful, except that every owed line is paid one cent short: a payment under what is
    owed is never a duplicate and never past the cap, and it still leaves the refund unpaid."""

    name = "short-pay"

    def pay_once(self, sku: str, amount: int) -> Script:
        yield from super().pay_once(sku, max(1, amount - 1))


__all__ = ["IgnoreErrorsPolicy", "ShortPayPolicy"]
