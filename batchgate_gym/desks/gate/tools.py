"""The seven tools of the batch gate: names, parameters and help text.

Everything an agent is told about a tool comes from here: the reset observation,
the error help and the exported OpenAI-style JSON schemas.
"""

from __future__ import annotations

from typing import Any

from batchgate_gym.kernel.codec import Param, ToolSpec
from batchgate_gym.kernel.episode import EndingText

_BATCH_ID = Param("batch_id", str, "a batch id exactly as list_batches gives it")

GATE_TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            "read_contract",
            "The data contract: the rules every loaded row must meet, the reporting window, machine-readable limits and the defect types a quarantine may cite.",
        ),
        ToolSpec(
            "list_batches",
            "The batches waiting in staging, in listed order: id, target table, row count, staging table name and source note.",
        ),
        ToolSpec(
            "profile_batch",
            "Per-column statistics of one staged batch: nulls, blanks, distinct count, min/max (as text), numeric min/max and the most common values.",
            (_BATCH_ID,),
        ),
        ToolSpec(
            "run_sql",
            "Run one read-only SQLite SELECT over wh_customers, wh_orders and the stg_* staging tables; at most 50 rows come back.",
            (Param("query", str, "a single SELECT statement"),),
        ),
        ToolSpec(
            "load_batch",
            "Insert every row of a batch into its warehouse table. Cannot be undone; the loader accepts anything.",
            (_BATCH_ID,),
        ),
        ToolSpec(
            "quarantine_batch",
            "Hold a batch back from the warehouse, citing one column and one defect type from the contract. The first citation for a batch is final.",
            (
                _BATCH_ID,
                Param("column", str, "the column that breaks the contract"),
                Param("defect_type", str, "one of the contract's defect_types"),
            ),
        ),
        ToolSpec(
            "submit_report",
            "Report which batches you loaded and which you quarantined. Allowed once; it ends the episode.",
            (
                Param("loaded", list, "ids of the batches you loaded", str),
                Param("quarantined", list, "ids of the batches you quarantined", str),
            ),
        ),
    )
}


# The report ends the episode: how the log's seal and the last observation say so.
GATE_ENDING = EndingText(
    finished="report submitted",
    out_of_turns="Turn limit reached without a report: the episode is over.",
    after_end="not run: the episode already ended with the report",
)


def tool_schemas() -> list[dict[str, Any]]:
    """Every tool in OpenAI function-calling format, for model-backed agents."""
    return [spec.json_schema() for spec in GATE_TOOLS.values()]
