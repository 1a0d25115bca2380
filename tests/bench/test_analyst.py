"""``batchgate bench --desk analyst`` measures every store it can open, at a tiny size here.

The benchmark plays careful over each store's eval questions; here it plays two per store
and times the join query three times, through the very code of a full run. No speed is
asserted (machines differ, and the cores are shared): each store has its row, careful
answers every question, and every figure is a positive number.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from batchgate_gym.bench import BenchConfig, analyst, bench_of
from batchgate_gym.desks import registry

CASES_PER_STORE = 2


@pytest.fixture(scope="module")
def result() -> Iterator[dict[str, Any]]:
    every_case = analyst.bench_cases
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(analyst, "bench_cases", lambda group: every_case(group)[:CASES_PER_STORE])
        patch.setattr(analyst, "LATENCY_RUNS", 3)
        yield bench_of(registry.get("analyst")).run_benchmark(BenchConfig(repeats=1), clock="cpu")


def test_every_store_is_measured_with_careful_right_on_each_question(result: dict[str, Any]) -> None:
    assert result["desk"] == "analyst" and result["clock"] == "cpu"
    assert result["config"] == {"repeats": 1}
    assert list(result["stores"]) == list(analyst.groups())
    assert {"sqlite", "duckdb", "lake", "files", "sqlite+lake"} <= set(result["stores"])
    for figures in result["stores"].values():
        assert figures["cases"] == CASES_PER_STORE and figures["careful_reward"] == 1.0
        for name in ("episodes_per_second", "open_ms", "query_ms", "procedural_reset_ms"):
            assert figures[name] > 0, name
    json.dumps(result)  # plain JSON all the way down


def test_the_markdown_table_has_a_row_per_store(result: dict[str, Any]) -> None:
    table = analyst.markdown(result)
    lines = table.splitlines()
    assert lines[0].startswith("| store | eval cases | careful reward | careful episodes/s |")
    assert [line.split(" | ")[0].removeprefix("| ") for line in lines[2:]] == list(result["stores"])
