"""The fixed splits: eval (32 cases), train (320) and holdout (35), rebuilt byte for byte from seeds.

Both use two batches per case, one of them defective in the six defect families.
Where a random draw could leave a small split lopsided (which listing position
holds the defective batch, whether the clean batch beside an orders defect is a
customers batch), the split fixes the choice so the counts come out exactly even:
then neither position nor table picks the defective batch more than half the time.

``holdout`` is ours, never trained on: eval is the original's, and on it a checker that
skips the currency, country and both signup-date rules ties careful, since every eval
batch those rules catch breaks a rule careful checks first. Holdout is stratified by
careful's checks instead: for each of them (every contract rule, and checking customers
before the orders that need them) two cases whose defective batch breaks that rule
alone, or whose orders are listed before the customers they need, so that careful
without that check loses both; and five clean cases of edges careful must load.
"""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path
from typing import Any

from batchgate_gym.kernel.case_files import check_split, write_jsonl

from .build import DEFAULT_BATCHES, DEFAULT_DEFECTS_PER_BATCH, DEFAULT_ROWS_PER_BATCH, compose
from .families import CLEAN_FAMILIES, DEFECT_FAMILIES, FAMILIES, variant_table
from .plan import Layout

# Split cases are built at the default scale.
_DEFAULT_SCALE = (DEFAULT_ROWS_PER_BATCH, DEFAULT_BATCHES, DEFAULT_DEFECTS_PER_BATCH)

SPLITS = ("eval", "train", "holdout")  # the one definition; sources serves them by name
EVAL_SEED = 20_261_001
TRAIN_SEED = 30_261_001
HOLDOUT_SEED = 40_261_001
TRAIN_PER_FAMILY = 40
ORD, CUS = "orders", "customers"

# Per defect family, the four eval cases: (variant, defective batch listed first, clean partner).
# Twelve defective batches are listed first and twelve second; five customers batches are
# defective and five clean ones sit beside an orders defect (whose orders refer to them,
# so those list the customers first). Only clean-control-3 and legit-edge-2 list orders
# before the customers they need.
EVAL_LAYOUT: dict[str, tuple[tuple[int, bool, str], ...]] = {
    "resent-rows": ((0, True, ORD), (1, False, ORD), (2, False, CUS), (3, True, ORD)),
    "amount-bounds": ((0, True, ORD), (1, False, CUS), (2, False, ORD), (3, True, ORD)),
    "blank-amount": ((0, False, ORD), (1, True, ORD), (2, True, ORD), (3, False, CUS)),
    "orphan-customer": ((0, True, ORD), (1, False, ORD), (2, False, CUS), (3, True, ORD)),
    "label-drift": ((0, True, ORD), (1, False, ORD), (2, False, CUS), (3, True, ORD)),
    "dimension-fanout": ((0, False, ORD), (1, True, ORD), (2, True, ORD), (3, False, ORD)),
}


# Per check of careful's (policies.gate.reference.CAREFUL_CHECKS), two cases it alone
# decides: (family, variant, the defects planted instead of the variant's own, or None).
HOLDOUT_PLAN: dict[str, tuple[tuple[str, int, tuple[str, ...] | None], ...]] = {
    "customer_id__duplicate_key": (("dimension-fanout", 0, None), ("dimension-fanout", 1, None)),
    "email__missing_value": (("blank-amount", 2, None), ("blank-amount", 4, None)),
    "country__invalid_value": (("label-drift", 7, None), ("label-drift", 7, None)),
    "signup_date__invalid_value": (("label-drift", 9, None), ("label-drift", 9, None)),
    "signup_date__out_of_window": (("label-drift", 8, None), ("label-drift", 8, None)),
    "order_id__duplicate_key": (("resent-rows", 0, None), ("resent-rows", 1, None)),
    "customer_id__orphan_reference": (("orphan-customer", 0, None), ("orphan-customer", 3, None)),
    "currency__wrong_currency": (("label-drift", 5, None), ("label-drift", 1, ("euro",))),
    "status__invalid_value": (("label-drift", 0, None), ("label-drift", 6, None)),
    "order_date__invalid_value": (("label-drift", 3, None), ("label-drift", 3, None)),
    "order_date__out_of_window": (("label-drift", 2, None), ("label-drift", 2, None)),
    "amount__missing_value": (("blank-amount", 0, None), ("blank-amount", 1, None)),
    "amount__invalid_value": (("label-drift", 1, ("comma-amount",)), ("label-drift", 1, ("comma-amount",))),
    "amount__out_of_range": (("amount-bounds", 0, None), ("amount-bounds", 3, None)),
    "customers-first": (("clean-control", 3, None), ("legit-edge", 2, None)),
    "clean": (
        ("clean-control", 0, None),
        ("clean-control", 2, None),
        ("legit-edge", 0, None),
        ("legit-edge", 1, None),
        ("legit-edge", 4, None),
    ),
}


def split_path(name: str) -> Path:
    """Where the committed split lives: ``desks/gate/data/<name>.jsonl``."""
    check_split(name, SPLITS)
    return Path(__file__).resolve().parent.parent / "data" / f"{name}.jsonl"


def build_split(name: str) -> list[dict[str, Any]]:
    """All cases of a split, in file order, rebuilt from the split's fixed seeds."""
    check_split(name, SPLITS)
    return [
        compose(seed, family, variant, *_DEFAULT_SCALE, case_id, layout)
        for case_id, seed, family, variant, layout in _entries(name)
    ]


def dumps_case(case: dict[str, Any]) -> str:
    """One JSONL line with sorted keys, as the original files are written (no newline)."""
    return json.dumps(case, sort_keys=True)


def write_split(name: str, path: str | Path | None = None) -> Path:
    """Write a split as JSONL (one case a line, ``\\n`` endings); returns the path."""
    target = Path(path) if path is not None else split_path(name)
    return write_jsonl(target, (dumps_case(case) for case in build_split(name)))


def _entries(name: str) -> list[tuple[str, int, str, int, Layout]]:
    """(case_id, seed, family, variant, layout) for every case of a split."""
    if name == "holdout":
        return _holdout_entries()
    return _eval_entries() if name == "eval" else _train_entries()


def _eval_entries() -> list[tuple[str, int, str, int, Layout]]:
    entries = []
    for index, family in enumerate(FAMILIES):
        for k in range(4):
            seed = EVAL_SEED + 100 * index + k
            if family in CLEAN_FAMILIES:
                entries.append((f"eval-{family}-{k}", seed, family, k, Layout()))
            else:
                variant, first, partner = EVAL_LAYOUT[family][k]
                layout = Layout(defect_first=first, partner=_partner_or_none(family, variant, partner))
                entries.append((f"eval-{family}-{k}", seed, family, variant, layout))
    return entries


@functools.cache
def _train_layouts() -> dict[tuple[str, int], Layout]:
    """Balanced train layout: half of each variant's defects listed first, and as many
    clean customers batches beside orders defects as there are defective customers batches."""
    rng = random.Random(TRAIN_SEED)
    layouts: dict[tuple[str, int], Layout] = {}
    open_partner: list[tuple[str, int]] = []
    customers_defects = forced_customers = 0
    for family in DEFECT_FAMILIES:
        table = variant_table(family)
        for variant in range(len(table)):
            ks = list(range(variant, TRAIN_PER_FAMILY, len(table)))
            firsts = [i % 2 == 0 for i in range(len(ks))]
            rng.shuffle(firsts)
            chosen = table[variant]
            for k, first in zip(ks, firsts, strict=True):
                layouts[family, k] = Layout(defect_first=first)
                if chosen.slots[0].table == CUS:
                    customers_defects += 1
                elif chosen.partner == CUS:
                    forced_customers += 1
                else:
                    open_partner.append((family, k))
    rng.shuffle(open_partner)
    for i, key in enumerate(open_partner):
        partner = CUS if i < customers_defects - forced_customers else ORD
        layouts[key] = Layout(defect_first=layouts[key].defect_first, partner=partner)
    return layouts


def _train_entries() -> list[tuple[str, int, str, int, Layout]]:
    layouts = _train_layouts()
    entries = []
    for index, family in enumerate(FAMILIES):
        count = len(variant_table(family))
        for k in range(TRAIN_PER_FAMILY):
            seed = TRAIN_SEED + 1000 * index + k
            layout = layouts.get((family, k), Layout())
            entries.append((f"train-{family}-{k}", seed, family, k % count, layout))
    return entries


def _holdout_entries() -> list[tuple[str, int, str, int, Layout]]:
    """Each planned case; a defect listed first in one case of a pair and second in the
    other, beside a clean orders batch in one and a customers batch where it may."""
    entries = []
    for index, (check, planned) in enumerate(HOLDOUT_PLAN.items()):
        for k, (family, variant, defects) in enumerate(planned):
            seed = HOLDOUT_SEED + 100 * index + k
            layout = Layout()
            if family not in CLEAN_FAMILIES:
                partner = _partner_or_none(family, variant, (CUS, ORD)[k % 2])
                layout = Layout(defect_first=k % 2 == 0, partner=partner, defects=defects)
            entries.append((f"holdout-{check}-{k}", seed, family, variant, layout))
    return entries


def _partner_or_none(family: str, variant: int, partner: str) -> str | None:
    """A customers defect, or a variant that fixes its partner, takes no layout partner."""
    chosen = variant_table(family)[variant]
    if chosen.slots[0].table == CUS or chosen.partner != "either":
        return None
    return partner
