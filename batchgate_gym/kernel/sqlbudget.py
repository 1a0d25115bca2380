"""How much one agent query may cost and return, and the share one action's queries split.

A budget's counted limits (VM steps, compile calls, inlined tokens, CPU time, memory)
decide what an agent's query did; ``max_seconds`` is the wall clock's safety net only.
:class:`ActionBudget` holds the queries of one action to a total as well as each to its
own limit, for the VM steps and the CPU time alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from .sqlshape import MAX_INLINED_TOKENS


@dataclass(frozen=True, slots=True)
class SqlBudget:
    """How much one agent query may cost and return."""

    max_steps: int = 2_000_000  # VM steps of one query: deterministic, decides what ran
    max_action_steps: int = 8_000_000  # VM steps of every query of one action together
    max_compile_calls: int = 20_000  # authorizer calls while one statement compiles
    max_inlined_tokens: int = MAX_INLINED_TOKENS  # tokens of the statement with its CTEs inlined (sqlshape)
    max_seconds: float = 30.0  # wall clock: a safety net only (SqlSafetyStop, an infrastructure error)
    max_cpu_seconds: float = 2.0  # CPU time of the query's thread: work the step count cannot see
    max_action_cpu_seconds: float = 6.0  # ... and of every query of one action together
    max_value_bytes: int = 20_000
    max_like_pattern: int = 200
    max_columns: int = 64
    max_rows: int = 50
    max_cell_chars: int = 200
    max_blob_bytes: int = 100
    max_query_chars: int = 20_000
    max_memory_bytes: int = 64 << 20  # growth of SQLite's memory allowed during one query (MEMORY_COUNT)


class ActionBudget:
    """A per-query budget that one action's queries also share: ``per_query`` each, at most
    ``per_action`` together. Until :meth:`begin` is first called (an episode calls it as each
    action starts), each query has ``per_query`` alone. ``unit`` words an amount (a format)."""

    __slots__ = ("per_action", "per_query", "spent", "unit")

    def __init__(self, per_query: float, per_action: float, unit: str) -> None:
        self.per_query = per_query
        self.per_action = per_action
        self.unit = unit
        self.spent: float | None = None  # spent by this action's earlier queries; None: no action

    def begin(self) -> None:
        self.spent = 0

    def end(self) -> None:
        """No action any more: each query has ``per_query`` alone until the next :meth:`begin`."""
        self.spent = None

    def allowance(self) -> float | None:
        """What the next query may spend (less than ``per_query`` near the action's end); None: nothing."""
        if self.spent is None:
            return self.per_query
        left = self.per_action - self.spent
        return min(self.per_query, left) if left > 0 else None

    def spend(self, amount: float) -> None:
        if self.spent is not None:
            self.spent += amount

    def used_up(self) -> str:
        """The refusal of a query that comes after the action's budget is spent."""
        return f"this action's queries have used their {self.unit.format(self.per_action)}; run the query in a later action"
