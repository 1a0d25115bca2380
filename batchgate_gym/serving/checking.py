"""What a served episode must equal: the row ``batchgate report --json`` gives its case, and
the score its exported log replays to under its head (for tests and the benchmark)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.evaluation import report_json, run_policies


def compared(desk: str) -> tuple[str, ...]:
    """The policies ``desk`` is compared on (its spec's ``compared``: the honest one and its
    naive counterpart)."""
    return registry.get(desk).policies.compared


def eval_cases(desk: str, indices: Sequence[int] | None = None) -> list[Any]:
    """The desk's eval cases at ``indices`` (every one if None)."""
    cases = registry.get(desk).fixed_cases(split="eval")
    return cases if indices is None else [cases[i] for i in indices]


def report_rows(desk: str, policy: str, indices: Sequence[int] | None = None) -> dict[str, dict[str, Any]]:
    """``batchgate report --json``'s per-case rows of ``policy`` on the eval cases at ``indices``,
    played as the report plays a list of cases: the n-th with seed n."""
    spec = registry.get(desk)
    cases = eval_cases(desk, indices)
    results = run_policies(
        {policy: spec.policies.reference_policies[policy]}, cases=cases, progress=False, desk=desk
    )
    return dict(report_json(results, desk)["policies"][policy]["per_case"])


def replayed_score(desk: str, case_id: str, log: Any, head: str) -> dict[str, Any]:
    """The score the desk's replay recomputes from an exported log under its head."""
    from batchgate_gym.llm.results import desk_module

    case = next(c for c in eval_cases(desk) if c.case_id == case_id)
    return dict(desk_module(desk, "replay").replay(case, log, head=head).as_dict())


def differences(desk: str, rows: dict[str, dict[str, Any]], played: list[dict[str, Any]]) -> list[str]:
    """What keeps each served episode (in the rows' order) from being the report's row with a log
    that replays to its score: one line per fault, none when all agree."""
    found = []
    if [episode["case_id"] for episode in played] != list(rows):
        return ["the episodes are not the rows' cases in order"]
    terms = ("reward", *registry.get(desk).scoring.terms)
    for episode in played:
        case_id, score = episode["case_id"], episode["score"]
        row = rows[case_id]
        if episode["reward"] != row["reward"] or any(score[term] != row[term] for term in terms):
            found.append(f"{case_id}: scored {score}, the report says {row}")
        elif replayed_score(desk, case_id, episode["log"], episode["log_head"]) != score:
            found.append(f"{case_id}: the log does not replay to its score")
    return found


__all__ = ["compared", "differences", "eval_cases", "replayed_score", "report_rows"]
