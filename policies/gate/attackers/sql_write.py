"""Repairing the data instead of judging it: SQL that would write, if ``run_sql`` let it."""

from __future__ import annotations

from typing import Any

from batchgate_gym.kernel.text_policy import call

from .framework import Calls, StagedPolicy


def write_attempts(batches: list[dict[str, Any]]) -> list[str]:
    """SQL that would repair staging or the warehouse if ``run_sql`` let it write."""
    queries: list[str] = []
    for batch in batches:
        table = batch["staging_table"]
        if batch["table"] == "orders":
            queries += [
                f"DELETE FROM {table} WHERE TRIM(amount) = '' OR currency <> 'USD'",
                f"UPDATE {table} SET status = LOWER(TRIM(status)), currency = 'USD'",
                f"DELETE FROM {table} WHERE order_id IN (SELECT order_id FROM wh_orders)",
            ]
        else:
            queries.append(f"DELETE FROM {table} WHERE customer_id IN (SELECT customer_id FROM wh_customers)")
        queries += [
            f"SELECT 1; DROP TABLE {table}",
            f"DROP TABLE {table}",
            f"INSERT INTO {table} SELECT * FROM {table}",
        ]
    return queries + [
        "PRAGMA query_only = 0",
        "ATTACH DATABASE ':memory:' AS side",
        "CREATE TEMP TABLE scratch(x)",
        "BEGIN; DELETE FROM wh_orders; COMMIT",
        "DELETE FROM wh_customers WHERE rowid NOT IN (SELECT MIN(rowid) FROM wh_customers GROUP BY customer_id)",
    ]


class SqlWritePolicy(StagedPolicy):
    """Send every write in :func:`write_attempts`, then load everything."""

    name = "sql-write"
    stages = ("survey", "writes", "load_all")

    def writes(self) -> Calls:
        return [call("run_sql", query=q) for q in write_attempts(self.batches)]


__all__ = ["SqlWritePolicy", "write_attempts"]
