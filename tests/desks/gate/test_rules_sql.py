"""Two independent readings of the contract must agree: the SQL rules careful runs
(``batchgate_gym.desks.gate.rules_sql``) and the Python audit the generator labels cases with
(``batchgate_gym.desks.gate.generator.audit``), on values chosen to sit on every rule's edge."""

from __future__ import annotations

import itertools

import pytest
from worldcase import customer, order, small_case_dict

from batchgate_gym.desks.gate.cases import load_cases
from batchgate_gym.desks.gate.contract import contract
from batchgate_gym.desks.gate.generator.audit import audit_customers, audit_orders
from batchgate_gym.desks.gate.rules_sql import check_query
from batchgate_gym.desks.gate.world import GateWorld

AMOUNTS = [
    "12.50",
    "-3",
    "--5",
    "+5",
    "1e3",
    ".5",
    "5.",
    "1.2.3",
    "1,234.56",
    "",
    "  ",
    " 12 ",
    "abc",
    "-",
    ".",
    "0",
    "-0",
    "50000",
    "50000.00",
    "50000.01",
    "-50000",
    "-50000.01",
    "0x10",
    "12 34",
    "- 5",
]
STATUSES = ["placed", "refunded", "Refunded"]
DATES = [
    "2026-09-15",
    "2026-09-01",
    "2026-09-30",
    "2024-13-01",
    "2026-02-30",
    "2026-09-31",
    "2026-9-5",
    "2026-09-15T08:30:00",
    "2026-10-01",
    "2026-08-31",
    "",
    "abc",
    " 2026-09-15",
    "2026-09-15 ",
]


def sql_findings(table: str, rows: list[dict[str, str]]) -> list[tuple[str, str]]:
    data = small_case_dict()
    data["batches"] = [
        {
            "batch_id": "B-X",
            "table": table,
            "source": "",
            "rows": rows,
            "truth": {"defective": False, "defects": []},
        }
    ]
    case = load_cases([data])[0]
    world = GateWorld()
    world.reset(case)
    batch = {"staging_table": case.batches[0].staging_table, "table": table}
    result = world.run_sql(check_query(batch, contract()))
    counts = dict(zip(result["columns"], result["rows"][0], strict=True))
    return sorted(tuple(name.split("__", 1)) for name, count in counts.items() if count)


@pytest.mark.parametrize(("amount", "status"), list(itertools.product(AMOUNTS, STATUSES)))
def test_amount_and_status_rules_agree(amount, status):
    rows = [order("O10", "C1", amount, status=status)]
    assert sql_findings("orders", rows) == audit_orders(rows, {"O1"}, {"C1", "C2"})


@pytest.mark.parametrize("day", DATES)
def test_order_date_rules_agree(day):
    rows = [order("O10", "C1", "10.00", order_date=day)]
    assert sql_findings("orders", rows) == audit_orders(rows, {"O1"}, {"C1", "C2"})


@pytest.mark.parametrize("day", DATES)
def test_signup_date_rules_agree(day):
    rows = [customer("C9") | {"signup_date": day}]
    assert sql_findings("customers", rows) == audit_customers(rows, {"C1", "C2"})


def test_key_rules_agree():
    rows = [
        order("O1", "C1", "1.00"),
        order("O10", "C7", "1.00"),
        order("O11", "C2", "1.00"),
        order("O11", "C2", "2.00"),
    ]
    assert sql_findings("orders", rows) == audit_orders(rows, {"O1"}, {"C1", "C2"})
    people = [customer("C1"), customer("C8", "UK") | {"email": " "}, customer("C9"), customer("C9")]
    assert sql_findings("customers", people) == audit_customers(people, {"C1", "C2"})
