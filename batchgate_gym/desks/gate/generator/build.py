"""Turn a plan into a case: rows, planted defects, truth, ids, sources, prompt.

Customers batches are built before orders batches because an orders batch may
refer to the new customers of a clean customers batch and a clean orders batch
carries orders for customers a customers batch re-sends. Row counts, batch-id
digits and source notes are drawn for every batch alike, after the plan, so none
of them says which batch is defective.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from batchgate_gym.kernel.plain import (
    KeptByForm,
    as_int,
    check_int,
    check_seed,
    checked_family_knobs,
    frozen,
    short_repr,
)

from ..contract import contract
from .context import CaseContext
from .defects import DEFECTS, EXTRA_POOL, Free, Rows
from .edges import EDGES
from .families import FAMILIES, Slot, variants
from .ids import CUSTOMER_DIGITS, ORDER_DIGITS, digits_for
from .plan import Layout, Plan, plan_case, rows_needed, with_extras
from .rows import WAREHOUSE_CUSTOMERS, WAREHOUSE_ORDERS, customer_rows, order_rows

ORDER_SOURCES = ("shop-api export", "shop-api export (retry)", "pos export")
CUSTOMER_SOURCES = ("crm sync", "crm sync (retry)")
BATCH_PREFIX = "B-0930"
ORPHANS_PER_BATCH = 3  # the most fresh customer ids an orders planter asks for
PROMPT = (
    "Nightly load for the September books, run on 2026-10-01, after the reporting window"
    " closed. {count} batches wait in staging. Load each batch that meets the data contract,"
    " quarantine each one that does not, then submit your report."
)


# The scale of a default case: every signature that takes these knobs defaults to these.
DEFAULT_ROWS_PER_BATCH = (3, 20)
DEFAULT_BATCHES = 2
DEFAULT_DEFECTS_PER_BATCH = 1


def build_case(
    seed: int,
    *,
    family: str | None = None,
    variant: int | None = None,
    rows_per_batch: int | tuple[int, int] = DEFAULT_ROWS_PER_BATCH,
    batches: int = DEFAULT_BATCHES,
    defects_per_batch: int = DEFAULT_DEFECTS_PER_BATCH,
    case_id: str | None = None,
    read_only_contract: bool = False,
) -> dict[str, Any]:
    """One case, fully determined by its arguments (the same in any process).

    ``family=None`` draws a family for two batches and mixes defect families over
    three or more (the case then records family "mixed", variant 0). ``variant``
    needs ``family``; with three or more batches a defect family plants its one
    variant in several batches (never all) and a clean family adds clean batches.
    Batches hold ``rows_per_batch`` rows (raised to what their defects need), and
    each defective batch carries at least ``defects_per_batch`` distinct
    (column, type) defects, at most as many as its table has rules. Every argument
    is checked by :func:`check_knobs` (and the seed by :func:`check_seed`) before
    anything is built: ``rows_per_batch`` up to 100,000, ``batches`` 2 to 12,
    ``defects_per_batch`` 1 to 9. With ``read_only_contract`` the case's contract is the
    one read-only value every such case shares (:func:`shared_contract`), not a fresh copy
    to change: a reset makes the case typed and never changes it, and a fresh copy, frozen
    again on every reset, cost more than reading it.
    """
    contract_of = shared_contract if read_only_contract else contract
    return compose(
        seed, family, variant, rows_per_batch, batches, defects_per_batch, case_id, Layout(), contract_of
    )


def shared_contract() -> Mapping[str, Any]:
    """The contract, frozen once: read-only, the same object every call."""
    global _SHARED_CONTRACT
    if _SHARED_CONTRACT is None:
        _SHARED_CONTRACT = frozen(contract())
    return _SHARED_CONTRACT


_SHARED_CONTRACT: Mapping[str, Any] | None = None


def compose(
    seed: int,
    family: str | None,
    variant: int | None,
    rows_per_batch: int | tuple[int, int],
    batches: int,
    defects_per_batch: int,
    case_id: str | None,
    layout: Layout,
    contract_of: Callable[[], Mapping[str, Any]] = contract,
) -> dict[str, Any]:
    """``build_case`` with a split's fixed layout (position and partner) on top, its contract
    ``contract_of()`` (a fresh copy unless told otherwise)."""
    seed = check_seed(seed)
    knobs = _checked_knobs(
        {
            "family": family,
            "variant": variant,
            "rows_per_batch": rows_per_batch,
            "batches": batches,
            "defects_per_batch": defects_per_batch,
        }
    )
    family, variant, batches = knobs["family"], knobs["variant"], knobs["batches"]
    defects_per_batch = knobs["defects_per_batch"]
    low, high = knobs["rows_per_batch"]
    rng = random.Random(2 * seed if seed >= 0 else -2 * seed - 1)  # Random(-s) would equal Random(s)
    plan = plan_case(rng, family, variant, batches, layout)
    slots = [with_extras(rng, slot, defects_per_batch) for slot in plan.slots]
    counts = _row_counts(rng, slots, low, high)
    ctx = _open(rng, slots, counts)
    rows = _fill(ctx, slots, counts)
    return {
        "case_id": case_id if case_id is not None else f"proc-{seed}",
        "family": plan.family,
        "variant": plan.variant,
        "seed": seed,
        "prompt": PROMPT.format(count=len(slots)),
        "contract": contract_of(),
        "warehouse": {"customers": ctx.wh_customers, "orders": ctx.wh_orders},
        "batches": _listed(rng, plan, slots, rows),
    }


# -- the scale knobs, checked in one place ---------------------------------------------------

MAX_ROWS_PER_BATCH = 100_000
MIN_BATCHES, MAX_BATCHES = 2, 12
# The most distinct (column, defect type) pairs one batch can carry: every rule of its
# table (orders 9, customers 5); a customers batch stops at its own table's count.
MAX_DEFECTS_PER_BATCH = max(
    len({defect.pair for defect in DEFECTS.values() if defect.table == table}) for table in EXTRA_POOL
)
KNOB_DEFAULTS: dict[str, Any] = {
    "family": None,
    "variant": None,
    "rows_per_batch": DEFAULT_ROWS_PER_BATCH,
    "batches": DEFAULT_BATCHES,
    "defects_per_batch": DEFAULT_DEFECTS_PER_BATCH,
}


def check_knobs(**knobs: Any) -> dict[str, Any]:
    """Every scale knob checked and normalised, or a ``ValueError`` naming the knob and its bound.

    ``family``: ``None`` or one of :data:`FAMILIES`. ``variant``: ``None`` or an int
    in ``0 .. variants(family) - 1``, only with ``family``. ``rows_per_batch``: an
    int or a ``(low, high)`` pair (tuple or list) of ints with
    ``1 <= low <= high <= 100_000``; it comes back as a pair. ``batches``: an int in
    ``2 .. 12``. ``defects_per_batch``: an int in ``1 .. 9``. Booleans are not ints
    here. Missing knobs take :data:`KNOB_DEFAULTS`; unknown names are refused.
    Nothing is built: the check costs microseconds whatever the values.
    """
    given, family, variant = checked_family_knobs(knobs, KNOB_DEFAULTS, FAMILIES, variants)
    return {
        "family": family,
        "variant": variant,
        "rows_per_batch": _rows_pair(given["rows_per_batch"]),
        "batches": check_int("batches", given["batches"], MIN_BATCHES, MAX_BATCHES),
        "defects_per_batch": check_int(
            "defects_per_batch", given["defects_per_batch"], 1, MAX_DEFECTS_PER_BATCH
        ),
    }


# check_knobs of each distinct set of knobs (told apart by type too), made once and handed
# out again, read-only: a source builds every case with the knobs it checked when made.
_checked_knobs = KeptByForm(lambda knobs: check_knobs(**knobs), 64)


def _rows_pair(value: Any) -> tuple[int, int]:
    # A pair first: asking whether a tuple is an integer is a slow protocol check.
    pair = value if isinstance(value, (tuple, list)) else (value, value)
    if isinstance(pair, (tuple, list)) and len(pair) == 2:
        low, high = (as_int(n) for n in pair)
        if low is not None and high is not None and 1 <= low <= high <= MAX_ROWS_PER_BATCH:
            return low, high
    raise ValueError(
        "rows_per_batch must be an int or a (low, high) pair of ints with"
        f" 1 <= low <= high <= {MAX_ROWS_PER_BATCH:,}, not {short_repr(value)}"
    )


def _row_counts(rng: random.Random, slots: list[Slot], low: int, high: int) -> list[int]:
    """One count per batch from the same range; the floor is what the case's defects need."""
    low = max(low, *(rows_needed(slot) for slot in slots))
    high = max(high, low)
    return [rng.randint(low, high) for _ in slots]


def _open(rng: random.Random, slots: list[Slot], counts: list[int]) -> CaseContext:
    """The warehouse and id pools, wide enough for every row this case will hold."""
    customer_rows_total = sum(n for slot, n in zip(slots, counts, strict=True) if slot.table == "customers")
    order_rows_total = sum(n for slot, n in zip(slots, counts, strict=True) if slot.table == "orders")
    customers_needed = WAREHOUSE_CUSTOMERS + customer_rows_total + ORPHANS_PER_BATCH * len(slots)
    orders_needed = WAREHOUSE_ORDERS + order_rows_total
    return CaseContext.open(
        rng, digits_for(customers_needed, CUSTOMER_DIGITS), digits_for(orders_needed, ORDER_DIGITS)
    )


def _fill(ctx: CaseContext, slots: list[Slot], counts: list[int]) -> list[Rows]:
    """Rows for every slot: customers batches first, then orders batches."""
    rows: list[Rows] = [[] for _ in slots]
    new_customers: list[str] = []
    for i, slot in enumerate(slots):
        if slot.table == "customers":
            rows[i] = customer_rows(ctx.rng, ctx.customer_ids.take(counts[i]))
            _plant(ctx, slot, rows[i])
            if not slot.defects:
                new_customers += [row["customer_id"] for row in rows[i]]
    for i, slot in enumerate(slots):
        if slot.table == "orders":
            rows[i] = _orders(ctx, slot, counts[i], new_customers)
            _plant(ctx, slot, rows[i])
    return rows


def _orders(ctx: CaseContext, slot: Slot, count: int, new_customers: list[str]) -> Rows:
    """Clean orders for warehouse customers, plus the new or re-sent ones they must show."""
    linked = new_customers if slot.needs_new else []
    rows = order_rows(ctx.rng, ctx.order_ids.take(count), ctx.wh_customer_ids + linked)
    forced = [linked[int(ctx.rng.random() * len(linked))]] if linked else []
    if not slot.defects and ctx.featured:
        forced += ctx.rng.sample(ctx.featured, min(len(ctx.featured), max(1, count // 3)))
    forced = forced[:count]
    for index, customer in zip(ctx.rng.sample(range(count), len(forced)), forced, strict=True):
        rows[index]["customer_id"] = customer
    return rows


def _plant(ctx: CaseContext, slot: Slot, rows: Rows) -> None:
    """Plant the slot's defects and edges, each on rows of its own, at random positions.

    Each planter may take extra rows only beyond what the planters after it need.
    """
    order = list(range(len(rows)))
    ctx.rng.shuffle(order)
    free = Free(order)
    planters = [(DEFECTS[n].min_rows, DEFECTS[n].plant) for n in slot.defects]
    planters += [(EDGES[n][1], EDGES[n][2]) for n in slot.edges]
    still_needed = sum(need for need, _ in planters)
    for need, plant in planters:
        still_needed -= need
        free.reserve = still_needed
        plant(ctx, rows, free)


def truth(slot: Slot) -> dict[str, Any]:
    """What the grader needs: every (column, type) planted, and every citation that counts."""
    if not slot.defects:
        return {"defective": False, "defects": []}
    defects: list[tuple[str, str]] = []
    accepted: list[tuple[str, str]] = []
    for name in slot.defects:
        defect = DEFECTS[name]
        _add(defects, defect.pair)
        _add(accepted, defect.pair)
        for other in defect.also_accepted:
            _add(accepted, (defect.column, other))
    result: dict[str, Any] = {"defective": True, "defects": _citations(defects)}
    if accepted != defects:
        result["accepted"] = _citations(accepted)
    return result


def _add(pairs: list[tuple[str, str]], pair: tuple[str, str]) -> None:
    if pair not in pairs:
        pairs.append(pair)


def _citations(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"column": column, "type": kind} for column, kind in pairs]


def _listed(rng: random.Random, plan: Plan, slots: list[Slot], rows: list[Rows]) -> list[dict[str, Any]]:
    """Batches in listing order; ids ``B-0930-<two random digits>-<position>``."""
    digits = f"{int(rng.random() * 100):02d}"
    batches = []
    for position, index in enumerate(plan.order, start=1):
        slot = slots[index]
        sources = ORDER_SOURCES if slot.table == "orders" else CUSTOMER_SOURCES
        batches.append(
            {
                "batch_id": f"{BATCH_PREFIX}-{digits}-{position}",
                "table": slot.table,
                "source": sources[int(rng.random() * len(sources))],
                "rows": rows[index],
                "truth": truth(slot),
            }
        )
    return batches
