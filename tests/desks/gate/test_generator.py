"""The case generator: format, truth, splits, scale knobs, determinism and speed."""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import pathlib
import random
import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batchgate_gym.desks.gate.contract import (
    CUSTOMER_COLUMNS,
    DEFECT_TYPES,
    MAX_AMOUNT,
    ORDER_COLUMNS,
    TABLE_COLUMNS,
    WINDOW_END,
    WINDOW_START,
    contract,
)
from batchgate_gym.desks.gate.generator import (
    FAMILIES,
    audit_case,
    build_case,
    build_split,
    dumps_case,
    split_path,
    variants,
    write_split,
)
from batchgate_gym.desks.gate.generator.ids import IdPool

CLEAN = ("clean-control", "legit-edge")
# Every rule of the contract as (table, column, defect type): what must be planted somewhere.
RULES = {
    ("orders", "order_id", "duplicate_key"),
    ("orders", "customer_id", "orphan_reference"),
    ("orders", "amount", "missing_value"),
    ("orders", "amount", "invalid_value"),
    ("orders", "amount", "out_of_range"),
    ("orders", "currency", "wrong_currency"),
    ("orders", "status", "invalid_value"),
    ("orders", "order_date", "invalid_value"),
    ("orders", "order_date", "out_of_window"),
    ("customers", "customer_id", "duplicate_key"),
    ("customers", "email", "missing_value"),
    ("customers", "country", "invalid_value"),
    ("customers", "signup_date", "invalid_value"),
    ("customers", "signup_date", "out_of_window"),
}
ROOT = pathlib.Path(__file__).resolve().parents[3]


@functools.cache
def split(name: str) -> tuple[dict, ...]:
    return tuple(build_split(name))


def pairs(batch: dict) -> list[tuple[str, str]]:
    return sorted((d["column"], d["type"]) for d in batch["truth"]["defects"])


def assert_truth_matches_audit(case: dict) -> None:
    """The recorded truth is exactly what the contract finds, batch by batch."""
    for batch, found in zip(case["batches"], audit_case(case), strict=True):
        assert pairs(batch) == found, (case["case_id"], batch["batch_id"])
        assert batch["truth"]["defective"] == bool(found)
        truth = batch["truth"]
        accepted = {(d["column"], d["type"]) for d in truth.get("accepted", truth["defects"])}
        assert accepted >= set(found)


def assert_well_formed(case: dict) -> None:
    """The original JSONL schema: keys, string cells, column sets, contract, batch ids."""
    assert set(case) == {"case_id", "family", "variant", "seed", "prompt", "contract", "warehouse", "batches"}
    assert isinstance(case["variant"], int) and isinstance(case["seed"], int)
    assert case["contract"] == contract()
    assert "2026-10-01" in case["prompt"] and str(len(case["batches"])) in case["prompt"]
    assert [set(r) for r in case["warehouse"]["customers"]] == [set(CUSTOMER_COLUMNS)] * 20
    assert [set(r) for r in case["warehouse"]["orders"]] == [set(ORDER_COLUMNS)] * 30
    for position, batch in enumerate(case["batches"], start=1):
        assert set(batch) == {"batch_id", "table", "source", "rows", "truth"}
        assert re.fullmatch(rf"B-0930-[0-9]{{2}}-{position}", batch["batch_id"])
        assert all(set(row) == set(TABLE_COLUMNS[batch["table"]]) for row in batch["rows"])
        assert all(isinstance(v, str) for row in batch["rows"] for v in row.values())
        assert all(d["type"] in DEFECT_TYPES for d in batch["truth"]["defects"])
    assert not all(b["truth"]["defective"] for b in case["batches"])
    assert len({b["batch_id"][:9] for b in case["batches"]}) == 1


# --- the public API ------------------------------------------------------------------


def test_families_and_variants() -> None:
    assert FAMILIES == (
        "clean-control",
        "resent-rows",
        "amount-bounds",
        "blank-amount",
        "orphan-customer",
        "label-drift",
        "dimension-fanout",
        "legit-edge",
    )
    assert all(variants(family) >= 4 for family in FAMILIES)
    with pytest.raises(ValueError):
        variants("no-such-family")


def test_default_case_is_well_formed_and_true() -> None:
    for seed in range(300):
        case = build_case(seed)
        assert case["case_id"] == f"proc-{seed}"
        assert case["family"] in FAMILIES and len(case["batches"]) == 2
        assert_well_formed(case)
        assert_truth_matches_audit(case)


def test_every_family_and_variant_is_true() -> None:
    for family in FAMILIES:
        for variant in range(variants(family)):
            for seed in range(25):
                case = build_case(seed, family=family, variant=variant, case_id="x")
                assert (case["family"], case["variant"], case["case_id"]) == (family, variant, "x")
                assert_well_formed(case)
                assert_truth_matches_audit(case)
                assert sum(b["truth"]["defective"] for b in case["batches"]) == (family not in CLEAN)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(-(2**40), 2**40),
    family=st.sampled_from((None, *FAMILIES)),
    low=st.integers(1, 25),
    extra=st.integers(0, 25),
    batches=st.integers(2, 12),
    defects=st.integers(1, 9),
)
def test_any_knobs_give_a_true_case(
    seed: int, family: str | None, low: int, extra: int, batches: int, defects: int
) -> None:
    case = build_case(
        seed, family=family, rows_per_batch=(low, low + extra), batches=batches, defects_per_batch=defects
    )
    assert_well_formed(case)
    assert_truth_matches_audit(case)
    assert len(case["batches"]) == batches
    if family is None and batches > 2:
        assert case["family"] == "mixed"
    assert all(low <= len(b["rows"]) <= max(low + extra, 40) for b in case["batches"])


def test_bad_arguments_are_refused() -> None:
    for kwargs in (
        {"family": "nope"},
        {"variant": 0},
        {"family": "label-drift", "variant": 99},
        {"batches": 1},
        {"rows_per_batch": (0, 5)},
        {"rows_per_batch": (6, 5)},
        {"defects_per_batch": 0},
    ):
        with pytest.raises(ValueError):
            build_case(1, **kwargs)
    with pytest.raises(ValueError):
        build_split("test")
    with pytest.raises(ValueError):
        split_path("test")


# --- determinism ---------------------------------------------------------------------


def test_same_seed_same_case_different_seed_different_case() -> None:
    assert dumps_case(build_case(42)) == dumps_case(build_case(42))
    assert build_case(-7) != build_case(7)
    seen = {dumps_case(build_case(seed)) for seed in range(-200, 300)}
    assert len(seen) == 500


def test_same_seed_same_case_in_another_process() -> None:
    code = (
        "import hashlib; from batchgate_gym.desks.gate.generator import build_case, dumps_case\n"
        "for kw in ({}, {'batches': 7, 'defects_per_batch': 3}, {'family': 'dimension-fanout'}):\n"
        "    print(hashlib.sha256(dumps_case(build_case(2026, **kw)).encode()).hexdigest())\n"
    )
    mine = [
        hashlib.sha256(dumps_case(build_case(2026, **kw)).encode()).hexdigest()
        for kw in ({}, {"batches": 7, "defects_per_batch": 3}, {"family": "dimension-fanout"})
    ]
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        assert out.stdout.split() == mine


# --- the splits ----------------------------------------------------------------------


def test_committed_splits_are_regenerated_byte_for_byte(tmp_path: pathlib.Path) -> None:
    for name in ("eval", "train", "holdout"):
        text = "".join(dumps_case(case) + "\n" for case in split(name))
        assert split_path(name).read_bytes() == text.encode("utf-8")
        assert split_path(name) == ROOT / "batchgate_gym" / "desks" / "gate" / "data" / f"{name}.jsonl"
    written = write_split("eval", tmp_path / "eval.jsonl")
    assert written.read_bytes() == split_path("eval").read_bytes()


def test_dumps_case_is_one_sorted_line() -> None:
    case = build_case(3)
    line = dumps_case(case)
    assert "\n" not in line and line == json.dumps(case, sort_keys=True)
    assert json.loads(line) == case


def test_eval_split_shape() -> None:
    cases = split("eval")
    assert len(cases) == 32
    assert [c["case_id"] for c in cases] == [f"eval-{f}-{k}" for f in FAMILIES for k in range(4)]
    assert all(len(c["batches"]) == 2 for c in cases)
    assert sum(b["truth"]["defective"] for c in cases for b in c["batches"]) == 24
    for case in cases:
        assert_well_formed(case)
        assert_truth_matches_audit(case)
        assert sum(b["truth"]["defective"] for b in case["batches"]) == (case["family"] not in CLEAN)


def test_holdout_split_shape() -> None:
    cases = split("holdout")
    assert len(cases) == 35
    for case in cases:
        assert_well_formed(case)
        assert_truth_matches_audit(case)
        assert sum(b["truth"]["defective"] for b in case["batches"]) == (case["family"] not in CLEAN)
    seeds = {c["seed"] for c in cases}
    assert seeds.isdisjoint(c["seed"] for c in split("eval")) and seeds.isdisjoint(
        c["seed"] for c in split("train")
    )
    # a defect planted alone breaks exactly its one rule
    alone = [
        c
        for c in cases
        if c["case_id"].startswith(("holdout-amount__invalid", "holdout-currency__wrong_currency-1"))
    ]
    assert [
        {(d["column"], d["type"]) for b in c["batches"] for d in b["truth"]["defects"]} for c in alone
    ] == [
        {("currency", "wrong_currency")},
        {("amount", "invalid_value")},
        {("amount", "invalid_value")},
    ]


def test_train_split_shape_and_balance() -> None:
    cases = split("train")
    assert len(cases) == 320
    assert [c["case_id"] for c in cases] == [f"train-{f}-{k}" for f in FAMILIES for k in range(40)]
    for family in FAMILIES:
        counts = [0] * variants(family)
        for case in cases:
            if case["family"] == family:
                counts[case["variant"]] += 1
        assert max(counts) - min(counts) <= 1, family
    for case in cases:
        assert_well_formed(case)
        assert_truth_matches_audit(case)
    assert {c["seed"] for c in cases}.isdisjoint(c["seed"] for c in split("eval"))


@pytest.mark.parametrize("name", ["eval", "train", "holdout"])
def test_every_contract_rule_is_planted(name: str) -> None:
    covered = {
        (b["table"], d["column"], d["type"])
        for c in split(name)
        for b in c["batches"]
        for d in b["truth"]["defects"]
    }
    assert covered == RULES


def needed_customers(case: dict, orders: dict) -> set[str]:
    """Customers an orders batch refers to that only a customers batch of the case brings."""
    known = {r["customer_id"] for r in case["warehouse"]["customers"]}
    return {r["customer_id"] for r in orders["rows"]} - known


def orders_before_their_customers(case: dict) -> bool:
    batches = case["batches"]
    for i, orders in enumerate(batches):
        if orders["table"] != "orders" or orders["truth"]["defective"]:
            continue
        later = {r["customer_id"] for b in batches[i + 1 :] if b["table"] == "customers" for r in b["rows"]}
        if needed_customers(case, orders) & later:
            return True
    return False


def test_eval_load_order_cases() -> None:
    cases = split("eval")
    assert [c["case_id"] for c in cases if orders_before_their_customers(c)] == [
        "eval-clean-control-3",
        "eval-legit-edge-2",
    ]
    with_new = [
        c["case_id"]
        for c in cases
        if c["family"] == "clean-control"
        and any(needed_customers(c, b) for b in c["batches"] if b["table"] == "orders")
    ]
    assert with_new == ["eval-clean-control-1", "eval-clean-control-3"]


def test_blank_amount_accepts_both_readings() -> None:
    for case in split("eval") + split("train"):
        for batch in case["batches"]:
            if ("amount", "missing_value") in pairs(batch):
                accepted = {(d["column"], d["type"]) for d in batch["truth"]["accepted"]}
                assert {("amount", "missing_value"), ("amount", "out_of_range")} <= accepted
            elif "accepted" in batch["truth"]:
                assert batch["truth"]["accepted"] != batch["truth"]["defects"]


# --- families keep their promises ----------------------------------------------------


def clean_amounts(cases: tuple[dict, ...]) -> list[float]:
    return [
        float(r["amount"])
        for c in cases
        for b in c["batches"]
        if b["table"] == "orders" and not b["truth"]["defective"]
        for r in b["rows"]
        if r["status"] != "refunded" and float(r["amount"]) < MAX_AMOUNT
    ]


def test_cents_as_dollars_is_a_hundred_times_a_plausible_amount() -> None:
    cases = split("train")
    lowest, highest = min(clean_amounts(cases)), max(clean_amounts(cases))
    seen = 0
    for case in cases:
        for batch in case["batches"]:
            for row in (
                batch["rows"] if case["family"] == "amount-bounds" and batch["table"] == "orders" else []
            ):
                amount = abs(float(row["amount"]))
                if amount > MAX_AMOUNT:
                    seen += 1
                    assert lowest <= amount / 100 <= highest
                    assert row["amount"].endswith(".00")
    assert seen >= 16


def edge_signature(case: dict) -> tuple:
    """What sets the legit-edge scenarios apart, read off the rows."""
    orders = [r for b in case["batches"] if b["table"] == "orders" for r in b["rows"]]
    customers = [r for b in case["batches"] if b["table"] == "customers" for r in b["rows"]]
    amounts = {r["amount"] for r in orders}
    refunds = sum(r["status"] == "refunded" for r in orders)
    tables = [b["table"] for b in case["batches"]]
    return (
        "50000.00" in amounts,
        "0.01" in amounts,
        "-50000.00" in amounts,
        refunds >= 2,
        tuple(tables) if customers else None,
        any(r["signup_date"] == WINDOW_END for r in customers),
        any(r["order_date"] == WINDOW_END for r in orders),
        any(r["order_date"] == WINDOW_START for r in orders),
    )


def test_legit_edge_variants_are_distinct_and_clean() -> None:
    for seed in range(20):
        signatures = [edge_signature(build_case(seed, family="legit-edge", variant=v)) for v in range(5)]
        assert signatures[0][3] and signatures[1][0] and signatures[1][1] and signatures[4][2]
        assert signatures[2][4] == ("orders", "customers") and signatures[3][4] == ("customers", "orders")
        assert signatures[3][5] and signatures[3][6] and signatures[4][7]
        assert len({s[:5] for s in signatures}) == 5


def test_dimension_fanout_sits_beside_orders_for_the_resent_customer() -> None:
    for seed in range(60):
        case = build_case(seed, family="dimension-fanout", variant=seed % 2 * 2)
        known = {r["customer_id"] for r in case["warehouse"]["customers"]}
        (bad,) = [b for b in case["batches"] if b["truth"]["defective"]]
        (good,) = [b for b in case["batches"] if not b["truth"]["defective"]]
        resent = {r["customer_id"] for r in bad["rows"]} & known
        assert bad["table"] == "customers" and good["table"] == "orders" and resent
        assert resent & {r["customer_id"] for r in good["rows"]}


# --- scale knobs ---------------------------------------------------------------------


def test_many_batches_mix_families_several_defective_never_all() -> None:
    defective_counts = []
    for seed in range(60):
        case = build_case(seed, batches=12)
        assert case["family"] == "mixed" and len(case["batches"]) == 12
        assert_truth_matches_audit(case)
        defective_counts.append(sum(b["truth"]["defective"] for b in case["batches"]))
    assert min(defective_counts) >= 2 and max(defective_counts) <= 11
    single = build_case(5, family="orphan-customer", batches=6)
    assert single["family"] == "orphan-customer"
    assert {pairs(b)[0] for b in single["batches"] if b["truth"]["defective"]} == {
        ("customer_id", "orphan_reference")
    }


def test_defects_per_batch_plants_that_many_distinct_defects() -> None:
    for seed in range(80):
        case = build_case(seed, batches=4, defects_per_batch=3)
        for batch in case["batches"]:
            if batch["truth"]["defective"]:
                assert len(pairs(batch)) >= 3
        full = build_case(seed, batches=3, defects_per_batch=9)  # the most a batch can carry
        for batch in full["batches"]:
            if batch["truth"]["defective"]:
                assert len(pairs(batch)) == (9 if batch["table"] == "orders" else 5)
        assert_truth_matches_audit(case)
        assert_truth_matches_audit(full)


def test_fixed_row_count_holds_for_every_batch() -> None:
    for seed in range(100):
        case = build_case(seed, rows_per_batch=(9, 9))
        assert [len(b["rows"]) for b in case["batches"]] == [9, 9]


def test_hundred_thousand_rows_per_batch() -> None:
    case = build_case(11, family="resent-rows", rows_per_batch=(100_000, 100_000))
    ids = [r[TABLE_COLUMNS[b["table"]][0]] for b in case["batches"] for r in b["rows"]]
    assert len(ids) == 200_000 and len(set(ids)) >= 200_000 - 3  # only the planted duplicates repeat
    for prefix in {i[0] for i in ids}:  # one wider range, shared by every id of its kind
        assert len({len(i) for i in ids if i[0] == prefix}) == 1
    assert_truth_matches_audit(case)
    customers = build_case(12, family="dimension-fanout", rows_per_batch=(100_000, 100_000))
    assert_truth_matches_audit(customers)


def one_at_a_time(rng: random.Random, used: set[int], low: int, span: int, count: int) -> list[int]:
    """Ids drawn one by one, each repeat drawn again: what ``IdPool.take`` must give."""
    fresh: list[int] = []
    while len(fresh) < count:
        number = low + int(rng.random() * span)
        if number not in used:
            used.add(number)
            fresh.append(number)
    return fresh


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), digits=st.integers(1, 3), counts=st.lists(st.integers(0, 6), max_size=5))
def test_id_pool_draws_as_if_one_at_a_time(seed: int, digits: int, counts: list[int]) -> None:
    """Draws made at once give the ids, and leave the stream, as draws one by one do,
    also when a range as small as 1..9 makes repeats common."""
    pool, reference = IdPool(random.Random(seed), "C", digits), random.Random(seed)
    used: set[int] = set()
    low = 10 ** (digits - 1)
    for count in counts:
        count = min(count, 9 * low - len(used))
        expected = one_at_a_time(reference, used, low, 9 * low, count)
        assert pool.take(count) == [f"C{number}" for number in expected]
    assert pool._rng.random() == reference.random()


# --- audit rules on hand-made rows ---------------------------------------------------


def tiny_case(orders: list[dict], customers: list[dict] | None = None) -> dict:
    warehouse_customer = {
        "customer_id": "C100",
        "email": "c100@example.com",
        "country": "US",
        "signup_date": "2026-01-01",
    }
    warehouse_order = {
        "order_id": "O10000",
        "customer_id": "C100",
        "amount": "10.00",
        "currency": "USD",
        "status": "placed",
        "order_date": "2026-09-02",
    }
    batches = [{"table": "orders", "rows": orders}]
    if customers is not None:
        batches.insert(0, {"table": "customers", "rows": customers})
    return {"warehouse": {"customers": [warehouse_customer], "orders": [warehouse_order]}, "batches": batches}


def order(**changes: str) -> dict:
    row = {
        "order_id": "O20000",
        "customer_id": "C100",
        "amount": "10.00",
        "currency": "USD",
        "status": "placed",
        "order_date": "2026-09-15",
    }
    return {**row, **changes}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, []),
        ({"amount": "50000.00"}, []),
        ({"amount": "50000.01"}, [("amount", "out_of_range")]),
        ({"amount": "0.00"}, [("amount", "out_of_range")]),
        ({"amount": "-5.00"}, [("amount", "out_of_range")]),
        ({"amount": "-50000.00", "status": "refunded"}, []),
        ({"amount": "-50000.01", "status": "refunded"}, [("amount", "out_of_range")]),
        ({"amount": "5.00", "status": "refunded"}, [("amount", "out_of_range")]),
        ({"amount": " "}, [("amount", "missing_value")]),
        ({"amount": "5,00"}, [("amount", "invalid_value")]),
        ({"currency": "usd"}, [("currency", "wrong_currency")]),
        ({"status": "shipped "}, [("status", "invalid_value")]),
        ({"status": "Delivered"}, [("status", "invalid_value")]),
        ({"order_date": WINDOW_END}, []),
        ({"order_date": "2026-10-01"}, [("order_date", "out_of_window")]),
        ({"order_date": "2026-08-31"}, [("order_date", "out_of_window")]),
        ({"order_date": "2026-09-31"}, [("order_date", "invalid_value")]),
        ({"order_date": "20260915"}, [("order_date", "invalid_value")]),
        ({"order_date": "2026-09-15T10:00:00"}, [("order_date", "invalid_value")]),
        ({"order_id": "O10000"}, [("order_id", "duplicate_key")]),
        ({"customer_id": "C999"}, [("customer_id", "orphan_reference")]),
    ],
)
def test_audit_orders_rules(changes: dict, expected: list) -> None:
    assert audit_case(tiny_case([order(**changes)])) == [expected]


def test_audit_orders_repeat_and_arriving_customers() -> None:
    assert audit_case(tiny_case([order(), order()])) == [[("order_id", "duplicate_key")]]
    new = {"customer_id": "C555", "email": "c555@example.com", "country": "KR", "signup_date": WINDOW_END}
    assert audit_case(tiny_case([order(customer_id="C555")], [new])) == [[], []]
    broken = {**new, "country": "UK", "signup_date": "2026-10-01", "email": " "}
    assert audit_case(tiny_case([order(customer_id="C555")], [broken])) == [
        [("country", "invalid_value"), ("email", "missing_value"), ("signup_date", "out_of_window")],
        [("customer_id", "orphan_reference")],
    ]
    resent = {"customer_id": "C100", "email": "c100@example.com", "country": "US", "signup_date": "2026-9-1"}
    assert audit_case(tiny_case([order()], [resent]))[0] == [
        ("customer_id", "duplicate_key"),
        ("signup_date", "invalid_value"),
    ]


# --- core purity ---------------------------------------------------------------------


def _top_level_imports(path: pathlib.Path) -> list[tuple[int, str]]:
    """(level, module) of every import in ``path``; level 0 for absolute imports."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(0, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or ""))
    return found


def test_generator_imports_only_the_standard_library_the_contract_and_plain_values() -> None:
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    # The kernel modules it uses (plain values, case files) are themselves standard library only.
    kernel = ("batchgate_gym.kernel.plain", "batchgate_gym.kernel.case_files")
    for name in kernel:
        helper = ROOT / (name.replace(".", "/") + ".py")
        assert all(module.split(".")[0] in stdlib for _, module in _top_level_imports(helper))
    for path in (ROOT / "batchgate_gym" / "desks" / "gate" / "generator").glob("*.py"):
        for level, module in _top_level_imports(path):
            if level == 0:
                assert module.split(".")[0] in stdlib or module in kernel, (path, module)
            elif level == 2:
                assert module == "contract", (path, module)


def test_importing_the_generator_loads_no_environment() -> None:
    code = (
        "import sys, batchgate_gym.desks.gate.generator\n"
        # Gymnasium itself may load (``import batchgate_gym`` registers the ids), no env code.
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pettingzoo', 'torch', 'ray')"
        " or m.startswith(('batchgate_gym.envs', 'batchgate_gym.policies'))))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


def test_the_split_names_are_defined_once_and_each_has_its_file() -> None:
    from batchgate_gym.desks.gate import sources
    from batchgate_gym.desks.gate.generator import splits

    assert splits.SPLITS is sources.SPLITS
    assert all(splits.split_path(name).is_file() for name in sources.SPLITS)
    with pytest.raises(ValueError, match="unknown split 'nope'"):
        splits.split_path("nope")
