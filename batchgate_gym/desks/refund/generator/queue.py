"""A queue of refund tickets over one shared ledger, from a seed: the ``tickets`` knob.

A desk rarely sees one ticket alone: tickets arrive one after another, and the same
customer writes twice about the same order. A queue case is the first ticket with
the others in its ``queue`` (:mod:`batchgate_gym.desks.refund.cases`); every ticket is
an ordinary procedural case of the given knobs, and their ledgers are laid side by
side into the one ledger they all read. Some tickets are a request sent again: the
same order, text and expectation as an earlier ticket of the queue, dealt later on
purpose, so that an agent who paid the first and trusts a lagging ledger on the
second pays the same thing twice.

How many are sent again: a third of the tickets after the first, rounded down, at
least one (a queue of two is one request sent twice). Which ones, and which earlier
request each repeats, are drawn from the queue's own generator. A ticket is drawn
again from a new seed when it does not fit beside the others: an order id that
another ticket uses, an idempotency key already in the ledger, or an expectation
that the shared ledger would change (the audit of each ticket against the shared
ledger must come back clean).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from batchgate_gym.kernel.plain import SEED_BOUND, check_seed

from .audit import audit_case

Ticket = Callable[[int], dict[str, Any]]
"""One ticket's case from its seed, every other knob already given (the builder's)."""

MAX_DRAWS = 64  # fresh seeds tried for one ticket before giving up (never seen needed)


def build_queue(seed: int, tickets: int, ticket_of: Ticket, *, case_id: str | None = None) -> dict[str, Any]:
    """A case of ``tickets`` tickets (2 or more), each built by ``ticket_of``, over one ledger."""
    seed = check_seed(seed)
    rng = random.Random(f"refund-queue:{seed}")  # its own stream: the first ticket is seed's case
    base = case_id if case_id is not None else f"proc-{seed}"
    again = _resent_positions(rng, tickets)
    drawn: list[dict[str, Any]] = []  # the distinct requests, in the order they first arrive
    order: list[int] = []  # for each ticket, which request it is
    for position in range(tickets):
        if position in again:
            order.append(rng.choice(sorted(set(order))))
            continue
        ticket_seed = seed if position == 0 else None
        drawn.append(_fitting_ticket(rng, drawn, ticket_seed, ticket_of))
        order.append(len(drawn) - 1)
    ledger = [row for ticket in drawn for row in ticket["ledger"]]
    first = {**drawn[0], "case_id": base, "ledger": ledger, "seed": seed}
    queue = []
    for position, request in enumerate(order[1:], start=2):
        ticket = {**drawn[request], "case_id": f"{base}-t{position}"}
        queue.append({key: value for key, value in ticket.items() if key not in _SHARED})
    first["queue"] = queue
    return first


_SHARED = ("ledger", "split", "seed", "cap_cents")  # a queued ticket takes these from the first


def _resent_positions(rng: random.Random, tickets: int) -> set[int]:
    count = max(1, (tickets - 1) // 3)
    return set(rng.sample(range(1, tickets), count))


def _fitting_ticket(
    rng: random.Random, drawn: list[dict[str, Any]], seed: int | None, ticket_of: Ticket
) -> dict[str, Any]:
    """A ticket that fits beside ``drawn``: from ``seed`` if it fits, else from fresh seeds."""
    for _ in range(MAX_DRAWS):
        ticket_seed = seed if seed is not None else rng.randrange(-SEED_BOUND, SEED_BOUND)
        ticket = ticket_of(ticket_seed)
        if _fits(ticket, drawn):
            return ticket
        seed = None
    raise RuntimeError(f"no ticket fitting the queue in {MAX_DRAWS} draws")  # pragma: no cover


def _fits(ticket: dict[str, Any], drawn: list[dict[str, Any]]) -> bool:
    if any(other["order"]["order_id"] == ticket["order"]["order_id"] for other in drawn):
        return False
    ledger = [row for other in [*drawn, ticket] for row in other["ledger"]]
    return all(not audit_case({**other, "ledger": ledger}) for other in [*drawn, ticket])


__all__ = ["Ticket", "build_queue"]
