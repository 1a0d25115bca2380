"""Which batches a case holds and in which order they are listed, before any row exists.

Everything an agent could read without opening a batch (table, listing position,
row count, source note) is decided here or later without looking at which batch
is defective: positions and partners come from the random stream or from a
split's balanced layout, never from the family.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from .defects import DEFECTS, EXTRA_POOL
from .edges import EDGES
from .families import CLEAN_FAMILIES, DEFECT_FAMILIES, FAMILIES, Slot, Variant, variant_table

P_CUSTOMERS_PARTNER = 0.35  # share of orders defects beside a clean new-customers batch
P_EXTRA_CUSTOMERS = 0.3  # share of extra clean batches (many-batch cases) that are customers
P_EXTRA_EDGE = 0.25  # share of extra clean batches that carry a legitimate edge
P_NEEDS_NEW = 0.5  # share of orders batches (many-batch cases) that refer to new customers


@dataclass(frozen=True)
class Layout:
    """Choices a split fixes instead of drawing, so its layout is exactly balanced."""

    defect_first: bool | None = None
    partner: str | None = None  # "orders" | "customers": the clean batch beside an orders defect
    defects: tuple[str, ...] | None = None  # planted instead of the variant's own (one rule alone)


@dataclass(frozen=True)
class Plan:
    family: str
    variant: int
    slots: tuple[Slot, ...]
    order: tuple[int, ...]  # slot indices in listing order


def plan_case(
    rng: random.Random, family: str | None, variant: int | None, batches: int, layout: Layout
) -> Plan:
    """The batches of one case: a family's two-batch scenario, or many batches mixed."""
    if batches == 2:
        family = family if family is not None else FAMILIES[int(rng.random() * len(FAMILIES))]
        number = _variant_number(rng, family, variant)
        if family in CLEAN_FAMILIES:
            return _clean_pair(rng, family, number)
        return _defect_pair(rng, family, number, layout)
    return _many(rng, family, variant, batches)


def with_extras(rng: random.Random, slot: Slot, defects_per_batch: int) -> Slot:
    """Top a defective slot up to ``defects_per_batch`` distinct (column, type) defects."""
    if not slot.defects or defects_per_batch <= 1:  # a defect has one pair: nothing to add
        return slot
    pairs = {DEFECTS[name].pair for name in slot.defects}
    pool = [name for name in EXTRA_POOL[slot.table] if DEFECTS[name].pair not in pairs]
    wanted = min(defects_per_batch - len(pairs), len(pool))
    if wanted <= 0:
        return slot
    return replace(slot, defects=slot.defects + tuple(rng.sample(pool, wanted)))


def rows_needed(slot: Slot) -> int:
    """The fewest rows the slot's defects and edges can be planted on."""
    return sum(DEFECTS[name].min_rows for name in slot.defects) + sum(EDGES[name][1] for name in slot.edges)


def _variant_number(rng: random.Random, family: str, variant: int | None) -> int:
    count = len(variant_table(family))
    if variant is None:
        return int(rng.random() * count)
    if not 0 <= variant < count:
        raise ValueError(f"family {family!r} has variants 0..{count - 1}, not {variant}")
    return variant


def _clean_pair(rng: random.Random, family: str, number: int) -> Plan:
    chosen = variant_table(family)[number]
    return Plan(family, number, chosen.slots, _listing(rng, chosen))


def _listing(rng: random.Random, chosen: Variant) -> tuple[int, ...]:
    """Listing order of a clean pair: fixed when the variant tests load order, else drawn."""
    tables = [slot.table for slot in chosen.slots]
    if chosen.listing == "free" or tables.count("customers") != 1:
        return (0, 1) if rng.random() < 0.5 else (1, 0)
    first = "customers" if chosen.listing == "customers-first" else "orders"
    return (0, 1) if tables[0] == first else (1, 0)


def _defect_pair(rng: random.Random, family: str, number: int, layout: Layout) -> Plan:
    chosen = variant_table(family)[number]
    bad = chosen.slots[0] if layout.defects is None else replace(chosen.slots[0], defects=layout.defects)
    partner = _partner(rng, chosen, bad, layout)
    if partner == "customers":
        bad = replace(bad, needs_new=True)
    first = layout.defect_first if layout.defect_first is not None else rng.random() < 0.5
    slots = (bad, Slot(partner))
    return Plan(family, number, slots, (0, 1) if first else (1, 0))


def _partner(rng: random.Random, chosen: Variant, bad: Slot, layout: Layout) -> str:
    """The clean batch's table: a customers defect always sits beside orders."""
    if bad.table == "customers" or chosen.partner == "orders":
        wanted = "orders"
    elif chosen.partner == "customers":
        wanted = "customers"
    elif layout.partner is not None:
        return layout.partner
    else:
        return "customers" if rng.random() < P_CUSTOMERS_PARTNER else "orders"
    if layout.partner not in (None, wanted):
        raise ValueError(f"variant {chosen.name!r} needs a clean {wanted} batch beside it")
    return wanted


def _many(rng: random.Random, family: str | None, variant: int | None, batches: int) -> Plan:
    """Three or more batches: several defective (never all), the rest clean, shuffled."""
    if family in CLEAN_FAMILIES:
        number = _variant_number(rng, family, variant)
        slots = list(variant_table(family)[number].slots)
        slots += [_extra_clean(rng) for _ in range(batches - len(slots))]
    else:
        number = _variant_number(rng, family, variant) if family is not None else 0
        defective = [_draw_defect(rng, family, number) for _ in range(_defective_count(rng, batches))]
        slots = defective + [_extra_clean(rng) for _ in range(batches - len(defective))]
        if any(slot.needs_new for slot in defective) and not _has_clean_customers(slots):
            slots[len(defective)] = Slot("customers")
    slots = _link_new_customers(rng, slots)
    order = list(range(len(slots)))
    rng.shuffle(order)
    return Plan(family if family is not None else "mixed", number, tuple(slots), tuple(order))


def _defective_count(rng: random.Random, batches: int) -> int:
    """Several defective batches for a long list, one or two for a short one; never all."""
    low = max(1, batches // 4)
    return rng.randint(low, max(low, min(batches - 1, 2 * batches // 3)))


def _draw_defect(rng: random.Random, family: str | None, number: int) -> Slot:
    """A defective slot: from the given family's variant, or any defect family's."""
    if family is None:
        family = DEFECT_FAMILIES[int(rng.random() * len(DEFECT_FAMILIES))]
        number = int(rng.random() * len(variant_table(family)))
    chosen = variant_table(family)[number]
    return replace(chosen.slots[0], needs_new=chosen.partner == "customers")


def _extra_clean(rng: random.Random) -> Slot:
    """A clean batch for a many-batch case, now and then with a legitimate edge."""
    table = "customers" if rng.random() < P_EXTRA_CUSTOMERS else "orders"
    edges = [name for name, (edge_table, _, _) in EDGES.items() if edge_table == table]
    if rng.random() < P_EXTRA_EDGE:
        return Slot(table, edges=(edges[int(rng.random() * len(edges))],))
    return Slot(table)


def _has_clean_customers(slots: list[Slot]) -> bool:
    return any(slot.table == "customers" and not slot.defects for slot in slots)


def _link_new_customers(rng: random.Random, slots: list[Slot]) -> list[Slot]:
    """Let about half the orders batches refer to new customers, when any arrive clean."""
    if not _has_clean_customers(slots):
        return [replace(slot, needs_new=False) for slot in slots]
    return [
        replace(slot, needs_new=True)
        if slot.table == "orders" and not slot.needs_new and rng.random() < P_NEEDS_NEW
        else slot
        for slot in slots
    ]
