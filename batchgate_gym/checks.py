"""The contract's rules as SQL conditions over a staging table.

One table serves every agent that checks batches with SQL: the careful reference
policy asks about all rules of a batch in one query, the macro-action interface
asks about one rule at a time. Each rule is a column, the defect type that names
its breach, and a WHERE condition selecting the rows that break it. Conditions are
built from the contract an agent read (``read_contract``), never from the case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Rule:
    """One contract rule of one table; ``{t}`` in ``condition`` is the quoted staging table."""

    table: str
    column: str
    defect_type: str
    condition: str

    @property
    def name(self) -> str:
        return f"{self.column}__{self.defect_type}"


def contract_rules(table: str, contract: dict[str, Any]) -> tuple[Rule, ...]:
    """The rules of ``table`` ("orders" or "customers"), in the order careful cites them."""
    window, limits = contract["reporting_window"], contract["limits"]
    pairs = _order_rules(window, limits) if table == "orders" else _customer_rules(window, limits)
    return tuple(Rule(table, *name.split("__", 1), condition) for name, condition in pairs)


def quoted_table(batch: dict[str, Any]) -> str:
    return '"' + batch["staging_table"].replace('"', '""') + '"'


def check_query(batch: dict[str, Any], contract: dict[str, Any]) -> str:
    """One SELECT counting, per contract rule, the rows of a batch that break it."""
    table = quoted_table(batch)
    rules = contract_rules(batch["table"], contract)
    parts = [f"(SELECT COUNT(*) FROM {table} WHERE {rule.condition}) AS {rule.name}" for rule in rules]
    return "SELECT " + ",\n  ".join(parts).replace("{t}", table)


def rule_query(batch: dict[str, Any], rule: Rule) -> str:
    """One SELECT counting the rows of a batch that break one rule (column named after the rule)."""
    table = quoted_table(batch)
    return f"SELECT COUNT(*) AS {rule.name} FROM {table} WHERE {rule.condition}".replace("{t}", table)


def _literal(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _in_list(values: list[str]) -> str:
    return "(" + ", ".join(_literal(v) for v in values) + ")"


_IS_DATE = "({c} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' AND date({c}) = {c})"
_NUMBER = "TRIM(amount) <> '' AND LTRIM(TRIM(amount), '-') NOT GLOB '*[^0-9.]*' AND LTRIM(TRIM(amount), '-') GLOB '*[0-9]*' AND LENGTH(TRIM(amount)) - LENGTH(REPLACE(TRIM(amount), '.', '')) <= 1 AND INSTR(LTRIM(TRIM(amount), '-'), '-') = 0"


def _order_rules(window: dict[str, str], limits: dict[str, Any]) -> list[tuple[str, str]]:
    cap = float(limits["max_amount"])
    start, end = _literal(window["start"]), _literal(window["end"])
    in_range = (
        f"CASE WHEN status = 'refunded' THEN CAST(amount AS REAL) >= {-cap} AND CAST(amount AS REAL) < 0"
        f" ELSE CAST(amount AS REAL) > 0 AND CAST(amount AS REAL) <= {cap} END"
    )
    return [
        (
            "order_id__duplicate_key",
            "order_id IN (SELECT order_id FROM wh_orders)"
            " OR order_id IN (SELECT order_id FROM {t} GROUP BY order_id HAVING COUNT(*) > 1)",
        ),
        ("customer_id__orphan_reference", "customer_id NOT IN (SELECT customer_id FROM wh_customers)"),
        ("currency__wrong_currency", f"currency <> {_literal(limits['currency'])}"),
        ("status__invalid_value", f"status NOT IN {_in_list(limits['allowed_status'])}"),
        ("order_date__invalid_value", "NOT " + _IS_DATE.format(c="order_date")),
        (
            "order_date__out_of_window",
            # Cheap tests first in both rules below: SQLite stops at the first false term,
            # so clean rows skip the costly date and number parsing (same rows either way).
            f"(order_date < {start} OR order_date > {end}) AND " + _IS_DATE.format(c="order_date"),
        ),
        ("amount__missing_value", "TRIM(amount) = ''"),
        ("amount__invalid_value", f"TRIM(amount) <> '' AND NOT ({_NUMBER})"),
        ("amount__out_of_range", f"NOT ({in_range}) AND ({_NUMBER})"),
    ]


def _customer_rules(window: dict[str, str], limits: dict[str, Any]) -> list[tuple[str, str]]:
    end = _literal(window["end"])
    return [
        (
            "customer_id__duplicate_key",
            "customer_id IN (SELECT customer_id FROM wh_customers)"
            " OR customer_id IN (SELECT customer_id FROM {t} GROUP BY customer_id HAVING COUNT(*) > 1)",
        ),
        ("email__missing_value", "TRIM(email) = ''"),
        ("country__invalid_value", f"country NOT IN {_in_list(limits['allowed_countries'])}"),
        ("signup_date__invalid_value", "NOT " + _IS_DATE.format(c="signup_date")),
        ("signup_date__out_of_window", _IS_DATE.format(c="signup_date") + f" AND signup_date > {end}"),
    ]
