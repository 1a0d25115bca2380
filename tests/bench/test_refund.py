"""``batchgate bench --desk refund`` runs end to end at a tiny size and reports every figure.

No speed is asserted (machines differ, and the cores are shared); the test checks
that each figure is there, positive and consistent with the configuration.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from batchgate_gym.bench import BenchConfig, bench_of
from batchgate_gym.desks import registry

TINY = BenchConfig(repeats=1, episodes=4, steps=5, resets=5, procedural_resets=2)


@pytest.fixture(scope="module")
def result() -> dict:
    hooks = bench_of(registry.get("refund"))
    return hooks.run_benchmark(TINY, clock="cpu")


def _check(result: dict) -> None:
    assert result["desk"] == "refund"
    for name in ("careful", "naive"):
        figures = result["episodes"][name]
        assert figures["episodes_per_second"] > 0
        assert figures["ms_per_episode"] == pytest.approx(1000 / figures["episodes_per_second"], rel=1e-3)
        assert figures["calls_per_episode"] >= 2  # at least a lookup and the reply
    assert list(result["steps_per_second"]) == ["lookup_order"]
    assert result["steps_per_second"]["lookup_order"] > 0
    assert result["reset"]["reset_built_us"] > 0 and result["reset"]["reset_procedural_ms"] > 0


def test_every_figure_is_there_and_positive(result: dict) -> None:
    _check(result)
    assert result["config"] == {"repeats": 1, "episodes": 4, "steps": 5, "resets": 5, "procedural_resets": 2}
    assert result["clock"] == "cpu"


def test_careful_reads_more_than_naive_per_episode(result: dict) -> None:
    # careful reads the order and its history before paying; naive only looks it up.
    assert (
        result["episodes"]["careful"]["calls_per_episode"] > result["episodes"]["naive"]["calls_per_episode"]
    )


def test_the_markdown_table_names_every_measure(result: dict) -> None:
    table = bench_of(registry.get("refund")).markdown(result)
    for label in (
        "careful, episodes/s",
        "naive, episodes/s",
        "lookup_order, steps/s",
        "built case",
        "procedural",
    ):
        assert label in table
    assert table.count("\n") == 6  # header, rule and five rows


def test_the_command_prints_the_result_as_json() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "batchgate_gym",
            "bench",
            "--desk",
            "refund",
            "--quick",
            "--repeats",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    out = json.loads(done.stdout)
    _check(out)
    assert out["config"]["repeats"] == 1
    assert "[bench] episodes" in done.stderr


def test_the_refund_speed_script_writes_its_table_and_figures(tmp_path) -> None:
    from benchmark_scripts import load_script

    script = load_script("refund_speed")
    assert script.main(["--quick", "--repeats", "1", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "refund_speed.md").read_text()
    figures = json.loads((tmp_path / "refund_speed.json").read_text())
    assert table.startswith("<!-- made by: python benchmarks/refund_speed.py") and "careful" in table
    assert figures
