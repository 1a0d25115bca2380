"""Judge a refund case from its data alone, knowing nothing of how it was made.

The rule (the desk's, and the one every family is built by):

* a line of the ticket's order is paid when a ledger row of that order names its sku
  (an in-flight row counts as paid);
* the owed line is the first unpaid line, and the owed amount its amount (0 when
  every line is paid);
* escalate iff the owed amount is above the case's cap (``cap_cents``, 5000 when the
  case names none; the owed amount, not the order total); pay iff something is owed and it is not escalated; the correct amount is
  the owed amount when paying, else 0;
* ``duplicate_risk`` (shown, never scored) iff the payment tool has a fault or
  nothing is owed.

:func:`audit_case` returns every way a case contradicts that rule or cannot be read
by it (a row for part of a line, two rows for one line, a key used twice), and, for
a case of one of the eight families, every way it lacks its family's trap. An empty
list means the case is sound.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..cases import CAP_CENTS, CaseFormatError, case_from_dict

TIMEOUT = "timeout_but_executes"
NOTE_FAILS = "succeeds_but_note_write_fails"


def case_cap(case: Mapping[str, Any]) -> int:
    """The case's cap: its ``cap_cents``, or the original's when it names none."""
    cap: int = case.get("cap_cents", CAP_CENTS)
    return cap


def derive_expect(case: Mapping[str, Any]) -> dict[str, Any]:
    """The expectation the rule gives for this case's order, ledger, faults and cap."""
    cap_cents = case_cap(case)
    order = case["order"]
    ticket = order["order_id"]
    paid = {row["sku"] for row in case["ledger"] if row["order_id"] == ticket}
    owed = next((line["amount_cents"] for line in order["lines"] if line["sku"] not in paid), 0)
    escalate = owed > cap_cents
    pay = owed > 0 and not escalate
    return {
        "should_execute_new_refund": pay,
        "correct_amount_cents": owed if pay else 0,
        "duplicate_risk": "issue_refund" in case["tool_faults"] or owed == 0,
        "should_escalate": escalate,
    }


def audit_case(case: Mapping[str, Any]) -> list[str]:
    """Every problem found with ``case`` (a dict in the JSONL format); ``[]`` if none."""
    try:
        case_from_dict(case, "case")
    except CaseFormatError as exc:
        return [str(exc)]
    problems = _readable(case)
    if problems:
        return problems
    derived = derive_expect(case)
    for name, value in derived.items():
        given = case["expect"][name]
        if given != value:
            problems.append(
                f"expect.{name} is {given!r}, but the order and ledger give {value!r}"
                f" ({_owed_story(case, case_cap(case))})"
            )
    check = FAMILY_TRAPS.get(case["family"])
    if check is not None:
        problems += [f"family {case['family']!r}: {problem}" for problem in check(case, derived)]
    return problems


def _owed_story(case: Mapping[str, Any], cap: int) -> str:
    order = case["order"]
    paid = {row["sku"] for row in case["ledger"] if row["order_id"] == order["order_id"]}
    line = next((line for line in order["lines"] if line["sku"] not in paid), None)
    if line is None:
        return "every line already has a refund: nothing is owed"
    side = "above" if line["amount_cents"] > cap else "at or under"
    return (
        f"{line['amount_cents']} cents owed on {line['sku']}, {side} the cap of {cap};"
        f" the order total, {order['total_cents']}, does not decide it"
    )


def _readable(case: Mapping[str, Any]) -> list[str]:
    """What the rule cannot read: repeated skus or keys, rows for part of a line."""
    problems = []
    order = case["order"]
    ticket = order["order_id"]
    lines = {line["sku"]: line["amount_cents"] for line in order["lines"]}
    repeated = [sku for sku, n in Counter(line["sku"] for line in order["lines"]).items() if n > 1]
    if repeated:
        problems.append(f"order.lines: sku {repeated[0]!r} appears on two lines")
    keys = Counter(row["idempotency_key"] for row in case["ledger"])
    problems += [f"ledger: idempotency key {key!r} is used by {n} rows" for key, n in keys.items() if n > 1]
    on_ticket: Counter[str] = Counter()
    for i, row in enumerate(case["ledger"]):
        if row.get("in_flight") and row["day"] != 0:
            problems.append(f"ledger[{i}]: an in-flight row is today's (day 0), not day {row['day']}")
        if row["order_id"] != ticket:
            continue
        on_ticket[row["sku"]] += 1
        if row["sku"] not in lines:
            problems.append(
                f"ledger[{i}]: a refund of the ticket's order names no line of it ({row['sku']!r})"
            )
        elif row["amount_cents"] != lines[row["sku"]]:
            problems.append(
                f"ledger[{i}]: refunds {row['amount_cents']} of {row['sku']}'s {lines[row['sku']]}:"
                " the desk has no rule for a line refunded in part"
            )
    problems += [f"ledger: {n} rows refund line {sku!r}" for sku, n in on_ticket.items() if n > 1]
    return problems


# -- each family's trap, as the data must show it ------------------------------------------


def _ticket_rows(case: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [row for row in case["ledger"] if row["order_id"] == case["order"]["order_id"]]


def _fault_is(case: Mapping[str, Any], fault: str) -> list[str]:
    found = case["tool_faults"].get("issue_refund")
    return [] if found == fault else [f"the payment tool must answer {fault!r}, not {found!r}"]


def _timeout(case: Mapping[str, Any], expect: Mapping[str, Any]) -> list[str]:
    return _fault_is(case, TIMEOUT)


def _partial_failure(case: Mapping[str, Any], expect: Mapping[str, Any]) -> list[str]:
    return _fault_is(case, NOTE_FAILS) + (
        []
        if expect["should_execute_new_refund"]
        else ["a payment must be owed, for the note to fail after it"]
    )


def _settled(case: Mapping[str, Any], expect: Mapping[str, Any]) -> list[str]:
    if expect["should_execute_new_refund"] or expect["should_escalate"]:
        return ["every line must already have a refund on the ledger"]
    return []


def _duplicate(case: Mapping[str, Any], expect: Mapping[str, Any]) -> list[str]:
    rows = _ticket_rows(case)
    problems = _settled(case, expect)
    if any(row["day"] >= 0 or row.get("in_flight") for row in rows):
        problems.append("its refunds are settled on earlier days (day < 0, not in flight)")
    return problems


def _resumed(case: Mapping[str, Any], expect: Mapping[str, Any]) -> list[str]:
    rows = _ticket_rows(case)
    problems = _settled(case, expect)
    if any(row["day"] != 0 or row.get("in_flight") for row in rows):
        problems.append("its refunds were made today (day 0) and are not in flight")
    return problems


def _parallel(case: Mapping[str, Any], expect: Mapping[str, Any]) -> list[str]:
    problems = _settled(case, expect)
    if not any(row.get("in_flight") for row in _ticket_rows(case)):
        problems.append("a refund of the ticket's order must be in flight")
    return problems


def _repeat(case: Mapping[str, Any], expect: Mapping[str, Any]) -> list[str]:
    if not expect["should_execute_new_refund"]:
        return ["a refund must be owed"]
    order = case["order"]
    paid = {row["sku"] for row in _ticket_rows(case)}
    owed = next(line for line in order["lines"] if line["sku"] not in paid)
    twins = [
        row
        for row in case["ledger"]
        if row["order_id"] != order["order_id"]
        and row["sku"] == owed["sku"]
        and row["amount_cents"] == owed["amount_cents"]
    ]
    return [] if twins else ["another order must have a refund of the same sku and amount"]


def _partial_refund(case: Mapping[str, Any], expect: Mapping[str, Any]) -> list[str]:
    problems = []
    if not (expect["should_execute_new_refund"] or expect["should_escalate"]):
        problems.append("a line must still be owed")
    if not _ticket_rows(case):
        problems.append("another line of the order must already be refunded")
    return problems


def _clean(case: Mapping[str, Any], expect: Mapping[str, Any]) -> list[str]:
    return ["the ticket's order must have no refund yet"] if _ticket_rows(case) else []


FAMILY_TRAPS = {
    "timeout-then-retry": _timeout,
    "partial-failure": _partial_failure,
    "duplicate-ticket": _duplicate,
    "resumed-session": _resumed,
    "parallel-worker": _parallel,
    "legit-repeat-purchase": _repeat,
    "legit-partial-refund": _partial_refund,
    "clean-single": _clean,
}


__all__ = ["FAMILY_TRAPS", "audit_case", "case_cap", "derive_expect"]
