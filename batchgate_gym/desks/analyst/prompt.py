"""The text an agent starts from: the job, the stores, the tools, the answer's shape, the question."""

from __future__ import annotations

from batchgate_gym.kernel.codec import escape, how_to_act, tool_lines

from .cases import AnalystCase
from .tools import ANALYST_TOOLS

_BRIEF = """\
You are the shop's data analyst. Answer the question below from the data, with
read-only SQL queries on the stores listed. Hand in your answer with
submit_answer(answer, evidence): the evidence is the list of queries that support
it; each is run again on the same data, its results must show the values of your
answer (a report's value under its metric id, as a column name or a label beside
it), and together they must read the tables the answer depends on. If the data
cannot answer the question (it needs costs, causes or facts from outside the
data), do not guess: decline(reason). Either call ends the episode."""

_SHAPES = {
    "number": "a number, e.g. 12.5",
    "ranking": 'a list, in the order asked, e.g. ["A", "B", "C"]',
    "list": 'a list, in the order asked, e.g. ["A", "B"]',
    "table": 'rows, each a list, e.g. [["x", 3], ["y", 2]]',
    "report": 'an object of metric ids, e.g. {"metric_a": 1, "metric_b": 2.5}',
    "decline": "a number, e.g. 12.5",  # the same words as a number: the shape says nothing of answerability
}

_DIALECTS = {
    "sqlite": "SQLite (dates are 'YYYY-MM-DD' text)",
    "duckdb": "DuckDB (a database)",
    "lake": "DuckDB over Parquet files",
    "files": "DuckDB over raw CSV and JSON files",
    "chdb": "ClickHouse (chDB, in process; read-only)",
    "postgres": "PostgreSQL (a server; a read-only role)",
    "iceberg": "DuckDB over Apache Iceberg tables (read-only)",
}


def task_text(case: AnalystCase, max_turns: int) -> str:
    stores = "\n".join(f"  {name}: {_DIALECTS[name]}" for name in case.stores)
    parts = [
        _BRIEF,
        f"Stores:\n{stores}",
        f"Tools:\n{tool_lines(ANALYST_TOOLS)}",
        how_to_act(ANALYST_TOOLS),
        f"Answer shape: {_SHAPES[case.answer_type]}.",
        f"You have {max_turns} turns.",
        f"Question: {case.question}",
    ]
    return escape("\n\n".join(parts))


__all__ = ["task_text"]
