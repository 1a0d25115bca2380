"""The original refund desk's eval split (``tests/data``) and the figures its grader gave on it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parents[2] / "data"


@dataclass(frozen=True)
class OriginalEval:
    """The original's curated eval split and, per policy, what its grader gave on each case."""

    cases: Path  # the split, as a JSONL case file
    policies: dict[str, Any]  # per policy: per-case figures and the mean, under rules="original"
    improved_rules: dict[str, Any]  # per policy: the rows our default rules change, and the mean
    # The figures compared case by case: the reward, the five terms and three metrics.
    figures: tuple[str, ...] = (
        "reward",
        "task_completed",
        "log_replayable",
        "no_duplicate_effects",
        "no_unauthorized_payment",
        "no_false_block",
        "duplicate_effects",
        "unauthorized_cents",
        "false_blocks",
    )


@pytest.fixture(scope="session")
def original_eval() -> OriginalEval:
    expected = json.loads((DATA / "dsed_eval_expected.json").read_text())
    return OriginalEval(
        cases=DATA / "dsed_eval_curated.jsonl",
        policies=expected["policies"],
        improved_rules=expected["improved_rules"]["policies"],
    )
