"""Macro actions over batch slots, and the numbers an agent knows, read from the tools' results.

A macro agent does not write tool calls; it picks one of a fixed list of moves
(profile slot 2, check slot 1 against rule ``amount__out_of_range``, load slot 0,
quarantine slot 1 citing ``currency``/``wrong_currency``, submit the report). The
:class:`GateMacroTracker` turns a move into the JSON tool call a text agent would send
and turns the results that answer it into a fixed-size vector and an action mask.
It reads only what a text agent reads: the results of its own calls, handed over as
the tools returned them (:meth:`~GateMacroTracker.record`) or read off the text
observation's ``> call`` lines and JSON results (:meth:`~GateMacroTracker.absorb`),
so the training wrapper and the text-level adapter that runs a trained network
share one translation.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from batchgate_gym.desks.gate.contract import TABLE_COLUMNS, contract
from batchgate_gym.desks.gate.rules_sql import Rule, contract_rules, rule_query
from batchgate_gym.kernel.plain import FrozenDict, frozen
from batchgate_gym.kernel.text_policy import ToolCallDict, action, call, last_results, results

TABLES = ("orders", "customers")
# Every rule name of both tables, in a fixed order (names depend on the contract's
# structure only, which is the same in every case; values are read per episode).
RULE_NAMES: tuple[str, ...] = tuple(r.name for t in TABLES for r in contract_rules(t, contract()))
PROFILE_COLUMNS: tuple[str, ...] = tuple(dict.fromkeys(c for t in TABLES for c in TABLE_COLUMNS[t]))
SLOT_MOVES: tuple[str, ...] = (
    "profile",
    *(f"check:{name}" for name in RULE_NAMES),
    "load",
    *(f"quarantine:{name}" for name in RULE_NAMES),
)
_SLOT_HEAD = 7  # present, orders, customers, rows, loaded, quarantined, profiled
_LOADED_AT, _QUARANTINED_AT, _PROFILED_AT = 4, 5, 6  # in the head
_PROFILE_FEATURES = 2 * len(PROFILE_COLUMNS) + 8
_PROFILE_AT = _SLOT_HEAD + 3 * len(RULE_NAMES)  # the profile's flags, after the checks
SLOT_FEATURES = _PROFILE_AT + _PROFILE_FEATURES
_MOVE_AT = {move: index for index, move in enumerate(SLOT_MOVES)}  # a move's place in a slot
_CHECK_AT = {name: _MOVE_AT["check:" + name] for name in RULE_NAMES}
_QUARANTINE_AT = {name: _MOVE_AT["quarantine:" + name] for name in RULE_NAMES}
_UNCHECKED = (0.0, 0.0, 0.0)  # a rule's three check features before any check
_RULE_AT = {name: index for index, name in enumerate(RULE_NAMES)}
_TOOL_OF_MOVE = {
    "profile": "profile_batch",
    "check": "run_sql",
    "load": "load_batch",
    "quarantine": "quarantine_batch",
}
# What a move in a slot sends: its tool, and the rule it names ("" for none).
_SENT_OF_MOVE = tuple((_TOOL_OF_MOVE[move.partition(":")[0]], move.partition(":")[2]) for move in SLOT_MOVES)
_TURN = re.compile(r"^turn (\d+) of (\d+)")


@dataclass(frozen=True)
class GateMacroLayout:
    """How a ``Discrete`` index maps to (slot, move); the last index submits the report."""

    slots: int = 4

    # Worked out once: every move asks for them.
    @functools.cached_property
    def n_actions(self) -> int:
        return self.slots * len(SLOT_MOVES) + 1

    @functools.cached_property
    def n_features(self) -> int:
        return self.slots * SLOT_FEATURES + 1

    @functools.cached_property
    def submit(self) -> int:
        return self.n_actions - 1

    def decode(self, index: int) -> tuple[int, str]:
        """``(slot, move)``; the submit action is ``(-1, "submit")``."""
        if not 0 <= index < self.n_actions:
            raise ValueError(f"action {index} is outside 0..{self.n_actions - 1}")
        if index == self.submit:
            return -1, "submit"
        return divmod(index, len(SLOT_MOVES))[0], SLOT_MOVES[index % len(SLOT_MOVES)]

    def index(self, slot: int, move: str) -> int:
        if move == "submit":
            return self.submit
        return slot * len(SLOT_MOVES) + SLOT_MOVES.index(move)


@dataclass
class SlotState:
    """What the agent has seen of one listed batch and done to it."""

    batch: dict[str, Any]
    checks: dict[str, tuple[int, int]] = field(default_factory=dict)  # rule -> (rows failing, load epoch)
    profile: Mapping[str, Any] | None = None
    rules: Mapping[str, Rule] = field(default_factory=dict)  # this table's rules, from the contract read
    loaded: bool = False
    quarantined: bool = False
    # (profile, contract, rows, their features): the features kept while those stay the same
    profile_features: tuple[Any, Any, int, np.ndarray] | None = field(default=None, repr=False, compare=False)
    # The load epoch up to which the tracker's vector (and mask) hold this slot; -1: not
    # written (or to be written again whole, from the slot's state).
    features_epoch: int = field(default=-1, repr=False, compare=False)
    mask_epoch: int = field(default=-1, repr=False, compare=False)
    # Each move's call and text, made once per case and shared by its episodes (None: not kept)
    kept_moves: list[tuple[ToolCallDict, str] | None] | None = field(default=None, repr=False, compare=False)

    @property
    def decided(self) -> bool:
        return self.loaded or self.quarantined


class GateMacroTracker:
    """Translate macro moves to text actions and text observations to numbers.

    Episode protocol: send :meth:`opening` (read the contract, list the batches) as
    the first action; pass every following observation to :meth:`absorb`; then
    :meth:`vector` and :meth:`mask` describe the state and :meth:`action_text`
    turns the chosen index into the next action. Without text: :meth:`opening_calls`
    and :meth:`move_calls` give the calls, :meth:`record` takes their results.
    ``max_turns`` is the turn limit until a text observation's header says it.
    """

    def __init__(self, layout: GateMacroLayout, max_turns: int = 1) -> None:
        self.layout = layout
        self.slots: list[SlotState] = []
        self.contract: dict[str, Any] | None = None
        self.load_epoch = 0  # executed loads so far: a check is stale once the warehouse changed
        self.turn, self.max_turns = 0, max_turns  # the text's header says them again each turn
        self.loaded_ids: list[str] = []
        self.quarantined_ids: list[str] = []
        self._sent: list[tuple[str, int, str]] = []
        self._vector = np.zeros(layout.n_features, dtype=np.float32)  # kept, slot by slot
        self._mask = self._empty_mask()  # kept, slot by slot

    def opening_calls(self) -> list[ToolCallDict]:
        """The first action's calls: read the contract, list the batches."""
        self._sent = [("read_contract", -1, ""), ("list_batches", -1, "")]
        return [call("read_contract"), call("list_batches")]

    def opening(self) -> str:
        """:meth:`opening_calls` as the text action."""
        return action(*self.opening_calls())

    def absorb(self, observation: str) -> None:
        """Update from the text observation that answered the last action."""
        found = _TURN.match(observation)
        if found:
            self.turn, self.max_turns = int(found.group(1)), int(found.group(2))
        self.record(results(observation))

    def record(self, answered: Sequence[tuple[str, Mapping[str, Any]]], turn: int | None = None) -> None:
        """Update from the results that answered the last action's calls: ``(tool name,
        result)`` in order (what :meth:`absorb` reads off the text), at ``turn``
        (``None``: as it was)."""
        if turn is not None:
            self.turn = turn
        if self._sent and self._sent[0][0] == "read_contract":
            self._begin(answered)
        else:
            for (tool, slot, rule), (_name, result) in zip(self._sent, answered, strict=False):
                self._record(tool, slot, rule, result)
        self._sent = []

    def _begin(self, answered: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        self.contract, listing = last_results(answered, "read_contract", "list_batches")
        listed = listing["batches"]
        if len(listed) > self.layout.slots:
            raise ValueError(f"{len(listed)} batches do not fit in {self.layout.slots} slots")
        self.slots = []
        for batch in listed:
            rules = _slot_rules(batch["table"], self.contract)
            self.slots.append(
                SlotState(batch, rules=rules, kept_moves=_kept_moves(batch, rules, self.contract))
            )
        self._vector[:] = 0.0
        self._mask = self._empty_mask()
        for slot, state in enumerate(self.slots):
            # A listed batch with nothing seen or done yet: its head, every other feature 0,
            # and its table's moves allowed (written whole here, not worked out per feature).
            base = slot * SLOT_FEATURES
            self._vector[base : base + _SLOT_HEAD] = _fresh_head(state.batch)
            state.features_epoch = self.load_epoch
            at = slot * len(SLOT_MOVES)
            self._mask[at : at + len(SLOT_MOVES)] = _fresh_slot_mask(tuple(state.rules))
            state.mask_epoch = self.load_epoch

    def _empty_mask(self) -> np.ndarray:
        empty = np.zeros(self.layout.n_actions, dtype=np.int8)
        empty[self.layout.submit] = 1
        return empty

    def _record(self, tool: str, slot: int, rule: str, result: Mapping[str, Any]) -> None:
        if "error" in result and tool != "run_sql":
            return
        state = self.slots[slot] if 0 <= slot < len(self.slots) else None
        if tool == "run_sql" and state is not None:
            rows = result.get("rows") or [[0]]
            failing = rows[0][0] if isinstance(rows[0][0], int) else 0  # an error counts as checked
            state.checks[rule] = (failing, self.load_epoch)
            self._write_check(slot, state, rule, failing)
            return
        if state is None:
            return
        if tool == "profile_batch":
            state.profile = result
            self._write_profile(slot, state)
        elif tool == "load_batch" and result.get("status") == "loaded":
            state.loaded = True
            self.loaded_ids.append(state.batch["batch_id"])
            self._write_decided(slot, state, _LOADED_AT)
            self._next_load_epoch()
        elif tool == "quarantine_batch" and result.get("status") == "quarantined":
            state.quarantined = True
            self.quarantined_ids.append(state.batch["batch_id"])
            self._write_decided(slot, state, _QUARANTINED_AT)

    def _write_check(self, slot: int, state: SlotState, rule: str, failing: int) -> None:
        """A check answered now changes the slot's three features of that rule and its
        check move, nothing else: written in place when the slot's numbers are up to date
        (else the slot is written whole at the next vector or mask, as after a load)."""
        if state.features_epoch == self.load_epoch:
            at = slot * SLOT_FEATURES + _SLOT_HEAD + len(_UNCHECKED) * _RULE_AT[rule]
            self._vector[at : at + len(_UNCHECKED)] = (1.0, 1.0, float(failing > 0))  # fresh, checked
        if state.mask_epoch == self.load_epoch and rule in state.rules:
            self._mask[slot * len(SLOT_MOVES) + _CHECK_AT[rule]] = 0  # answered since the last load

    # A result changes a few of a slot's numbers: written in place where the vector and the
    # mask hold the slot up to date (a slot they do not hold is written whole at the next
    # vector or mask, from its state).

    def _write_profile(self, slot: int, state: SlotState) -> None:
        """A profile taken: the slot's profiled flag, its profile's flags, its profile move."""
        if state.features_epoch == self.load_epoch:
            base = slot * SLOT_FEATURES
            self._vector[base + _PROFILED_AT] = 1.0
            rows = max(1, int(state.batch.get("rows", 0)))
            self._vector[base + _PROFILE_AT : base + SLOT_FEATURES] = self._profile_part(state, rows)
        if state.mask_epoch == self.load_epoch:
            self._mask[slot * len(SLOT_MOVES) + _MOVE_AT["profile"]] = 0

    def _write_decided(self, slot: int, state: SlotState, flag_at: int) -> None:
        """A batch loaded or quarantined: its flag set, none of its moves allowed."""
        if state.features_epoch == self.load_epoch:
            self._vector[slot * SLOT_FEATURES + flag_at] = 1.0
        if state.mask_epoch == self.load_epoch:
            self._mask[slot * len(SLOT_MOVES) : (slot + 1) * len(SLOT_MOVES)] = 0

    def _next_load_epoch(self) -> None:
        """The warehouse changed: every check answered so far is stale (its fresh feature 0,
        its move allowed again on an undecided batch of the rule's table)."""
        was, self.load_epoch = self.load_epoch, self.load_epoch + 1
        for slot, state in enumerate(self.slots):
            if state.features_epoch == was:
                base = slot * SLOT_FEATURES + _SLOT_HEAD
                for name in state.checks:
                    self._vector[base + len(_UNCHECKED) * _RULE_AT[name]] = 0.0
                state.features_epoch = self.load_epoch
            if state.mask_epoch == was:
                if not state.decided:
                    base = slot * len(SLOT_MOVES)
                    for name in state.checks:
                        if name in state.rules:
                            self._mask[base + _CHECK_AT[name]] = 1
                state.mask_epoch = self.load_epoch

    def action_text(self, index: int) -> str:
        """The text action for macro ``index``: :meth:`move_calls` as text (``""`` for none)."""
        calls = self.move_calls(index)
        return action(*calls) if calls else ""

    def move_action(self, index: int) -> tuple[list[ToolCallDict], str]:
        """:meth:`move_calls` and the text action they make (``""`` for none)."""
        kept = self._kept_move(index)
        if kept is not None:
            return [kept[0]], kept[1]
        calls = self.move_calls(index)
        return calls, action(*calls) if calls else ""

    def _kept_move(self, index: int) -> tuple[ToolCallDict, str] | None:
        """A slot move's call (read-only) and its text, made once for every episode of a
        case (:func:`_kept_moves`); ``None`` for the submit, an empty slot, or a slot with
        no kept moves: :meth:`move_calls` makes those."""
        slot, at = divmod(index, len(SLOT_MOVES))
        if not 0 <= index < self.layout.submit or slot >= len(self.slots):
            return None
        kept = self.slots[slot].kept_moves
        if kept is None:
            return None
        made = kept[at]
        if made is None:
            made_call = frozen(self.move_calls(index)[0])
            made = kept[at] = (made_call, action(made_call))
        else:
            tool, rule_name = _SENT_OF_MOVE[at]
            self._sent = [(tool, slot, rule_name)]
        return made

    def move_calls(self, index: int) -> list[ToolCallDict]:
        """The calls of macro ``index`` (none for a move on an empty slot)."""
        slot, move = self.layout.decode(index)
        if move == "submit":
            self._sent = [("submit_report", -1, "")]
            loaded, quarantined = sorted(set(self.loaded_ids)), sorted(set(self.quarantined_ids))
            return [call("submit_report", loaded=loaded, quarantined=quarantined)]
        if slot >= len(self.slots):
            self._sent = []
            return []
        state = self.slots[slot]
        kind, _, rule_name = move.partition(":")
        self._sent = [(_TOOL_OF_MOVE[kind], slot, rule_name)]
        return [self._call(state, kind, rule_name)]

    def _call(self, state: SlotState, kind: str, rule_name: str) -> dict[str, Any]:
        batch_id = state.batch["batch_id"]
        if kind in ("profile", "load"):
            return call(_TOOL_OF_MOVE[kind], batch_id=batch_id)
        rule = state.rules.get(rule_name) or _foreign_rule(rule_name, state.batch["table"], self.contract)
        if kind == "check":
            return call("run_sql", query=rule_query(state.batch, rule))
        return call("quarantine_batch", batch_id=batch_id, column=rule.column, defect_type=rule.defect_type)

    def mask(self) -> np.ndarray:
        """Moves worth sending now: a listed, undecided batch; a rule of its table; a
        profile not yet taken; a check not yet answered since the warehouse last
        changed. Submitting is always allowed. An ``np.int8`` array, 1 where allowed:
        the dtype ``Discrete.sample(mask=...)`` requires."""
        allowed = self._mask
        for slot, state in enumerate(self.slots):
            # A slot's moves change only with its own results and with the load epoch, as
            # its features do: most moves rewrite one slot or none.
            if state.mask_epoch != self.load_epoch:
                base = slot * len(SLOT_MOVES)
                allowed[base : base + len(SLOT_MOVES)] = self._slot_mask(state)
                state.mask_epoch = self.load_epoch
        return allowed.copy()

    def _slot_mask(self, state: SlotState) -> list[int]:
        """The slot's moves, 1 where allowed, in :data:`SLOT_MOVES` order (one list, which
        NumPy copies into the mask in one go)."""
        allowed = [0] * len(SLOT_MOVES)
        if state.decided:
            return allowed
        allowed[_MOVE_AT["load"]] = 1
        if state.profile is None:
            allowed[_MOVE_AT["profile"]] = 1
        for name in state.rules:
            found = state.checks.get(name)
            if found is None or found[1] != self.load_epoch:  # not answered since the last load
                allowed[_CHECK_AT[name]] = 1
            allowed[_QUARANTINE_AT[name]] = 1
        return allowed

    def vector(self) -> np.ndarray:
        """The state as numbers (a new array each call: callers may keep or change it)."""
        out = self._vector
        for slot, state in enumerate(self.slots):
            # A slot's features change only with its own results and with the load epoch
            # (which makes its checks stale), so most moves write one slot or none.
            if state.features_epoch != self.load_epoch:
                out[slot * SLOT_FEATURES : (slot + 1) * SLOT_FEATURES] = self._slot_features(state)
                state.features_epoch = self.load_epoch
        out[-1] = min(1.0, self.turn / max(1, self.max_turns))
        return out.copy()

    def _slot_features(self, state: SlotState) -> list[float]:
        rows = max(1, int(state.batch.get("rows", 0)))
        head = _fresh_head(state.batch)
        head[_LOADED_AT : _PROFILED_AT + 1] = (
            float(state.loaded),
            float(state.quarantined),
            float(state.profile is not None),
        )
        checks = [0.0] * len(_UNCHECKED) * len(RULE_NAMES)  # every rule unchecked, then the checked
        for name, (failing, epoch) in state.checks.items():
            at = len(_UNCHECKED) * _RULE_AT[name]
            checks[at : at + len(_UNCHECKED)] = (float(epoch == self.load_epoch), 1.0, float(failing > 0))
        profile: list[float] = self._profile_part(state, rows).tolist()
        return head + checks + profile

    def _profile_part(self, state: SlotState, rows: int) -> np.ndarray:
        """:func:`profile_features` of the slot (as the vector's dtype: copied in as it
        is), made again only when its inputs change."""
        kept = state.profile_features
        if kept is None or kept[0] is not state.profile or kept[1] is not self.contract or kept[2] != rows:
            flags = np.array(profile_features(state.profile, rows, self.contract), dtype=np.float32)
            kept = (state.profile, self.contract, rows, flags)
            state.profile_features = kept
        return kept[3]


def _fresh_head(batch: Mapping[str, Any]) -> list[float]:
    """A slot's head before anything is done to its batch: present, table, rows / 50."""
    rows = max(1, int(batch.get("rows", 0)))
    table = batch["table"]
    return [1.0, float(table == "orders"), float(table == "customers"), min(1.0, rows / 50), 0.0, 0.0, 0.0]


@functools.cache
def _fresh_slot_mask(rules: tuple[str, ...]) -> np.ndarray:
    """The moves allowed on a listed batch with nothing seen or done yet, whose table has
    ``rules``: profile, load, and a check and a quarantine per rule (read-only)."""
    allowed = np.zeros(len(SLOT_MOVES), dtype=np.int8)
    allowed[[_MOVE_AT["profile"], _MOVE_AT["load"]]] = 1
    for name in rules:
        allowed[[_CHECK_AT[name], _QUARANTINE_AT[name]]] = 1
    allowed.flags.writeable = False
    return allowed


_KEPT_RULES: dict[tuple[str, int], tuple[Any, Mapping[str, Rule]]] = {}
_MOST_KEPT_RULES = 512
# id of a listed batch -> (the batch, its rules, the contract, held so that their ids stay
# their own; each move's call and text, made when first sent)
_KEPT_MOVES: dict[int, tuple[Any, Any, Any, list[tuple[ToolCallDict, str] | None]]] = {}
_MOST_KEPT_MOVES = 1024


def _slot_rules(table: str, read: dict[str, Any]) -> Mapping[str, Rule]:
    """A table's rules by name under the contract read. A case's contract is one
    read-only object (:class:`~batchgate_gym.kernel.plain.FrozenDict`) shared by its
    episodes, so its rules are looked up once per object: id -> (the contract, held so
    that its id stays its own, its rules, read-only). Any other contract is read anew."""
    if type(read) is not FrozenDict:
        return {r.name: r for r in contract_rules(table, read)}
    key = (table, id(read))
    kept = _KEPT_RULES.get(key)
    if kept is not None and kept[0] is read:
        return kept[1]
    rules = FrozenDict({r.name: r for r in contract_rules(table, read)})
    if len(_KEPT_RULES) >= _MOST_KEPT_RULES:
        _KEPT_RULES.clear()
    _KEPT_RULES[key] = (read, rules)
    return rules


def _kept_moves(
    batch: Mapping[str, Any], rules: Mapping[str, Rule], read: Mapping[str, Any] | None
) -> list[tuple[ToolCallDict, str] | None] | None:
    """The kept calls of a batch's moves: a case's listing, its contract and the rules read
    from it are read-only objects its episodes share (:class:`FrozenDict`), and on them a
    move's call is the same in every episode, so it is made once per batch object. Any
    other objects (read off a text observation) keep none (``None``)."""
    if not type(batch) is type(rules) is type(read) is FrozenDict:
        return None
    kept = _KEPT_MOVES.get(id(batch))
    if kept is None or kept[0] is not batch or kept[1] is not rules or kept[2] is not read:
        if len(_KEPT_MOVES) >= _MOST_KEPT_MOVES:
            _KEPT_MOVES.clear()
        kept = _KEPT_MOVES[id(batch)] = (batch, rules, read, [None] * len(SLOT_MOVES))
    return kept[3]


def _foreign_rule(name: str, table: str, read: dict[str, Any] | None) -> Rule:
    """A rule of the other table, sent as is (its SQL names columns this batch lacks)."""
    other = next(t for t in TABLES if t != table)
    return {r.name: r for r in contract_rules(other, read or contract())}[name]


def profile_features(
    profile: Mapping[str, Any] | None, rows: int, read: Mapping[str, Any] | None
) -> list[float]:
    """Flags read off a ``profile_batch`` result against the contract read: per column
    any blank and any repeated value, then amounts above the cap or not positive,
    values outside the allowed currency, status and country, dates outside the window."""
    if profile is None or read is None or "columns" not in profile:
        return [0.0] * _PROFILE_FEATURES
    columns = profile["columns"]
    limits, window = read["limits"], read["reporting_window"]
    out: list[float] = []
    for name in PROFILE_COLUMNS:
        stats = columns.get(name)
        if stats is None:
            out += [0.0, 0.0]
            continue
        out += [float(stats["n_null"] + stats["n_blank"] > 0), float(stats["n_distinct"] < rows)]
    amount = columns.get("amount", {})
    out += [
        float((amount.get("numeric_max") or 0) > limits["max_amount"]),
        float((amount.get("numeric_min") or 1) <= 0),
        _outside(columns.get("currency"), [limits["currency"]]),
        _outside(columns.get("status"), limits["allowed_status"]),
        _outside(columns.get("country"), limits["allowed_countries"]),
        float(str(columns.get("order_date", {}).get("min") or window["start"]) < window["start"]),
        float(str(columns.get("order_date", {}).get("max") or window["end"]) > window["end"]),
        float(str(columns.get("signup_date", {}).get("max") or window["end"]) > window["end"]),
    ]
    return out


def _outside(stats: Mapping[str, Any] | None, allowed: list[str]) -> float:
    """1 if one of the profile's top values is not allowed (one odd row is enough)."""
    if not stats:
        return 0.0
    return float(any(value not in allowed for value, _count in stats["top_values"]))
