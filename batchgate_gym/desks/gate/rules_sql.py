"""The contract's rules as SQL conditions over a staging table.

One table serves every agent that checks batches with SQL: the careful reference
policy asks about all rules of a batch in one query, the macro-action interface
asks about one rule at a time. Each rule is a column, the defect type that names
its breach, and a row condition selecting the rows that break it. Conditions are
built from the contract an agent read (``read_contract``), never from the case.

The all-rules query scans the batch once, summing every condition over the same
pass (``SUM`` over no rows is NULL, read as no breach); a subquery per rule would
scan it once per rule. Only the duplicate-key rule is tallied differently there:
rows already in the warehouse plus surplus copies within the batch, which is
non-zero exactly when the one-rule count is.
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
    tally: str = ""  # aggregate counting breaches in one scan; empty: SUM(condition)

    @property
    def name(self) -> str:
        return f"{self.column}__{self.defect_type}"

    @property
    def aggregate(self) -> str:
        return self.tally or f"SUM({self.condition})"


def contract_rules(table: str, contract: dict[str, Any]) -> tuple[Rule, ...]:
    """The rules of ``table`` ("orders" or "customers"), in the order careful cites them.

    Built once per table and contract values (rules are immutable, so every agent
    reading the same contract shares them): the macro interface asks at every reset.
    """
    window, limits = contract["reporting_window"], contract["limits"]
    key = (table, repr(window), repr(limits))
    rules = _RULES.get(key)
    if rules is None:
        pairs = _order_rules(window, limits) if table == "orders" else _customer_rules(window, limits)
        rules = tuple(Rule(table, *name.split("__", 1), *condition) for name, *condition in pairs)
        if len(_RULES) >= _MAX_TEMPLATES:
            _RULES.clear()
        _RULES[key] = rules
    return rules


def quoted_table(batch: dict[str, Any]) -> str:
    table: str = batch["staging_table"]
    return '"' + table.replace('"', '""') + '"'


def check_query(batch: dict[str, Any], contract: dict[str, Any]) -> str:
    """One SELECT counting, per contract rule, the rows of a batch that break it."""
    # Built once per table and contract: an agent checks many batches under one contract.
    key = (batch["table"], repr(contract["reporting_window"]), repr(contract["limits"]))
    template = _CHECK_TEMPLATES.get(key)
    if template is None:
        if len(_CHECK_TEMPLATES) >= _MAX_TEMPLATES:
            _CHECK_TEMPLATES.clear()
        parts = [f"{rule.aggregate} AS {rule.name}" for rule in contract_rules(batch["table"], contract)]
        template = _CHECK_TEMPLATES[key] = "SELECT " + ",\n  ".join(parts) + "\nFROM {t}"
    return template.replace("{t}", quoted_table(batch))


def rules_query(batch: dict[str, Any], rules: list[Rule] | tuple[Rule, ...]) -> str:
    """One SELECT counting, per rule of ``rules`` (some of a table's), the rows of a batch that break it."""
    if not rules:
        return f"SELECT 0 AS nothing_checked FROM {quoted_table(batch)} LIMIT 1"
    columns = ", ".join(f"{rule.aggregate} AS {rule.name}" for rule in rules)
    return f"SELECT {columns} FROM {{t}}".replace("{t}", quoted_table(batch))


_CHECK_TEMPLATES: dict[tuple[str, str, str], str] = {}
_RULES: dict[tuple[str, str, str], tuple[Rule, ...]] = {}  # (table, window, limits) -> its rules
_MAX_TEMPLATES = 256


def rule_query(batch: dict[str, Any], rule: Rule) -> str:
    """One SELECT counting the rows of a batch that break one rule (column named after the rule)."""
    table = quoted_table(batch)
    return f"SELECT COUNT(*) AS {rule.name} FROM {table} WHERE {rule.condition}".replace("{t}", table)


def _literal(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _in_list(values: list[str]) -> str:
    return "(" + ", ".join(_literal(v) for v in values) + ")"


# A strict calendar date: the shape, and SQLite's date() giving the text back. The
# "+0 days" modifier makes date() normalise an overflowing day ("2026-09-31" becomes
# "2026-10-01"); IS, not =, makes a shaped non-date ("2026-13-01": NULL) a non-date.
_IS_DATE = "({c} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' AND date({c}, '+0 days') IS {c})"
# A plain decimal: at most one leading minus, then only digits and dots, at least
# one digit, at most one dot (spaces around it are TRIMmed; they hold neither).
_UNSIGNED = "SUBSTR(TRIM(amount), 1 + (TRIM(amount) GLOB '-*'))"
_PLAIN_DECIMAL = f"{_UNSIGNED} NOT GLOB '*[^0-9.]*' AND amount GLOB '*[0-9]*' AND amount NOT GLOB '*.*.*'"
# Most amounts are written the way SQLite itself prints a number ("1063.39"), which
# two casts confirm faster than the full test; SQLite prints only plain decimals
# unless it uses an exponent, hence the "e" test. Any other text takes the full test.
_NUMBER = (
    "CASE WHEN CAST(CAST(TRIM(amount) AS NUMERIC) AS TEXT) = TRIM(amount) AND INSTR(amount, 'e') = 0"
    f" THEN 1 ELSE ({_PLAIN_DECIMAL}) END"
)


def _unless_cheap_fails(name: str, cheap: str, costly: str) -> tuple[str, str, str]:
    """A rule ``cheap AND costly`` whose tally skips ``costly`` where ``cheap`` fails.

    In a WHERE clause SQLite stops at the first false term; in a computed value it
    evaluates both sides of AND, so the one-scan tally spells the order out with CASE.
    Both count the same rows: those where both terms are true.
    """
    return name, f"({cheap}) AND ({costly})", f"SUM(CASE WHEN {cheap} THEN {costly} END)"


def _order_rules(window: dict[str, str], limits: dict[str, Any]) -> list[tuple[str, ...]]:
    cap = float(limits["max_amount"])
    start, end = _literal(window["start"]), _literal(window["end"])
    in_range = (
        f"CASE WHEN status = 'refunded' THEN CAST(amount AS REAL) >= {-cap} AND CAST(amount AS REAL) < 0"
        f" ELSE CAST(amount AS REAL) > 0 AND CAST(amount AS REAL) <= {cap} END"
    )
    return [
        _duplicate_key("order_id", "wh_orders"),
        ("customer_id__orphan_reference", "customer_id NOT IN (SELECT customer_id FROM wh_customers)"),
        ("currency__wrong_currency", f"currency <> {_literal(limits['currency'])}"),
        ("status__invalid_value", f"status NOT IN {_in_list(limits['allowed_status'])}"),
        ("order_date__invalid_value", "NOT " + _IS_DATE.format(c="order_date")),
        # Cheap tests first: clean rows skip the costly date and number parsing.
        _unless_cheap_fails(
            "order_date__out_of_window",
            f"order_date < {start} OR order_date > {end}",
            _IS_DATE.format(c="order_date"),
        ),
        ("amount__missing_value", "TRIM(amount) = ''"),
        _unless_cheap_fails("amount__invalid_value", "TRIM(amount) <> ''", f"NOT ({_NUMBER})"),
        # The same number test without the shortcut: few rows get past the range test,
        # and the shortcut would only lengthen the query SQLite has to prepare.
        _unless_cheap_fails("amount__out_of_range", f"NOT ({in_range})", f"({_PLAIN_DECIMAL})"),
    ]


def _customer_rules(window: dict[str, str], limits: dict[str, Any]) -> list[tuple[str, ...]]:
    end = _literal(window["end"])
    return [
        _duplicate_key("customer_id", "wh_customers"),
        ("email__missing_value", "TRIM(email) = ''"),
        ("country__invalid_value", f"country NOT IN {_in_list(limits['allowed_countries'])}"),
        ("signup_date__invalid_value", "NOT " + _IS_DATE.format(c="signup_date")),
        _unless_cheap_fails(
            "signup_date__out_of_window", f"signup_date > {end}", _IS_DATE.format(c="signup_date")
        ),
    ]


def _duplicate_key(key: str, warehouse: str) -> tuple[str, str, str]:
    """Rows whose key is in the warehouse or repeated in the batch; tallied in one scan."""
    in_warehouse = f"{key} IN (SELECT {key} FROM {warehouse})"
    condition = f"{in_warehouse} OR {key} IN (SELECT {key} FROM {{t}} GROUP BY {key} HAVING COUNT(*) > 1)"
    tally = f"SUM({in_warehouse}) + COUNT({key}) - COUNT(DISTINCT {key})"
    return f"{key}__duplicate_key", condition, tally
