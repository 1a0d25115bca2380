"""benchmarks/instructions.py: each workload runs as the script's child, the table says
the change against an earlier checkout, and options that do nothing are refused."""

from __future__ import annotations

import shutil
import sys

import pytest
from benchmark_scripts import load_script


@pytest.mark.parametrize(
    "workload",
    [
        "careful",
        "gate_reset",
        "refund_reset",
        "cold_file",
        "gate_macro",
        "refund_macro",
        "gate_generate",
        "gate_check",
        "gate_build",
        "gate_first_episode",
        "refund_generate",
        "refund_check",
        "analyst_world_sqlite",
    ],
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


@pytest.mark.slow
def test_the_text_calls_replay_the_macro_moves_on_the_same_cases() -> None:
    # The replay raises if a reset of the bare text env draws another case than the macro env's.
    assert load_script("instructions").main(["--workload", "refund_text_call", "--count", "1"]) == 0


def test_a_phase_is_the_difference_of_its_measures_and_each_macro_stands_beside_its_text_call() -> None:
    script = load_script("instructions")
    now = {"gate_generate": 100.0, "gate_check": 130.0, "gate_build": 400.0, "gate_reset": 500.0}
    before = {**now, "gate_build": 460.0, "gate_reset": 560.0}
    table = script.markdown({"now": {**now, "gate_macro": 90.0, "gate_text_call": 100.0}, "before": before})
    assert "| generate | 100 | 100 | +0.0% |" in table
    assert "| build (the SQLite image) | 330 | 270 | -18.2% |" in table
    assert "| reset (restore, log, task) | 100 | 100 | +0.0% |" in table
    assert "first compile" not in table  # its measures were not counted
    assert "| gate | 90 | 100 | 0.90x |" in table
    assert (
        "| BadBatchGateMacro-v0 step, random masked moves, eval split, warm | not counted | 90 |  |" in table
    )


def test_the_runs_with_no_units_are_shared_only_by_measures_of_one_set_up() -> None:
    script = load_script("instructions")
    for name, set_up in script.SHARED_SET_UP.items():
        sharing = [other for other, key in script.SHARED_SET_UP.items() if key == set_up]
        assert len(sharing) >= 2 and name in script.MEASURES


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
def test_a_reset_counts_the_same_instructions_in_every_process_and_none_of_the_set_up() -> None:
    # The window holds the units alone: two processes give the same count per reset (the
    # set-up's own count, outside the window, moves by up to 28M between processes, which
    # over 50 resets was a sixth of a reset's count when the whole process was counted),
    # and with no resets the window counts next to nothing (an empty loop and its call).
    script = load_script("instructions")
    first, second = (script.instructions(sys.executable, "refund_reset", 30) for _ in range(2))
    assert first > 100_000 * 30
    assert abs(first - second) / first < 0.001
    assert script.instructions(sys.executable, "refund_reset", 0) < 20_000


def test_the_window_runs_its_units_once_and_carries_their_error_out() -> None:
    script = load_script("instructions")
    ran: list[int] = []
    script.counted(lambda: ran.append(1))
    assert ran == [1]

    def fails() -> None:
        raise ValueError("inside the window")

    with pytest.raises(ValueError, match="inside the window"):
        script.counted(fails)


def test_only_the_threaded_measures_are_counted_over_the_whole_process() -> None:
    script = load_script("instructions")
    threaded = {name for name in script.MEASURES if name.startswith(("analyst_case_", "analyst_reset_"))}
    assert threaded == script.WHOLE_PROCESS
    assert set(script.SHARED_SET_UP) <= script.WHOLE_PROCESS


def test_the_analyst_worlds_reset_is_its_own_windowed_count_not_a_difference() -> None:
    # The two whole-process measures move by millions over their three units; a phase
    # taken as their difference came out below zero. The world's part is counted alone.
    script = load_script("instructions")
    now = {"analyst_case_sqlite": 40e6, "analyst_reset_sqlite": 38e6, "analyst_world_sqlite": 5e5}
    table = script.markdown({"now": now})
    assert "| the world's reset (log and task; a store opens at its first query) | 500,000 |" in table
    assert (
        "| generate and check (the question, its dataset made and written, its answer) | 40,000,000 |"
        in table
    )
    assert "-2,000,000" not in table and "analyst_world_sqlite" not in script.WHOLE_PROCESS
