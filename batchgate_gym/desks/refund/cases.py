"""Refund cases: the original JSONL format, read unchanged and checked field by field.

A case is one ticket: the order it is about (its lines), the refunds already in the
ledger before the episode (rows of any order), the faults the payment and history
tools show, and what the grader expects. The agent sees only the prompt and what
the tools return; ``case_id``, ``family``, ``tool_faults``, ``expect``, ``notes``,
``split`` and ``seed`` are the grader's. A broken line fails with the file, the line
and the field (``cases.jsonl:3: field 'order.lines[1].amount_cents': ...``).

One key is ours: ``cap_cents``, after ``seed``, the most the agent may refund on the
order by itself (a positive int). It is optional and means :data:`CAP_CENTS` when
absent; a case is written with it only when it differs, so a case at the original's
cap reads, writes and hashes exactly as the original's.

Another is ``tool_faults.lag_reads``: under ``refund_history: "stale_after_write"``,
how many history reads after this episode's payment still miss it (an int in 1..5).
Absent means 1, the original's lag; like the cap it is written only when it is not
1, so a case with the original's lag reads, writes and hashes as the original's.

Another is ``tool_faults.unsent_payments``: how many of the ticket's payments (an int
in 1..3, the first ones that would move money) never reach the payment provider:
each answers with the same timeout as a payment that went through, and nothing
moves. Absent means none, as in the original.

The last is ``queue``: the tickets that follow this one in the same episode, over
the same ledger (at most :data:`MAX_QUEUE`). Each is a case in this format without
``ledger``, ``split``, ``seed`` and ``cap_cents``, which it takes from the first; a
ticket about an order an earlier ticket is about must repeat that ticket's order
and expectation (the same request sent again). Absent means a single ticket.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from batchgate_gym.kernel.case_files import check_unique, read_case_file, read_jsonl
from batchgate_gym.kernel.ledger import canonical_json
from batchgate_gym.kernel.plain import FrozenDict, frozen

T = TypeVar("T")

CAP_CENTS = 5000  # the original's cap, and a case's when it names none: above it, escalate

REFUND_FAULTS = ("timeout_but_executes", "succeeds_but_note_write_fails")
HISTORY_FAULTS = ("stale_after_write",)
LAG_READS = "lag_reads"  # ours, in tool_faults: stale history reads after a payment
DEFAULT_LAG_READS = 1  # the original's: one read misses the payment
MAX_LAG_READS = 5
UNSENT_PAYMENTS = "unsent_payments"  # ours, in tool_faults: payments that never reach the provider
MAX_UNSENT_PAYMENTS = 3
FAULT_VALUES: Mapping[str, tuple[str, ...]] = {
    "issue_refund": REFUND_FAULTS,
    "refund_history": HISTORY_FAULTS,
}

# Key order of the JSONL format, level by level.
CASE_KEYS = (
    "case_id",
    "family",
    "prompt",
    "order",
    "ledger",
    "tool_faults",
    "expect",
    "notes",
    "split",
    "seed",
    "cap_cents",  # optional, ours: absent means CAP_CENTS
    "queue",  # optional, ours: the tickets that follow this one in the same episode
)
# A queued ticket shares these with the queue's first ticket and leaves them out.
INHERITED_KEYS = ("ledger", "split", "seed", "cap_cents")
MAX_QUEUE = 15  # tickets after the first
ORDER_KEYS = ("order_id", "customer_id", "total_cents", "lines")
LINE_KEYS = ("sku", "amount_cents")
ROW_KEYS = ("order_id", "amount_cents", "sku", "idempotency_key", "day", "in_flight")
EXPECT_KEYS = ("should_execute_new_refund", "correct_amount_cents", "duplicate_risk", "should_escalate")


class CaseFormatError(ValueError):
    """A case does not follow the format; the message names where and what."""


@dataclass(frozen=True, slots=True)
class Line:
    sku: str
    amount_cents: int


@dataclass(frozen=True, slots=True)
class Order:
    order_id: str
    customer_id: str
    total_cents: int
    lines: tuple[Line, ...]

    def line(self, sku: object) -> Line | None:
        """The first line with exactly this sku, if any."""
        return next((line for line in self.lines if line.sku == sku), None)


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """A refund already in the ledger when the episode starts; in-flight rows count as paid."""

    order_id: str
    amount_cents: int
    sku: str
    idempotency_key: str
    day: int
    in_flight: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The row as stored: ``in_flight`` appears only when it is true."""
        out: dict[str, Any] = {
            "order_id": self.order_id,
            "amount_cents": self.amount_cents,
            "sku": self.sku,
            "idempotency_key": self.idempotency_key,
            "day": self.day,
        }
        if self.in_flight:
            out["in_flight"] = True
        return out


@dataclass(frozen=True, slots=True)
class Expectation:
    should_execute_new_refund: bool
    correct_amount_cents: int
    duplicate_risk: bool  # shown in the data, never scored
    should_escalate: bool


@dataclass(frozen=True, eq=False)
class RefundCase:
    """One ticket's world. Data derived from it is cached by :meth:`derived`."""

    case_id: str
    family: str
    prompt: str
    order: Order
    ledger: tuple[LedgerRow, ...]
    tool_faults: Mapping[str, str | int]
    expect: Expectation
    notes: str
    split: str
    seed: int | None
    cap_cents: int = CAP_CENTS  # the most the agent may refund on the order alone
    queue: tuple[RefundCase, ...] = ()  # the tickets after this one, over the same ledger
    _cache: dict[Hashable, Any] = field(default_factory=dict, repr=False, compare=False)

    def derived(self, key: Hashable, make: Callable[[], T]) -> T:
        """The value derived from this case under ``key``: ``make()`` on first use, then
        the same object for the case's life (a case never changes, so it never goes stale)."""
        try:
            cached: T = self._cache[key]
            return cached
        except KeyError:
            value = self._cache[key] = make()
            return value

    @property
    def tickets(self) -> tuple[RefundCase, ...]:
        """The episode's tickets in the order they arrive: this one, then its queue."""
        return (self, *self.queue)

    @property
    def digest(self) -> str:
        """SHA-256 of everything the case holds: what a log names to bind itself to this case."""
        return self.derived("digest", lambda: _digest(self))

    def as_dict(self) -> dict[str, Any]:
        """The case as the JSONL format holds it, keys in the format's order."""
        return case_to_dict(self)


def case_to_dict(case: RefundCase) -> dict[str, Any]:
    """The case as a dict in the format; ``cap_cents`` only when it is not :data:`CAP_CENTS`."""
    out: dict[str, Any] = {
        "case_id": case.case_id,
        "family": case.family,
        "prompt": case.prompt,
        "order": {
            "order_id": case.order.order_id,
            "customer_id": case.order.customer_id,
            "total_cents": case.order.total_cents,
            "lines": [{"sku": line.sku, "amount_cents": line.amount_cents} for line in case.order.lines],
        },
        "ledger": [row.as_dict() for row in case.ledger],
        "tool_faults": _written_faults(case.tool_faults),
        "expect": {name: getattr(case.expect, name) for name in EXPECT_KEYS},
        "notes": case.notes,
        "split": case.split,
        "seed": case.seed,
    }
    if case.cap_cents != CAP_CENTS:
        out["cap_cents"] = case.cap_cents
    if case.queue:
        out["queue"] = [_queued_dict(ticket) for ticket in case.queue]
    return out


def _queued_dict(ticket: RefundCase) -> dict[str, Any]:
    """A queued ticket as its queue holds it: without what it shares with the first."""
    full = case_to_dict(ticket)
    return {key: value for key, value in full.items() if key not in INHERITED_KEYS}


def _digest(case: RefundCase) -> str:
    return _dict_digest(case_to_dict(case))


def _dict_digest(body: Mapping[str, Any]) -> str:
    """The digest of a case as its dict in the format holds it (canonical JSON: key order aside)."""
    return hashlib.sha256(canonical_json(body).encode("ascii")).hexdigest()


# The characters the canonical encoder writes as they stand: printable ASCII but the quote
# and the backslash (everything else it escapes).
_UNESCAPED = bytes(range(0x20, 0x7F)).replace(b'"', b"").replace(b"\\", b"")
_JSON_BOOL = {True: "true", False: "false"}


def _generated_digest(data: Mapping[str, Any]) -> str:
    """:func:`_dict_digest` of one ticket as the generator writes it, its canonical text
    written out key by key (:func:`_generated_text`), or the encoder's when a string in it
    needs an escape. The text is what ``canonical_json`` writes; the generic encoder took
    twice as many instructions as the rest of the digest, hash included."""
    strings, text = _generated_text(data)
    joined = "".join(strings)
    if not joined.isascii() or joined.encode("ascii").translate(None, _UNESCAPED):
        return _dict_digest(data)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _generated_text(data: Mapping[str, Any]) -> tuple[list[str], str]:
    """``canonical_json(data)`` for a ticket in the generator's shape (the format's keys,
    ints and bools where it has them, no queue), with each string written as it stands,
    and the strings so written."""
    order, expect, faults = data["order"], data["expect"], data["tool_faults"]
    rows, lines = data["ledger"], order["lines"]
    strings = [data["case_id"], data["family"], data["notes"], data["prompt"], data["split"]]
    strings += [order["customer_id"], order["order_id"], *[line["sku"] for line in lines]]
    strings += [f"{row['idempotency_key']}{row['order_id']}{row['sku']}" for row in rows]
    strings += [value for value in faults.values() if type(value) is str]
    fault_items = [
        f'"{key}":"{value}"' if type(value) is str else f'"{key}":{value}'
        for key, value in sorted(faults.items())
    ]
    row_items = [
        f'{{"amount_cents":{row["amount_cents"]},"day":{row["day"]},'
        f'"idempotency_key":"{row["idempotency_key"]}",{_IN_FLIGHT[row.get("in_flight")]}'
        f'"order_id":"{row["order_id"]}","sku":"{row["sku"]}"}}'
        for row in rows
    ]
    line_items = [f'{{"amount_cents":{line["amount_cents"]},"sku":"{line["sku"]}"}}' for line in lines]
    cap = f'"cap_cents":{data["cap_cents"]},' if "cap_cents" in data else ""
    text = (
        f'{{{cap}"case_id":"{data["case_id"]}","expect":{{"correct_amount_cents":'
        f'{expect["correct_amount_cents"]},"duplicate_risk":{_JSON_BOOL[expect["duplicate_risk"]]},'
        f'"should_escalate":{_JSON_BOOL[expect["should_escalate"]]},'
        f'"should_execute_new_refund":{_JSON_BOOL[expect["should_execute_new_refund"]]}}},'
        f'"family":"{data["family"]}","ledger":[{",".join(row_items)}],"notes":"{data["notes"]}",'
        f'"order":{{"customer_id":"{order["customer_id"]}","lines":[{",".join(line_items)}],'
        f'"order_id":"{order["order_id"]}","total_cents":{order["total_cents"]}}},'
        f'"prompt":"{data["prompt"]}","seed":{data["seed"]},"split":"{data["split"]}",'
        f'"tool_faults":{{{",".join(fault_items)}}}}}'
    )
    return strings, text


# A ledger row's ``in_flight`` as the text holds it: absent (``None``), true or false.
_IN_FLIGHT = {None: "", True: '"in_flight":true,', False: '"in_flight":false,'}


def dumps_case(data: Mapping[str, Any]) -> str:
    """One JSONL line in the original's style: the format's key order (unknown keys
    after, as given), ``", "`` and ``": "`` separators, raw UTF-8 (no ASCII escapes).
    A ``cap_cents`` equal to :data:`CAP_CENTS` is left out: absent means that cap; so
    is a ``tool_faults.lag_reads`` of 1."""
    ordered = _ordered(data, CASE_KEYS, _CASE_NESTED)
    if isinstance(ordered, dict):
        if _is_default_cap(ordered.get("cap_cents")):
            del ordered["cap_cents"]
        for ticket in [ordered, *(ordered.get("queue") or [])]:
            faults = ticket.get("tool_faults") if isinstance(ticket, dict) else None
            if isinstance(faults, Mapping):
                ticket["tool_faults"] = _written_faults(faults)
    return json.dumps(ordered, ensure_ascii=False)


def _written_faults(faults: Mapping[str, Any]) -> dict[str, Any]:
    """The faults as a case file holds them: a ``lag_reads`` of 1 goes unwritten."""
    value = faults.get(LAG_READS)
    default = isinstance(value, int) and not isinstance(value, bool) and value == DEFAULT_LAG_READS
    return {key: item for key, item in faults.items() if not (default and key == LAG_READS)}


def lag_reads(case: RefundCase) -> int:
    """How many history reads after a payment miss it: 0 without ``stale_after_write``,
    else the case's ``tool_faults.lag_reads`` (1 when absent). A bad value raises
    ``ValueError`` naming the field."""
    faults = case.tool_faults
    if faults.get("refund_history") != "stale_after_write":
        if LAG_READS in faults:
            raise ValueError(f"tool_faults.{LAG_READS} needs refund_history: 'stale_after_write'")
        return 0
    reads = faults.get(LAG_READS, DEFAULT_LAG_READS)
    problem = _count_problem(reads, MAX_LAG_READS)
    if problem or not isinstance(reads, int):
        raise ValueError(f"tool_faults.{LAG_READS}: {problem}")
    return reads


def unsent_payments(case: RefundCase) -> int:
    """How many of the ticket's payments never reach the provider (0 when the case names none)."""
    count = case.tool_faults.get(UNSENT_PAYMENTS, 0)
    problem = None if count == 0 else _count_problem(count, MAX_UNSENT_PAYMENTS)
    if problem or not isinstance(count, int):
        raise ValueError(f"tool_faults.{UNSENT_PAYMENTS}: {problem}")
    return count


def _count_problem(value: Any, most: int) -> str | None:
    """What is wrong with a fault's count (an int in 1..``most``), or ``None``."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
        return f"must be an int in 1..{most}, not {value!r}"
    return None


def _is_default_cap(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value == CAP_CENTS


def _ordered(value: Any, keys: tuple[str, ...], nested: Mapping[str, Any]) -> Any:
    if not isinstance(value, Mapping):
        return value
    out = {key: value[key] for key in keys if key in value}
    out.update({key: item for key, item in value.items() if key not in out})
    for key, (inner_keys, inner_nested, is_list) in nested.items():
        if key not in out:
            continue
        if is_list and isinstance(out[key], list):
            out[key] = [_ordered(item, inner_keys, inner_nested) for item in out[key]]
        elif not is_list:
            out[key] = _ordered(out[key], inner_keys, inner_nested)
    return out


_CASE_NESTED: dict[str, Any] = {
    "order": (ORDER_KEYS, {"lines": (LINE_KEYS, {}, True)}, False),
    "ledger": (ROW_KEYS, {}, True),
    "expect": (EXPECT_KEYS, {}, False),
}
_CASE_NESTED["queue"] = (CASE_KEYS, _CASE_NESTED, True)  # a queued ticket is ordered like a case


def load_cases(
    source: str | os.PathLike[str] | Iterable[Mapping[str, Any] | RefundCase],
) -> list[RefundCase]:
    """Read cases from a JSONL path, from already-parsed dicts, or take cases as they are;
    case ids must be unique."""
    if isinstance(source, (str, os.PathLike)):
        return _load_file(Path(source))
    cases = [
        item if isinstance(item, RefundCase) else case_from_dict(item, f"<case {position}>")
        for position, item in enumerate(source)
    ]
    _check_unique([case.case_id for case in cases], "<cases>")
    return cases


def _load_file(path: Path) -> list[RefundCase]:
    return read_case_file(path, "refund", _read_file)


def _read_file(path: Path, text: str) -> list[RefundCase]:
    cases = read_jsonl(path, case_from_dict, CaseFormatError, text)
    _check_unique([case.case_id for case in cases], str(path))
    return cases


def _check_unique(ids: list[str], where: str) -> None:
    check_unique(ids, where, "case_id", CaseFormatError)


class _Reader:
    """Reads typed fields of one case, naming ``where`` and the field path in every error."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, path: str, problem: str) -> CaseFormatError:
        return CaseFormatError(f"{self.where}: field '{path}': {problem}")

    def get(self, obj: Mapping[str, Any], key: str, prefix: str) -> Any:
        if key not in obj:
            raise self.fail(prefix + key, "missing")
        return obj[key]

    def typed(self, value: Any, kind: type, path: str) -> Any:
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(path, f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    def field(self, obj: Mapping[str, Any], key: str, kind: type, prefix: str = "") -> Any:
        return self.typed(self.get(obj, key, prefix), kind, prefix + key)

    def no_extra(self, obj: Mapping[str, Any], keys: tuple[str, ...], path: str) -> None:
        extra = [key for key in obj if key not in keys]
        if extra:
            raise self.fail(path, f"unexpected keys {extra}")


def case_from_dict(data: Any, where: str) -> RefundCase:
    """Validate one parsed case; ``where`` prefixes every error message."""
    read = _Reader(where)
    obj = read.typed(data, dict, "case")
    read.no_extra(obj, CASE_KEYS, "case")
    case_id = read.field(obj, "case_id", str)
    if not case_id:
        raise read.fail("case_id", "must not be empty")
    seed = read.get(obj, "seed", "")
    if seed is not None:
        read.typed(seed, int, "seed")
    cap = CAP_CENTS
    if "cap_cents" in obj:
        cap = read.field(obj, "cap_cents", int)
        if cap <= 0:
            raise read.fail("cap_cents", f"must be a positive number of cents, not {cap}")
    ledger = tuple(_row(read, item, f"ledger[{i}]") for i, item in enumerate(read.field(obj, "ledger", list)))
    first = RefundCase(
        case_id=case_id,
        family=read.field(obj, "family", str),
        prompt=read.field(obj, "prompt", str),
        order=_order(read, read.field(obj, "order", dict)),
        ledger=ledger,
        tool_faults=_faults(read, read.field(obj, "tool_faults", dict)),
        expect=_expect(read, read.field(obj, "expect", dict)),
        notes=read.field(obj, "notes", str),
        split=read.field(obj, "split", str),
        seed=seed,
        cap_cents=cap,
    )
    if "queue" not in obj:
        return first
    return dataclasses.replace(first, queue=_queue(read, obj, first))


def case_from_generated(data: Mapping[str, Any], where: str) -> RefundCase:
    """A case the desk's own generator has just written, built without the field-by-field
    check :func:`case_from_dict` gives a case read from a file or handed in.

    The generator's output is the project's own, and the tests audit it instead of every
    reset (over every family and thousands of seeds: each dict passes the check, and the
    case and digest built here are those the checked path gives). The digest is taken
    from ``data`` itself, which holds what :func:`case_to_dict` would write. A queue of
    tickets goes through the check (``where`` names it in an error).
    """
    if "queue" in data:
        return case_from_dict(data, where)
    order, faults = data["order"], data["tool_faults"]
    lines = tuple([Line(line["sku"], line["amount_cents"]) for line in order["lines"]])
    case = object.__new__(RefundCase)
    # The fields set at once in the new case's __dict__, in their declared order: what the
    # dataclass's __init__ does one object.__setattr__ at a time (a frozen dataclass refuses
    # plain assignment), at a fifth of the cost; RefundCase has no __post_init__. The
    # faults are flat (strings and ints), so frozen() of them is a FrozenDict of them.
    case.__dict__.update(
        case_id=data["case_id"],
        family=data["family"],
        prompt=data["prompt"],
        order=Order(order["order_id"], order["customer_id"], order["total_cents"], lines),
        ledger=tuple([LedgerRow(**row) for row in data["ledger"]]),
        tool_faults=FrozenDict(faults if LAG_READS not in faults else _written_faults(faults)),
        expect=Expectation(**data["expect"]),
        notes=data["notes"],
        split=data["split"],
        seed=data["seed"],
        cap_cents=data.get("cap_cents", CAP_CENTS),
        queue=(),
        _cache={"digest": _generated_digest(data)},
    )
    return case


def _queue(read: _Reader, obj: Mapping[str, Any], first: RefundCase) -> tuple[RefundCase, ...]:
    """The queued tickets: each a case without the keys it inherits from ``first``; a
    ticket about an order an earlier ticket is about repeats that ticket's order and
    expectation (the same request sent again)."""
    items = read.field(obj, "queue", list)
    if not 1 <= len(items) <= MAX_QUEUE:
        raise read.fail("queue", f"holds 1 to {MAX_QUEUE} tickets, not {len(items)}")
    shared = {key: obj[key] for key in INHERITED_KEYS if key in obj}
    seen: dict[str, RefundCase] = {first.order.order_id: first}
    tickets = []
    for i, item in enumerate(items):
        path = f"queue[{i}]"
        ticket_obj = read.typed(item, dict, path)
        for key in (*INHERITED_KEYS, "queue"):
            if key in ticket_obj:
                raise read.fail(f"{path}.{key}", "a queued ticket takes this from the queue's first ticket")
        ticket = case_from_dict({**ticket_obj, **shared}, f"{read.where}: {path}")
        earlier = seen.setdefault(ticket.order.order_id, ticket)
        if earlier is not ticket and (earlier.order, earlier.expect) != (ticket.order, ticket.expect):
            raise read.fail(path, f"order {ticket.order.order_id!r} again, with another order or expectation")
        tickets.append(ticket)
    ids = [first.case_id, *(t.case_id for t in tickets)]
    if len(set(ids)) != len(ids):
        raise read.fail("queue", "every ticket needs its own case_id")
    return tuple(tickets)


def _order(read: _Reader, obj: Mapping[str, Any]) -> Order:
    read.no_extra(obj, ORDER_KEYS, "order")
    order_id = read.field(obj, "order_id", str, "order.")
    if not order_id:
        raise read.fail("order.order_id", "must not be empty")
    raw_lines = read.field(obj, "lines", list, "order.")
    if not raw_lines:
        raise read.fail("order.lines", "an order needs at least one line")
    lines = []
    for i, item in enumerate(raw_lines):
        path = f"order.lines[{i}]"
        line = read.typed(item, dict, path)
        read.no_extra(line, LINE_KEYS, path)
        sku = read.field(line, "sku", str, path + ".")
        if not sku:
            raise read.fail(path + ".sku", "must not be empty")
        amount = read.field(line, "amount_cents", int, path + ".")
        if amount <= 0:
            raise read.fail(path + ".amount_cents", f"must be positive, not {amount}")
        lines.append(Line(sku, amount))
    total = read.field(obj, "total_cents", int, "order.")
    if total != sum(line.amount_cents for line in lines):
        raise read.fail("order.total_cents", f"{total} is not the sum of the lines' amounts")
    return Order(order_id, read.field(obj, "customer_id", str, "order."), total, tuple(lines))


def _row(read: _Reader, data: Any, path: str) -> LedgerRow:
    obj = read.typed(data, dict, path)
    read.no_extra(obj, ROW_KEYS, path)
    prefix = path + "."
    day = read.field(obj, "day", int, prefix)
    if day > 0:
        raise read.fail(prefix + "day", f"a prior refund's day is 0 or earlier, not {day}")
    in_flight = obj.get("in_flight", False)
    if in_flight is not False and in_flight is not True:
        raise read.fail(prefix + "in_flight", f"expected bool, got {type(in_flight).__name__}")
    return LedgerRow(
        order_id=read.field(obj, "order_id", str, prefix),
        amount_cents=read.field(obj, "amount_cents", int, prefix),
        sku=read.field(obj, "sku", str, prefix),
        idempotency_key=read.field(obj, "idempotency_key", str, prefix),
        day=day,
        in_flight=in_flight,
    )


def _faults(read: _Reader, obj: Mapping[str, Any]) -> Mapping[str, str | int]:
    for tool, value in obj.items():
        if tool == LAG_READS:
            problem = _count_problem(value, MAX_LAG_READS)
            if problem is None and obj.get("refund_history") != "stale_after_write":
                problem = "needs refund_history: 'stale_after_write' (a lag is of that fault)"
            if problem:
                raise read.fail(f"tool_faults.{LAG_READS}", problem)
            continue
        if tool == UNSENT_PAYMENTS:
            problem = _count_problem(value, MAX_UNSENT_PAYMENTS)
            if problem:
                raise read.fail(f"tool_faults.{UNSENT_PAYMENTS}", problem)
            continue
        allowed = FAULT_VALUES.get(tool)
        if allowed is None:
            raise read.fail(f"tool_faults.{tool}", f"no faults are defined for {tool!r}")
        if value not in allowed:
            raise read.fail(f"tool_faults.{tool}", f"{value!r} is not one of {list(allowed)}")
    faults: Mapping[str, str | int] = frozen(_written_faults(obj))
    return faults


def _expect(read: _Reader, obj: Mapping[str, Any]) -> Expectation:
    read.no_extra(obj, EXPECT_KEYS, "expect")
    flags = {
        name: read.field(obj, name, bool, "expect.")
        for name in ("should_execute_new_refund", "duplicate_risk", "should_escalate")
    }
    amount = read.field(obj, "correct_amount_cents", int, "expect.")
    if amount < 0:
        raise read.fail("expect.correct_amount_cents", f"must not be negative, not {amount}")
    if flags["should_execute_new_refund"] and flags["should_escalate"]:
        raise read.fail("expect", "a case expects a payment or an escalation, not both")
    return Expectation(
        should_execute_new_refund=flags["should_execute_new_refund"],
        correct_amount_cents=amount,
        duplicate_risk=flags["duplicate_risk"],
        should_escalate=flags["should_escalate"],
    )


__all__ = [
    "CAP_CENTS",
    "DEFAULT_LAG_READS",
    "INHERITED_KEYS",
    "LAG_READS",
    "MAX_LAG_READS",
    "MAX_QUEUE",
    "MAX_UNSENT_PAYMENTS",
    "UNSENT_PAYMENTS",
    "CaseFormatError",
    "Expectation",
    "LedgerRow",
    "Line",
    "Order",
    "RefundCase",
    "case_from_dict",
    "case_from_generated",
    "case_to_dict",
    "dumps_case",
    "lag_reads",
    "load_cases",
    "unsent_payments",
]
