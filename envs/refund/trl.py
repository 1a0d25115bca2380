"""The refund desk for TRL's ``environment_factory``: one method per tool, ``void_refund`` too
with recovery on (see :mod:`batchgate_gym.llm.trl_env`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchgate_gym.desks.refund.tools import RECOVERY_TOOLS, REFUND_TOOLS
from batchgate_gym.llm.trl_env import DeskToolEnv, desk_tools


@desk_tools
class RefundToolEnv(DeskToolEnv):
    """The refund desk: tools to look up an order and its refunds, pay, escalate, and reply."""

    desk_name = "refund"
    tool_specs = REFUND_TOOLS

    @classmethod
    def _class_for(cls, env_kwargs: Mapping[str, Any]) -> type[DeskToolEnv]:
        """With recovery on, :class:`RefundRecoveryToolEnv`, which adds ``void_refund``."""
        return RefundRecoveryToolEnv if env_kwargs.get("recovery") is True else cls

    def lookup_order(self, order_id: str) -> str:
        return self._send("lookup_order", {"order_id": order_id})

    def refund_history(self, order_id: str) -> str:
        return self._send("refund_history", {"order_id": order_id})

    def issue_refund(
        self, order_id: str, amount_cents: int, idempotency_key: str, reason: str, sku: str = ""
    ) -> str:
        arguments = {"order_id": order_id, "amount_cents": amount_cents, "idempotency_key": idempotency_key}
        return self._send("issue_refund", {**arguments, "reason": reason, "sku": sku})

    def escalate(self, order_id: str, reason: str) -> str:
        return self._send("escalate", {"order_id": order_id, "reason": reason})

    def reply(self, message: str) -> str:
        return self._send("reply", {"message": message})


@desk_tools
class RefundRecoveryToolEnv(RefundToolEnv):
    """The refund desk with recovery on: its tools and ``void_refund``, which takes back a payment."""

    tool_specs = RECOVERY_TOOLS

    def __init__(self, cases: Any = None, **env_kwargs: Any) -> None:
        if env_kwargs.get("recovery", True) is not True:
            raise ValueError("RefundRecoveryToolEnv plays with recovery on; use RefundToolEnv without it")
        super().__init__(cases, **{**env_kwargs, "recovery": True})

    def void_refund(self, order_id: str, idempotency_key: str, reason: str) -> str:
        arguments = {"order_id": order_id, "idempotency_key": idempotency_key, "reason": reason}
        return self._send("void_refund", arguments)


__all__ = ["RefundRecoveryToolEnv", "RefundToolEnv"]
