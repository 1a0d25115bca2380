"""The eight case families, each a table of variants written as data.

A variant names the batches of a two-batch case. In a defect family it names
only the defective batch; the clean batch beside it (orders, or new customers the
defective orders refer to) is chosen per case, so that a customers batch is clean
about as often as it is defective. In a clean family it names both batches and,
when orders need the customers arriving with them, which comes first in the list.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Slot:
    """One batch to build: its table, planted defects, clean edges and references.

    ``needs_new``: some orders refer to customers of a clean customers batch of
    the same case (which a careful agent loads first).
    """

    table: str
    defects: tuple[str, ...] = ()
    edges: tuple[str, ...] = ()
    needs_new: bool = False


@dataclass(frozen=True)
class Variant:
    """One scenario of a family.

    ``listing``: "free", "customers-first" or "orders-first" (clean families).
    ``partner``: the clean batch beside the defective one: "either", "orders" or
    "customers" (defect families).
    """

    name: str
    slots: tuple[Slot, ...]
    listing: str = "free"
    partner: str = "either"


def _bad(name: str, table: str, *defects: str, partner: str = "either") -> Variant:
    """A defect-family variant: one defective batch carrying ``defects``."""
    if table == "customers":
        partner = "orders"  # its orders must not need the new customers of a bad batch
    return Variant(name, (Slot(table, defects),), partner=partner)


_ORDERS = Slot("orders")
_NEW = Slot("customers")
_NEEDS = Slot("orders", needs_new=True)

VARIANTS: dict[str, tuple[Variant, ...]] = {
    "clean-control": (
        Variant("two-orders", (_ORDERS, _ORDERS)),
        Variant("customers-then-orders", (_NEW, _NEEDS), listing="customers-first"),
        Variant("customers-beside-orders", (_NEW, _ORDERS), listing="customers-first"),
        Variant("orders-then-customers", (_NEW, _NEEDS), listing="orders-first"),
    ),
    "resent-rows": (
        _bad("resent-overlap", "orders", "resent-orders"),
        _bad("repeated-in-batch", "orders", "repeated-order"),
        _bad("update-as-insert", "orders", "resent-update"),
        _bad("corrected-line", "orders", "corrected-order"),
    ),
    "amount-bounds": (
        _bad("cents-as-dollars", "orders", "cents-as-dollars"),
        _bad("negative-sale", "orders", "negative-sale"),
        _bad("cents-as-dollars-refund", "orders", "cents-as-dollars-refund"),
        _bad("positive-refund", "orders", "positive-refund"),
        _bad("zero-amount", "orders", "zero-amount"),
    ),
    "blank-amount": (
        _bad("empty-amount", "orders", "blank-amount"),
        _bad("spaces-amount", "orders", "spaces-amount"),
        _bad("empty-email", "customers", "blank-email"),
        _bad("several-blank-amounts", "orders", "blank-amounts"),
        _bad("spaces-email", "customers", "spaces-email"),
    ),
    "orphan-customer": (
        _bad("unknown-customer", "orders", "orphan"),
        _bad("unknown-customer-several-orders", "orders", "orphan-several"),
        _bad("unknown-beside-new-customers", "orders", "orphan", partner="customers"),
        _bad("two-unknown-customers", "orders", "orphan-two"),
    ),
    "label-drift": (
        _bad("capitalised-status", "orders", "capital-status"),
        _bad("eu-export", "orders", "euro", "comma-amount"),
        _bad("date-outside-window", "orders", "outside-window"),
        _bad("timestamp-order-date", "orders", "timestamp-date"),
        _bad("padded-status", "orders", "padded-status"),
        _bad("lower-case-currency", "orders", "lower-usd"),
        _bad("unknown-status", "orders", "unknown-status"),
        _bad("country-code", "customers", "bad-country"),
        _bad("signup-after-window", "customers", "future-signup"),
        _bad("timestamp-signup", "customers", "timestamp-signup"),
    ),
    "dimension-fanout": (
        _bad("resent-customer", "customers", "resent-customer"),
        _bad("repeated-new-customer", "customers", "repeated-customer"),
        _bad("crm-release", "customers", "resent-customer", "bad-country", "timestamp-signup"),
        _bad("resent-with-future-signup", "customers", "resent-customer", "future-signup"),
        _bad("full-resync", "customers", "resync-customers"),
    ),
    "legit-edge": (
        Variant("refunds", (Slot("orders", edges=("refunds",)), _ORDERS)),
        Variant("amounts-at-the-bounds", (Slot("orders", edges=("at-cap", "smallest-sale")), _ORDERS)),
        Variant("same-session-orders-first", (_NEW, _NEEDS), listing="orders-first"),
        Variant(
            "same-session-last-day",
            (
                Slot("customers", edges=("signup-last-day",)),
                Slot("orders", edges=("last-day",), needs_new=True),
            ),
            listing="customers-first",
        ),
        Variant("refund-floor-first-day", (Slot("orders", edges=("refund-floor", "first-day")), _ORDERS)),
    ),
}

FAMILIES: tuple[str, ...] = (
    "clean-control",
    "resent-rows",
    "amount-bounds",
    "blank-amount",
    "orphan-customer",
    "label-drift",
    "dimension-fanout",
    "legit-edge",
)
CLEAN_FAMILIES: tuple[str, ...] = ("clean-control", "legit-edge")
DEFECT_FAMILIES: tuple[str, ...] = tuple(f for f in FAMILIES if f not in CLEAN_FAMILIES)


def variants(family: str) -> int:
    """How many variants ``family`` has (variant numbers run from 0)."""
    return len(variant_table(family))


def variant_table(family: str) -> tuple[Variant, ...]:
    """The variants of ``family``; a clear error for an unknown name."""
    try:
        return VARIANTS[family]
    except KeyError:
        raise ValueError(f"unknown family {family!r}; expected one of {', '.join(FAMILIES)}") from None
