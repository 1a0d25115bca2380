"""The tests' view of the served desks: servers started side by side, and the check that every
served episode is the report's row with a log that replays."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from batchgate_gym.serving.checking import compared, differences, eval_cases, replayed_score, report_rows
from batchgate_gym.serving.processes import ServedProcess as Served
from batchgate_gym.serving.processes import started as serving

Rows = dict[str, dict[str, Any]]  # the report's per-case rows of one policy, by case id


def check_policies_against_report(
    desk: str, cases: Sequence[int] | None, play: Callable[[str, Rows], list[dict[str, Any]]]
) -> None:
    """Each policy ``desk`` is compared on (its spec's ``compared``), served by ``play(policy, rows)`` on the eval ``cases``
    (every one if None) the n-th with seed n, plays every episode as the report's row, its log
    replaying to its score; and the policies' rewards differ (nothing served is one constant)."""
    rewards: set[float] = set()
    for policy in compared(desk):
        rows = report_rows(desk, policy, cases)
        played = play(policy, rows)
        assert differences(desk, rows, played) == []
        rewards |= {episode["reward"] for episode in played}
    assert len(rewards) > 1


def same_as_report(desk: str, row: dict[str, Any], episode: dict[str, Any]) -> bool:
    """One served episode is the report's row for its case, with a log that replays."""
    return differences(desk, {episode["case_id"]: row}, [episode]) == []


__all__ = [
    "Rows",
    "Served",
    "check_policies_against_report",
    "eval_cases",
    "replayed_score",
    "report_rows",
    "same_as_report",
    "serving",
]
