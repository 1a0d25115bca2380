"""Refund macro moves, and the numbers an agent knows about its ticket, read from the tools' results.

A macro agent on the refund desk does not write tool calls; it picks one of a
short list of moves (read the refund history, pay line 2, pay line 2 again under a
new key, escalate, reply; with recovery, take back line 2's latest payment).
:class:`RefundMacroTracker` turns a move into the JSON tool call a text agent would
send and turns the results that answer it into a fixed-size vector and an action
mask. It reads only what a text agent reads: the ticket's order id, the cap and the
turn limit from the task text, then the results of its own calls, handed over as
the tools returned them (:meth:`~RefundMacroTracker.record`) or read off the text
observation's ``> call`` lines and JSON results (:meth:`~RefundMacroTracker.absorb`).
It never sees the case, the world or the log.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from batchgate_gym.kernel.text_policy import ToolCallDict, action, call, results

# The order of the moves is the layout's, and RefundMacroTracker.mask lists them in it.
DESK_MOVES: tuple[str, ...] = ("lookup", "history", "escalate", "reply")
LINE_MOVES: tuple[str, ...] = ("pay", "repay")
RECOVERY_MOVES: tuple[str, ...] = ("void",)  # per line, only when the desk offers recovery
GLOBAL_FEATURES = 11
LINE_FEATURES = 9
RECOVERY_FEATURES = 1  # per line, with recovery: a void of the line's was sent
PAY_REASON = "refund of an unpaid line of the order"
REPAY_REASON = "payment sent again after the provider answered with an error"
ESCALATE_REASON = "refund above the limit I may pay alone: needs a human"
REPLY_MESSAGE = "We have looked into your refund request."
VOID_REASON = "a payment sent twice for the same line: taking the second one back"

_TICKET = re.compile(r'Ticket for order (.+?): "')
_CAP = re.compile(r"You may refund up to (\d+) cents")
_TURNS = re.compile(r"You have (\d+) turns")
_QUEUE = re.compile(r"Your queue holds \d+ tickets")
_TURN = re.compile(r"^turn (\d+) of (\d+)")


@dataclass(frozen=True)
class RefundMacroLayout:
    """How a ``Discrete`` index maps to a move: the desk moves first (line ``-1``),
    then ``pay`` and ``repay`` (and, with ``recovery``, ``void``) for each of ``lines``
    order-line slots. Without recovery the layout is exactly what it always was."""

    lines: int = 4
    recovery: bool = False

    @functools.cached_property
    def line_moves(self) -> tuple[str, ...]:  # the mask asks for it per line at every move
        return LINE_MOVES + RECOVERY_MOVES if self.recovery else LINE_MOVES

    @functools.cached_property
    def line_features(self) -> int:
        return LINE_FEATURES + (RECOVERY_FEATURES if self.recovery else 0)

    @functools.cached_property
    def n_actions(self) -> int:
        return len(DESK_MOVES) + self.lines * len(self.line_moves)

    @functools.cached_property
    def n_features(self) -> int:
        return GLOBAL_FEATURES + self.lines * self.line_features

    @functools.cached_property
    def opening_mask(self) -> np.ndarray:
        """The moves allowed before the lookup: look up, read the history, reply (no line
        slot is used yet). Read-only: a tracker starts from a copy."""
        allowed = np.zeros(self.n_actions, dtype=np.int8)
        allowed[[DESK_MOVES.index("lookup"), DESK_MOVES.index("history"), DESK_MOVES.index("reply")]] = 1
        allowed.flags.writeable = False
        return allowed

    def decode(self, index: int) -> tuple[int, str]:
        """``(line, move)``; a desk move has line ``-1``."""
        if not 0 <= index < self.n_actions:
            raise ValueError(f"action {index} is outside 0..{self.n_actions - 1}")
        if index < len(DESK_MOVES):
            return -1, DESK_MOVES[index]
        moves = self.line_moves
        line, move = divmod(index - len(DESK_MOVES), len(moves))
        return line, moves[move]

    def index(self, line: int, move: str) -> int:
        if move in DESK_MOVES:
            return DESK_MOVES.index(move)
        moves = self.line_moves
        return len(DESK_MOVES) + line * len(moves) + moves.index(move)


@dataclass
class LineState:
    """One line of the ticket's order as the lookup showed it, and what was sent on it."""

    sku: str
    amount_cents: int
    sent: int = 0  # payments sent on this line
    last_error: bool = False  # the latest of them answered with an error
    keys: list[str] = field(default_factory=list)
    voided: list[str] = field(default_factory=list)  # keys a void was sent for


@dataclass(frozen=True)
class Ticket:
    """What the task text states: the order, the cap and the turn limit."""

    order_id: str
    cap_cents: int
    max_turns: int


@functools.lru_cache(maxsize=256)  # a fixed case's task text is one string, read once
def read_ticket(task: str) -> Ticket:
    """The ticket line, the cap and the turn limit of a reset observation (one ticket:
    a task that announces a queue of them is refused)."""
    ticket, cap, turns = _TICKET.findall(task), _CAP.search(task), _TURNS.search(task)
    if not ticket or cap is None or turns is None:
        raise ValueError("the task text names no ticket, cap or turn limit")
    if _QUEUE.search(task):
        raise ValueError("the macro moves play one ticket an episode, not a queue of them")
    return Ticket(str(ticket[-1]), int(cap.group(1)), int(turns.group(1)))


# The global features' places in the vector, in its order (the per-line features follow).
(
    _LOOKED_UP,
    _HISTORY_READ,
    _HISTORY_FRESH,
    _ESCALATED,
    _ANY_SENT,
    _ANY_ERROR,
    _LINES_USED,
    _TOTAL_OVER_CAP,
    _ROWS_USED,
    _ROW_IN_FLIGHT,
    _TURNS_USED,
) = range(GLOBAL_FEATURES)
_LOOKUP_MOVE, _HISTORY_MOVE, _ESCALATE_MOVE = (
    DESK_MOVES.index(move) for move in ("lookup", "history", "escalate")
)


class RefundMacroTracker:
    """Translate macro moves to text actions and text observations to numbers.

    Episode protocol: :meth:`start` with the reset observation; send :meth:`opening`
    (look the order up) as the first action; pass every following observation to
    :meth:`absorb`; then :meth:`vector` and :meth:`mask` describe the state and
    :meth:`action_text` turns the chosen index into the next action. Without text:
    :meth:`opening_calls` and :meth:`move_calls` give the calls, :meth:`record`
    takes their results.

    The vector and the mask are kept as arrays and written as the state changes: a
    desk-wide value where it changes, a line's values whenever anything the line shows
    changed (its payments, keys or voids, the history, the lookup). Most moves touch one
    line or none, so a move rewrites a few numbers instead of all of them.
    """

    def __init__(self, layout: RefundMacroLayout) -> None:
        self.layout = layout
        self.ticket = Ticket("", 1, 1)
        self.turn = 0
        self.lines: list[LineState] = []
        self.looked_up = False
        self.total_cents = 0
        self.history: list[dict[str, Any]] | None = None  # the latest read's rows
        self.history_fresh = False  # read since the last payment was sent
        self.escalated = False
        self._sent: list[tuple[str, int]] = []
        self._features = np.zeros(layout.n_features, dtype=np.float32)
        self._allowed = layout.opening_mask.copy()
        self._stale_lines: set[int] = set()  # lines whose numbers changed since they were written

    def start(self, task: str) -> None:
        self.ticket = read_ticket(task)

    def opening_calls(self) -> list[ToolCallDict]:
        """The first action's call: look the ticket's order up."""
        self._sent = [("lookup_order", -1)]
        return [call("lookup_order", order_id=self.ticket.order_id)]

    def opening(self) -> str:
        """:meth:`opening_calls` as the text action."""
        return action(*self.opening_calls())

    # -- reading -----------------------------------------------------------------------
    def absorb(self, observation: str) -> None:
        """Update from the text observation that answered the last action."""
        found = _TURN.match(observation)
        self.record(results(observation), int(found.group(1)) if found else None)

    def record(self, answered: Sequence[tuple[str, Mapping[str, Any]]], turn: int | None = None) -> None:
        """Update from the results that answered the last action's calls: ``(tool name,
        result)`` in order (what :meth:`absorb` reads off the text), at ``turn``
        (``None``: as it was)."""
        if turn is not None:
            self.turn = turn
        for (tool, line), (_name, result) in zip(self._sent, answered, strict=False):
            self._record(tool, line, result)
        self._sent = []

    def _record(self, tool: str, line: int, result: Mapping[str, Any]) -> None:
        if tool == "issue_refund":
            state = self.lines[line]
            state.sent += 1
            state.last_error = "error" in result
            self._set_fresh(False)
            self._features[_ANY_SENT] = True
            self._features[_ANY_ERROR] = any(state.last_error for state in self.lines)
            self._stale_lines.add(line)
        elif tool == "void_refund":
            self._set_fresh(False)  # the history will show the row voided, in its own time
        elif "error" in result:
            return
        elif tool == "lookup_order":
            self._read_order(result)
        elif tool == "refund_history":
            self._read_history([row for row in result.get("refunds") or [] if isinstance(row, dict)])
        elif tool == "escalate":
            self.escalated = result.get("status") == "escalated"
            self._features[_ESCALATED] = self.escalated
            self._allowed[_ESCALATE_MOVE] = self.looked_up and not self.escalated

    def _set_fresh(self, fresh: bool) -> None:
        """The history was just read (or a payment or void has made it stale): every
        line's void depends on it."""
        self.history_fresh = fresh
        self._features[_HISTORY_FRESH] = fresh
        self._allowed[_HISTORY_MOVE] = not fresh
        if self.layout.recovery:
            self._stale_lines.update(range(len(self.lines)))

    def _read_history(self, rows: list[dict[str, Any]]) -> None:
        self.history = rows
        features, slots = self._features, self.layout.lines
        features[_HISTORY_READ] = True
        features[_ROWS_USED] = min(1.0, len(rows) / slots)
        features[_ROW_IN_FLIGHT] = bool(rows) and any(row.get("in_flight") for row in rows)
        self._set_fresh(True)
        self._stale_lines.update(range(len(self.lines)))  # every line's rows may differ

    def _read_order(self, order: Mapping[str, Any]) -> None:
        if self.looked_up:
            return  # the order does not change: a second lookup keeps what was sent per line
        lines = order.get("lines") or []
        if len(lines) > self.layout.lines:
            raise ValueError(f"an order of {len(lines)} lines does not fit in {self.layout.lines} line slots")
        self.lines = [LineState(str(line["sku"]), int(line["amount_cents"])) for line in lines]
        self.total_cents = int(order.get("total_cents") or 0)
        self.looked_up = True
        features = self._features
        features[_LOOKED_UP] = True
        features[_LINES_USED] = len(self.lines) / self.layout.lines
        features[_TOTAL_OVER_CAP] = self.total_cents > self.ticket.cap_cents
        self._allowed[_LOOKUP_MOVE] = False
        self._allowed[_ESCALATE_MOVE] = not self.escalated
        self._stale_lines.update(range(len(self.lines)))

    # -- writing -----------------------------------------------------------------------
    def action_text(self, index: int) -> str:
        """The text action for macro ``index``: :meth:`move_calls` as text (``""`` for none)."""
        calls = self.move_calls(index)
        return action(*calls) if calls else ""

    def move_action(self, index: int) -> tuple[list[ToolCallDict], str]:
        """:meth:`move_calls` and the text action they make (``""`` for none)."""
        calls = self.move_calls(index)
        if not calls:
            return calls, ""
        (one,) = calls  # a move is one call
        return calls, _action_text(one["name"], tuple(one["arguments"].items()))

    def move_calls(self, index: int) -> list[ToolCallDict]:
        """The calls of macro ``index`` (none for a move on an empty line slot, or a void
        with nothing to take back)."""
        line, move = self.layout.decode(index)
        order_id = self.ticket.order_id
        if line >= len(self.lines):
            self._sent = []
            return []
        self._sent = [(_TOOL_OF_MOVE[move], line)]
        if move == "void":
            return self._void(line)
        if move == "lookup":
            return [call("lookup_order", order_id=order_id)]
        if move == "history":
            return [call("refund_history", order_id=order_id)]
        if move == "escalate":
            return [call("escalate", order_id=order_id, reason=ESCALATE_REASON)]
        if move == "reply":
            return [call("reply", message=REPLY_MESSAGE)]
        return [self._payment(line, again=move == "repay")]

    def _payment(self, line: int, again: bool) -> ToolCallDict:
        """``pay`` uses the line's own key, so sending it twice pays once; ``repay`` a new one."""
        state = self.lines[line]
        key = f"{self.ticket.order_id}:{state.sku}:{state.amount_cents}"
        if again:
            key += f":retry-{state.sent + 1}"
        state.keys.append(key)
        self._stale_lines.add(line)
        return call(
            "issue_refund",
            order_id=self.ticket.order_id,
            amount_cents=state.amount_cents,
            idempotency_key=key,
            reason=REPAY_REASON if again else PAY_REASON,
            sku=state.sku,
        )

    def _void(self, line: int) -> list[ToolCallDict]:
        """Take back the line's latest payment not yet taken back (nothing to take back: no call)."""
        state = self.lines[line]
        key = self._void_key(state)
        if key is None:
            self._sent = []
            return []
        state.voided.append(key)
        self._stale_lines.add(line)
        return [call("void_refund", order_id=self.ticket.order_id, idempotency_key=key, reason=VOID_REASON)]

    def _void_key(self, state: LineState) -> str | None:
        return next((key for key in reversed(state.keys) if key not in state.voided), None)

    def _standing_rows(self, state: LineState) -> int:
        """Payments on the line's sku the latest history read shows standing (not voided)."""
        return sum(1 for row in self.history or [] if row.get("sku") == state.sku and not row.get("voided"))

    # -- numbers -----------------------------------------------------------------------
    def mask(self) -> np.ndarray:
        """Moves worth sending now, an ``np.int8`` array with 1 where allowed: a lookup
        not yet answered, a history read not answered since the last payment, one
        escalation, a first payment on each line, and on a line whose latest payment
        answered with an error the same payment again or one under a new key; with recovery, a void on a line
        whose fresh history shows two or more payments standing, while one of the
        keys sent on it is not yet voided. Replying is always allowed. (A new array
        each call; the line slots the order lacks stay 0.)"""
        self._write_stale_lines()
        return self._allowed.copy()

    def vector(self) -> np.ndarray:
        """The features, a new array each call: callers may keep or change it. Flags are
        written as bools: float32(True) is 1.0, as float(True) is."""
        self._write_stale_lines()
        self._features[_TURNS_USED] = min(1.0, self.turn / max(1, self.ticket.max_turns))
        return self._features.copy()

    def _write_stale_lines(self) -> None:
        """Each changed line's features and moves, in the layout's places."""
        if not self._stale_lines:
            return
        rows, cap = self.history or [], self.ticket.cap_cents
        width, moves = self.layout.line_features, len(self.layout.line_moves)
        for line in self._stale_lines:
            state = self.lines[line]
            start = GLOBAL_FEATURES + line * width
            self._features[start : start + width] = self._line_features(state, rows, cap)
            first = len(DESK_MOVES) + line * moves
            self._allowed[first : first + moves] = self._line_moves(state)
        self._stale_lines.clear()

    def _line_moves(self, state: LineState) -> list[bool]:
        """The line's moves allowed, in :attr:`RefundMacroLayout.line_moves` order."""
        # After an error ``pay`` may be sent again: under the line's own key it pays once,
        # whether the first went through (a replay) or never reached the provider.
        allowed = [state.sent == 0 or state.last_error, state.sent > 0 and state.last_error]
        if self.layout.recovery:
            allowed.append(
                self.history_fresh and self._standing_rows(state) >= 2 and self._void_key(state) is not None
            )
        return allowed

    def _line_features(self, state: LineState, rows: list[dict[str, Any]], cap: int) -> list[Any]:
        """One line's features; its history rows are looked at only when the history shows any."""
        amount, sent = state.amount_cents, state.sent
        values: list[Any] = [1.0, amount / (amount + cap) if amount > 0 else 0.0, amount > cap]
        mine = [row for row in rows if row.get("sku") == state.sku] if rows else rows
        if mine:
            keys = state.keys
            values += (
                True,
                any(row.get("in_flight") for row in mine),
                any(row.get("idempotency_key") in keys for row in mine),
            )
        else:
            values += (False, False, False)
        values += (sent > 0, sent > 1, state.last_error)
        if self.layout.recovery:
            values.append(bool(state.voided))
        return values


@functools.lru_cache(maxsize=4096)
def _action_text(name: str, arguments: tuple[tuple[str, str | int], ...]) -> str:
    """The text action of one call a tracker makes, written once per call: a fixed case's
    moves make the same calls in every episode. The arguments are strings and ints (never
    bools or floats), so equal keys are equal calls and write the same text."""
    return action(call(name, **dict(arguments)))


_TOOL_OF_MOVE = {
    "lookup": "lookup_order",
    "history": "refund_history",
    "escalate": "escalate",
    "reply": "reply",
    "pay": "issue_refund",
    "repay": "issue_refund",
    "void": "void_refund",
}

__all__ = [
    "DESK_MOVES",
    "GLOBAL_FEATURES",
    "LINE_FEATURES",
    "LINE_MOVES",
    "RECOVERY_FEATURES",
    "RECOVERY_MOVES",
    "LineState",
    "RefundMacroLayout",
    "RefundMacroTracker",
    "Ticket",
    "read_ticket",
]
