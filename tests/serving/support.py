"""The tests' view of the served desks: servers started side by side, and the check that every
served episode is the report's row with a log that replays."""

from __future__ import annotations

from typing import Any

from batchgate_gym.serving.checking import COMPARED, differences, eval_cases, replayed_score, report_rows
from batchgate_gym.serving.processes import ServedProcess as Served
from batchgate_gym.serving.processes import started as serving

POLICIES = COMPARED


def check_against_report(
    desk: str, rows: dict[str, dict[str, Any]], played: list[dict[str, Any]]
) -> set[float]:
    """Every served episode scored as the report's row, its log replaying to its score; the rewards."""
    assert differences(desk, rows, played) == []
    return {episode["reward"] for episode in played}


def same_as_report(desk: str, row: dict[str, Any], episode: dict[str, Any]) -> bool:
    """One served episode is the report's row for its case, with a log that replays."""
    return differences(desk, {episode["case_id"]: row}, [episode]) == []


__all__ = [
    "POLICIES",
    "Served",
    "check_against_report",
    "eval_cases",
    "replayed_score",
    "report_rows",
    "same_as_report",
    "serving",
]
