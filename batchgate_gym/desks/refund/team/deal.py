"""Who works which ticket: the queue dealt to the workers, requests sent again split on purpose.

The distinct requests of the queue go round-robin to the workers in queue order, each
worker keeping the queue's order. A request sent again goes to another worker than
its first copy (one with the fewest tickets so far, drawn with the environment's
generator), at the same place in that worker's list (or its end): both workers then reach the one order at about the same
time, which is the race the team game measures.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..cases import RefundCase


def agent_names(n_agents: int) -> tuple[str, ...]:
    if n_agents < 1:
        raise ValueError("a team needs at least one worker")
    return tuple(f"refund_{i}" for i in range(n_agents))


def deal_tickets(
    rng: np.random.Generator, case: RefundCase, workers: Sequence[str]
) -> dict[str, tuple[int, ...]]:
    """Each worker's tickets, as indexes into ``case.tickets``."""
    lists: dict[str, list[int]] = {worker: [] for worker in workers}
    first_of: dict[str, tuple[str, int]] = {}  # order id -> (worker, place in its list)
    dealt = 0
    for index, ticket in enumerate(case.tickets):
        order_id = ticket.order.order_id
        if order_id not in first_of:
            worker = workers[dealt % len(workers)]
            dealt += 1
            first_of[order_id] = (worker, len(lists[worker]))
            lists[worker].append(index)
            continue
        owner, place = first_of[order_id]
        others = [w for w in workers if w != owner] or [owner]
        fewest = min(len(lists[w]) for w in others)
        others = [w for w in others if len(lists[w]) == fewest]  # no worker is left without a ticket
        other = others[int(rng.integers(len(others)))]
        lists[other].insert(min(place, len(lists[other])), index)
    _give_every_worker_a_ticket(lists, workers)
    return {worker: tuple(tickets) for worker, tickets in lists.items()}


def _give_every_worker_a_ticket(lists: dict[str, list[int]], workers: Sequence[str]) -> None:
    """A queue with no more distinct requests than workers can leave one empty-handed
    (the copies went to the others): it takes the last ticket of the first worker holding
    the most. A deal that leaves nobody empty is not touched."""
    for worker in workers:
        if not lists[worker]:
            donor = max(workers, key=lambda w: len(lists[w]))
            lists[worker].append(lists[donor].pop())


__all__ = ["agent_names", "deal_tickets"]
