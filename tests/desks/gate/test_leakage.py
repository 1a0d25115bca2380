"""Nothing but the rows gives a defective batch away.

Each leak the original environment had to close is checked here at the level of
the individual row, and a broad test tries every single-feature metadata rule an
agent could apply without reading a row ("the batch with the lower X", "the
batch whose X equals Y") on every two-batch case that has a defective batch.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import statistics
from collections.abc import Callable
from typing import Any

import pytest

from batchgate_gym.desks.gate.contract import WINDOW_END, WINDOW_START
from batchgate_gym.desks.gate.generator import FAMILIES, build_case, build_split

Case = dict[str, Any]
Batch = dict[str, Any]
LIMIT = 0.60  # no metadata rule may pick the defective batch more often than this


@functools.cache
def split(name: str) -> tuple[Case, ...]:
    return tuple(build_split(name))


@functools.cache
def procedural() -> tuple[Case, ...]:
    return tuple(build_case(seed) for seed in range(3000))


def corpus(name: str) -> tuple[Case, ...]:
    return procedural() if name == "procedural" else split(name)


def pairs(batch: Batch) -> set[tuple[str, str]]:
    return {(d["column"], d["type"]) for d in batch["truth"]["defects"]}


def defective_pairs(cases: tuple[Case, ...]) -> list[tuple[Case, int]]:
    """Two-batch cases with exactly one defective batch, and that batch's index."""
    found = []
    for case in cases:
        flags = [b["truth"]["defective"] for b in case["batches"]]
        if len(flags) == 2 and sum(flags) == 1:
            found.append((case, flags.index(True)))
    return found


def features(batch: Batch, position: int) -> dict[str, Any]:
    """Everything about a batch an agent can see without judging a single row."""
    rows, is_orders = batch["rows"], batch["table"] == "orders"
    number = batch["batch_id"].rsplit("-", 1)[1]

    def low_high(column: str, present: bool = True) -> tuple[Any, Any]:
        if not present:
            return None, None
        values = [row[column] for row in rows]
        return min(values), max(values)

    order_ids = low_high("order_id", is_orders)
    customer_ids = low_high("customer_id")
    dates = low_high("order_date", is_orders)  # raw rows: out-of-window ones included
    return {
        "batch_id": batch["batch_id"],
        "batch_number": int(number),
        "suffix": number,
        "table": batch["table"],
        "source": batch["source"],
        "row_count": len(rows),
        "position": position,
        "min_order_id": order_ids[0],
        "max_order_id": order_ids[1],
        "min_customer_id": customer_ids[0],
        "max_customer_id": customer_ids[1],
        "min_order_date": dates[0],
        "max_order_date": dates[1],
    }


def sort_key(value: Any) -> tuple:
    return (0,) if value is None else (1, value)


Sample = tuple[dict[str, Any], dict[str, Any], int]  # features of batch 1, of batch 2, defective index


def samples(cases: list[tuple[Case, int]]) -> list[Sample]:
    return [(features(case["batches"][0], 0), features(case["batches"][1], 1), bad) for case, bad in cases]


def accuracy(cases: list[tuple[Case, int]], feature: str, pick: Callable[[Any, Any], int | None]) -> float:
    """Share of cases whose defective batch the rule picks; a tie counts as a coin flip."""
    score = 0.0
    for first, second, bad in samples(cases):
        chosen = pick(first[feature], second[feature])
        score += 0.5 if chosen is None else float(chosen == bad)
    return score / len(cases)


def lower(a: Any, b: Any) -> int | None:
    return None if sort_key(a) == sort_key(b) else int(sort_key(b) < sort_key(a))


def higher(a: Any, b: Any) -> int | None:
    chosen = lower(a, b)
    return None if chosen is None else 1 - chosen


def equals(value: Any) -> Callable[[Any, Any], int | None]:
    return lambda a, b: None if (a == value) == (b == value) else int(b == value)


def all_rules(cases: list[tuple[Case, int]]) -> dict[tuple, float]:
    """Every lower/higher rule and every "equals Y" / "differs from Y" rule, per feature.

    For "equals Y" only cases where exactly one batch has Y decide; ``hits[Y]``
    counts those where it is the defective one, ``misses[Y]`` the others.
    """
    table = samples(cases)
    count = len(table)
    result: dict[tuple, float] = {}
    for feature in table[0][0]:
        ordered = hits_low = 0.0
        hits: dict[Any, int] = {}
        misses: dict[Any, int] = {}
        for first, second, bad in table:
            a, b = first[feature], second[feature]
            if sort_key(a) != sort_key(b):
                ordered += 1
                hits_low += (sort_key(b) < sort_key(a)) == bool(bad)
            if a != b:
                good_value = (a, b)[1 - bad]
                hits[(a, b)[bad]] = hits.get((a, b)[bad], 0) + 1
                misses[good_value] = misses.get(good_value, 0) + 1
        result[feature, "lower"] = (hits_low + (count - ordered) / 2) / count
        result[feature, "higher"] = (ordered - hits_low + (count - ordered) / 2) / count
        for value in set(hits) | set(misses):
            decided = hits.get(value, 0) + misses.get(value, 0)
            result[feature, "==", value] = (hits.get(value, 0) + (count - decided) / 2) / count
            result[feature, "!=", value] = (misses.get(value, 0) + (count - decided) / 2) / count
    return result


# --- the broad test ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["train", "eval", "procedural"])
def test_no_single_metadata_rule_finds_the_defective_batch(name: str) -> None:
    cases = defective_pairs(corpus(name))
    assert len(cases) >= (24 if name == "eval" else 240)
    rules = all_rules(cases)
    worst = max(rules, key=rules.get)
    assert rules[worst] < LIMIT, (worst, rules[worst])
    for feature in ("min_order_date", "max_order_date"):
        assert rules[feature, "lower"] < LIMIT and rules[feature, "higher"] < LIMIT
    # the fast counting agrees with applying the rules one by one
    assert rules["position", "lower"] == accuracy(cases, "position", lower)
    assert rules["table", "==", "customers"] == accuracy(cases, "table", equals("customers"))
    assert rules["source", "==", "pos export"] == accuracy(cases, "source", equals("pos export"))


@pytest.mark.parametrize("name", ["train", "eval"])
def test_position_and_table_are_exactly_even_in_the_splits(name: str) -> None:
    cases = defective_pairs(split(name))
    assert accuracy(cases, "position", lower) == 0.5
    assert accuracy(cases, "table", equals("customers")) == 0.5


# --- row-level checks, one per leak --------------------------------------------------


@pytest.mark.parametrize("name", ["train", "eval", "procedural"])
def test_batch_id_suffix_is_only_the_listing_position(name: str) -> None:
    firsts = []
    for case, bad in defective_pairs(corpus(name)):
        digits = {b["batch_id"].split("-")[2] for b in case["batches"]}
        assert len(digits) == 1  # the two random digits are shared, so they cannot differ
        for position, batch in enumerate(case["batches"], start=1):
            assert re.fullmatch(rf"B-0930-[0-9]{{2}}-{position}", batch["batch_id"])
        firsts.append(bad == 0)
    assert 0.45 <= statistics.mean(firsts) <= 0.55


def test_order_ids_are_drawn_at_random_not_counted_up() -> None:
    sorted_batches = total = 0
    for case in split("train"):
        for batch in case["batches"]:
            ids = [row["order_id"] for row in batch["rows"]] if batch["table"] == "orders" else []
            if len(ids) >= 6:
                total += 1
                sorted_batches += ids in (sorted(ids), sorted(ids, reverse=True))
    assert sorted_batches / total < 0.02
    orders_pairs = [
        (case, bad)
        for case, bad in defective_pairs(split("train"))
        if all(b["table"] == "orders" for b in case["batches"])
    ]
    assert 0.4 < accuracy(orders_pairs, "min_order_id", lower) < LIMIT
    assert 0.4 < accuracy(orders_pairs, "max_order_id", higher) < LIMIT


@pytest.mark.parametrize("name", ["train", "procedural"])
def test_source_note_is_drawn_independently(name: str) -> None:
    by_source: dict[str, list[bool]] = {}
    for case, _ in defective_pairs(corpus(name)):
        for batch in case["batches"]:
            by_source.setdefault(batch["source"], []).append(batch["truth"]["defective"])
    assert "shop-api export (retry)" in by_source and "crm sync (retry)" in by_source
    for source, flags in by_source.items():
        assert 0.38 <= statistics.mean(flags) <= 0.62, source


def test_duplicates_replace_rows_so_row_counts_do_not_move() -> None:
    for family in ("resent-rows", "dimension-fanout", "blank-amount", "orphan-customer"):
        for variant in range(4):
            for seed in range(15):
                case = build_case(seed, family=family, variant=variant, rows_per_batch=(11, 11))
                assert [len(b["rows"]) for b in case["batches"]] == [11, 11]
    bad, good = [], []
    for case, index in defective_pairs(split("train")):
        bad.append(len(case["batches"][index]["rows"]))
        good.append(len(case["batches"][1 - index]["rows"]))
    assert abs(statistics.mean(bad) - statistics.mean(good)) < 1.0


def known_customers(case: Case) -> set[str]:
    """Warehouse customers plus those of clean customers batches (loaded first)."""
    known = {row["customer_id"] for row in case["warehouse"]["customers"]}
    for batch in case["batches"]:
        if batch["table"] == "customers" and not batch["truth"]["defective"]:
            known |= {row["customer_id"] for row in batch["rows"]}
    return known


def percentile(value: str, others: list[str]) -> float:
    return sum(other < value for other in others) / len(others)


def test_orphan_new_and_resent_customers_share_one_id_range() -> None:
    orphan_ranks, new_ranks, resent_ranks = [], [], []
    for case in split("train"):
        warehouse = sorted(row["customer_id"] for row in case["warehouse"]["customers"])
        every_id = warehouse + [r["customer_id"] for b in case["batches"] for r in b["rows"]]
        assert len({(i[0], len(i)) for i in every_id}) == 1  # one prefix, one width
        known = known_customers(case)
        for batch in case["batches"]:
            for row in batch["rows"]:
                customer = row["customer_id"]
                if batch["table"] == "orders" and customer not in known:
                    orphan_ranks.append(percentile(customer, warehouse))
                elif batch["table"] == "customers":
                    ranks = resent_ranks if customer in warehouse else new_ranks
                    ranks.append(percentile(customer, warehouse))
    for ranks in (orphan_ranks, new_ranks, resent_ranks):
        assert len(ranks) >= 40 and 0.4 <= statistics.mean(ranks) <= 0.6


def in_window(day: str) -> bool:
    return bool(re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", day)) and WINDOW_START <= day <= WINDOW_END


@pytest.mark.parametrize("name", ["train", "eval", "procedural"])
def test_every_order_shares_one_date_range_but_the_planted_one(name: str) -> None:
    for case in corpus(name):
        assert all(in_window(row["order_date"]) for row in case["warehouse"]["orders"])
        for batch in case["batches"]:
            if batch["table"] != "orders":
                continue
            outside = [row for row in batch["rows"] if not in_window(row["order_date"])]
            date_defects = pairs(batch) & {("order_date", "out_of_window"), ("order_date", "invalid_value")}
            assert len(outside) == len(date_defects), (case["case_id"], batch["batch_id"])


def test_other_rows_of_a_date_defect_batch_look_the_same() -> None:
    days_bad, days_good = [], []
    for family_case in (build_case(seed, family="label-drift", variant=2) for seed in range(400)):
        for batch in family_case["batches"]:
            days = [int(r["order_date"][8:10]) for r in batch["rows"] if batch["table"] == "orders"]
            inside = [d for d, r in zip(days, batch["rows"], strict=False) if in_window(r["order_date"])]
            (days_bad if batch["truth"]["defective"] else days_good).extend(inside)
    assert abs(statistics.mean(days_bad) - statistics.mean(days_good)) < 0.6
    assert min(days_bad) == 1 and max(days_bad) == 30


@pytest.mark.parametrize("name", ["train", "eval", "procedural"])
def test_a_resent_customer_is_an_exact_resend(name: str) -> None:
    resent = 0
    for case in corpus(name):
        warehouse = {row["customer_id"]: row for row in case["warehouse"]["customers"]}
        for batch in case["batches"]:
            for row in batch["rows"] if batch["table"] == "customers" else []:
                if row["customer_id"] in warehouse:
                    resent += 1
                    assert row == warehouse[row["customer_id"]]
                elif row["email"].strip():
                    assert row["email"] == row["customer_id"].lower() + "@example.com"
    assert resent >= 3


def test_new_and_resent_customers_signed_up_over_the_same_range() -> None:
    resent, new = [], []
    for case in split("train"):
        warehouse = {row["customer_id"] for row in case["warehouse"]["customers"]}
        for batch in case["batches"]:
            for row in batch["rows"] if batch["table"] == "customers" else []:
                if in_window(row["signup_date"]) or re.fullmatch(
                    r"2025-[0-9]{2}-[0-9]{2}|2026-0[1-8]-[0-9]{2}", row["signup_date"]
                ):
                    day = dt.date.fromisoformat(row["signup_date"]).toordinal()
                    (resent if row["customer_id"] in warehouse else new).append(day)
    assert len(resent) >= 40 and len(new) >= 200
    assert abs(statistics.median(resent) - statistics.median(new)) < 60  # days
    assert abs(min(resent) - min(new)) < 60 and abs(max(resent) - max(new)) < 60


def test_every_family_hides_its_defective_batch_position() -> None:
    for family in FAMILIES[1:-1]:
        firsts = [bad == 0 for case, bad in defective_pairs(split("train")) if case["family"] == family]
        assert statistics.mean(firsts) == 0.5, family
