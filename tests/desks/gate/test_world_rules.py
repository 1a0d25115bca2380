"""Each rule of the spec's world and tools, one test at a time, on a hand-made case."""

from __future__ import annotations

import pytest
from worldcase import small_case

from batchgate_gym.desks.gate.cases import staging_table_name
from batchgate_gym.desks.gate.world import GateWorld


@pytest.fixture
def world():
    w = GateWorld()
    w.reset(small_case())
    return w


def log(world):
    """The calls logged after the begin entry (which binds the log to its case)."""
    first, *calls = world.ledger.entries
    assert first.action == "begin" and first.args["case_digest"] == world.case.digest
    return [(e.action, e.args, e.executed) for e in calls]


def test_staging_table_names_follow_the_rule():
    assert staging_table_name("B-0930-60-1") == "stg_b_0930_60_1"
    assert staging_table_name("Ab.c d/É") == "stg_ab_c_d__"


def test_read_contract_and_list_batches(world):
    assert world.read_contract()["limits"]["max_amount"] == 50000
    listed = world.list_batches()["batches"]
    assert [b["batch_id"] for b in listed] == ["B-1", "B-2", "B-3", "B-4"]
    assert listed[2] == {
        "batch_id": "B-3",
        "table": "customers",
        "rows": 1,
        "staging_table": "stg_b_3",
        "source": "crm",
    }
    assert log(world) == [("read_contract", {}, True), ("list_batches", {}, True)]


def test_profile_batch_statistics(world):
    profile = world.profile_batch("B-2")
    amount = profile["columns"]["amount"]
    assert (profile["table"], profile["rows"]) == ("orders", 2)
    assert amount["n_blank"] == 1 and amount["n_null"] == 0 and amount["n_distinct"] == 2
    assert (amount["min"], amount["max"]) == (" ", "5.00")  # compared as strings
    assert (amount["numeric_min"], amount["numeric_max"]) == (5.0, 5.0)
    assert profile["columns"]["currency"]["top_values"] == (("USD", 2),)  # read-only: shared by worlds
    assert world.profile_batch("B-9") == {"error": "unknown batch 'B-9'; list_batches gives the ids"}
    assert log(world)[-1] == ("profile_batch", {"batch_id": "B-9"}, False)


def test_top_values_sort_by_count_then_value():
    from batchgate_gym.desks.gate.profile import profile_column

    top = profile_column(["b", "a", "c", "a", "b", "d"] + [str(i) for i in range(10)])["top_values"]
    assert top[:2] == [["a", 2], ["b", 2]] and len(top) == 8 and top[2] == ["0", 1]


def test_run_sql_returns_rows_and_logs_tables_read(world):
    result = world.run_sql("SELECT order_id FROM stg_b_1 ORDER BY order_id;  ")
    assert result == {"columns": ["order_id"], "rows": [["O10"], ["O11"]], "truncated": False}
    assert log(world)[-1] == (
        "run_sql",
        {"query": "SELECT order_id FROM stg_b_1 ORDER BY order_id;  ", "tables_read": ["stg_b_1"]},
        True,
    )


def test_run_sql_caps_rows_and_formats_cells(world):
    many = world.run_sql(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60) SELECT i FROM n"
    )
    assert len(many["rows"]) == 50 and many["truncated"] is True
    cells = world.run_sql("SELECT x'00ff', 1e999, -1e999, printf('%.300c', 'a')")["rows"][0]
    assert cells[:3] == ["0x00ff", "inf", "-inf"]
    assert cells[3].startswith("a" * 200) and cells[3].endswith("...[truncated]") and len(cells[3]) < 230


def test_run_sql_errors_are_results_and_logged_as_not_executed(world):
    result = world.run_sql("SELECT nope FROM stg_b_1")
    assert "no such column" in result["error"]
    assert log(world)[-1] == ("run_sql", {"query": "SELECT nope FROM stg_b_1"}, False)


def test_load_inserts_every_row_and_blank_amount_becomes_zero(world):
    assert world.load_batch("B-2") == {"status": "loaded", "rows_loaded": 2, "errors": 0}
    rows = world.conn.execute(
        "SELECT order_id, amount FROM wh_orders WHERE order_id IN ('O12', 'O13') ORDER BY 1"
    ).fetchall()
    assert rows == [("O12", 0.0), ("O13", 5.0)]
    assert log(world)[-1] == ("load_batch", {"batch_id": "B-2", "rows": 2, "orphan_rows": 0}, True)


def test_load_may_repeat_and_customers_duplicate(world):
    world.load_batch("B-3")
    world.load_batch("B-3")
    assert world.conn.execute("SELECT COUNT(*) FROM wh_customers WHERE customer_id = 'C3'").fetchone()[0] == 2
    world.load_batch("B-4")
    assert world.mart_usd() == 160.0  # C3 counted twice: its 30.00 order doubles


def test_orphans_are_counted_at_load_time(world):
    world.load_batch("B-4")  # C3 is not in the warehouse yet
    assert log(world)[-1][1]["orphan_rows"] == 1
    assert world.mart_usd() == 100.0  # the orphan order drops out of the join


def test_load_refusals(world):
    assert "unknown batch" in world.load_batch("b-1")["error"]  # ids are case-sensitive
    world.quarantine_batch("B-2", "amount", "missing_value")
    assert "quarantined" in world.load_batch("B-2")["error"]
    assert [e[2] for e in log(world)] == [False, True, False]


def test_quarantine_checks_in_order(world):
    assert "unknown batch" in world.quarantine_batch("B-9", "nope", "nope")["error"]
    assert "not a defect type" in world.quarantine_batch("B-1", "nope", "nope")["error"]
    assert "not a column of orders" in world.quarantine_batch("B-1", "email", "missing_value")["error"]
    assert world.quarantine_batch("B-1", "amount", "out_of_range") == {
        "status": "quarantined",
        "batch_id": "B-1",
    }
    assert "first citation stands" in world.quarantine_batch("B-1", "order_id", "duplicate_key")["error"]
    assert world.quarantined == {"B-1": ("amount", "out_of_range")}
    assert [e[2] for e in log(world)] == [False, False, False, True, False]


def test_quarantine_after_load_warns_and_rows_stay(world):
    world.load_batch("B-1")
    result = world.quarantine_batch("B-1", "amount", "out_of_range")
    assert result["status"] == "quarantined" and "already loaded" in result["warning"]
    assert world.mart_usd() == 130.0


def test_report_is_stored_sorted_and_only_once(world):
    assert world.submit_report(["B-3", "B-1"], ["B-2"]) == {"status": "received"}
    assert world.report == (["B-1", "B-3"], ["B-2"])
    assert "already submitted" in world.submit_report([], [])["error"]
    assert log(world)[-2:] == [
        ("submit_report", {"loaded": ["B-1", "B-3"], "quarantined": ["B-2"]}, True),
        ("submit_report", {"loaded": [], "quarantined": []}, False),
    ]


def test_reset_restores_a_clean_warehouse(world):
    world.load_batch("B-1")
    world.reset(small_case())
    assert world.mart_usd() == 100.0 and log(world) == [] and world.report is None


def test_a_budget_too_narrow_for_the_schema_is_refused_up_front():
    from batchgate_gym.kernel.sqlguard import SqlBudget

    with pytest.raises(ValueError, match="max_columns must be at least 6"):
        GateWorld(SqlBudget(max_columns=5))
    narrowest = GateWorld(SqlBudget(max_columns=6))
    narrowest.reset(small_case())
    assert narrowest.run_sql("SELECT * FROM wh_orders")["columns"][-1] == "order_date"
