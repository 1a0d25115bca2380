"""The analyst desk's tools: names, parameters and help text, and how an episode ends.

Everything an agent is told about a tool comes from here (task text, error help,
OpenAI-style schemas). ``submit_answer`` and ``decline`` end the episode. The
codec's parameters are strings, numbers, booleans and lists, so an answer (a
number, a list, rows or a report object) and its evidence (a list of
``{"store", "query"}`` objects) are each passed as one JSON text.
"""

from __future__ import annotations

from typing import Any

from batchgate_gym.kernel.codec import Param, ToolSpec
from batchgate_gym.kernel.episode import EndingText

_STORE = Param("store", str, "the store to use, as the task names it")

ANALYST_TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec("list_tables", "The tables of a store.", (_STORE,)),
        ToolSpec(
            "describe_table",
            "A table's columns with their types, and its row count.",
            (_STORE, Param("table", str, "a table of that store")),
        ),
        ToolSpec(
            "run_sql",
            "Run one read-only SELECT on a store: at most 50 rows come back; time and memory are bounded.",
            (_STORE, Param("query", str, "one SELECT statement in the store's SQL dialect")),
        ),
        ToolSpec(
            "submit_answer",
            "Hand in the answer with the queries that support it. Ends the episode.",
            (
                Param(
                    "answer",
                    str,
                    "the answer as JSON text: a number, a list, rows (a list of lists) or an object",
                ),
                Param(
                    "evidence",
                    str,
                    'the supporting queries as JSON text: [{"store": ..., "query": ...}, ...]',
                ),
            ),
        ),
        ToolSpec(
            "decline",
            "Decline a question the data cannot answer, with the reason. Ends the episode.",
            (Param("reason", str, "why the data cannot answer it"),),
        ),
    )
}

FINISHING = ("submit_answer", "decline")
MAX_EVIDENCE = 10

ANALYST_ENDING = EndingText(
    finished="answer handed in",
    out_of_turns="Turn limit reached before an answer or a decline: the episode is over.",
    after_end="not run: the episode already ended",
)


def tool_schemas() -> list[dict[str, Any]]:
    """Every tool in OpenAI function-calling format."""
    return [spec.json_schema() for spec in ANALYST_TOOLS.values()]


__all__ = ["ANALYST_ENDING", "ANALYST_TOOLS", "FINISHING", "MAX_EVIDENCE", "tool_schemas"]
