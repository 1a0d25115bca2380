"""benchmarks/instructions.py: each workload runs as the script's child, the table says
the change against an earlier checkout, and options that do nothing are refused."""

from __future__ import annotations

import shutil
import sys

import pytest
from benchmark_scripts import load_script


@pytest.mark.parametrize(
    "workload", ["careful", "gate_reset", "refund_reset", "cold_file", "gate_macro", "refund_macro"]
)
def test_every_workload_runs_with_a_unit_and_with_none(workload: str) -> None:
    script = load_script("instructions")
    assert set(script.WORKLOADS) == set(script.MEASURES)
    for count in (0, 1):
        assert script.main(["--workload", workload, "--count", str(count)]) == 0


def test_the_table_gives_before_now_and_the_change() -> None:
    script = load_script("instructions")
    table = script.markdown({"now": {"careful": 900.0}, "before": {"careful": 1000.0}})
    assert "| careful episode, eval split, warm (text interface, graded) | 1,000 | 900 | -10.0% |" in table
    assert "before" not in script.markdown({"now": {"careful": 900.0}})


@pytest.mark.parametrize(
    "argv",
    [
        ["--workload", "careful"],
        ["--count", "3"],
        ["--workload", "careful", "--count", "-1"],
        ["--measures", "nope"],
    ],
)
def test_an_incomplete_or_unknown_request_is_refused(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        load_script("instructions").main(argv)
    assert stopped.value.code == 2


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_reset_counts_about_the_same_instructions_every_time() -> None:
    # Not exactly: a new process lays out its sets, dicts and identity-keyed caches anew.
    script = load_script("instructions")
    first, second = (script.per_unit(sys.executable, "refund_reset") for _ in range(2))
    assert first > 0 and abs(first - second) / first < 0.15
