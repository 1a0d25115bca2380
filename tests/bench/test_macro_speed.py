"""benchmarks/macro_speed.py: both desks' macro envs timed each way a move can go, the
bare text environment beside them, and each warm world figure against its target."""

from __future__ import annotations

import json
from pathlib import Path

from benchmark_scripts import load_script


def test_the_macro_speed_script_times_both_ways_on_both_desks(tmp_path: Path) -> None:
    script = load_script("macro_speed")
    assert script.main(["--steps", "30", "--rounds", "1", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "macro_speed.json").read_text())
    assert set(result["desks"]) == {"gate", "refund"}
    for by_set in result["desks"].values():
        assert set(by_set) == set(script.CASE_SETS)
        for row in by_set.values():
            assert row["world"]["steps_per_second"] > 0 and row["text"]["steps_per_second"] > 0
            assert row["text_env_alone"]["steps_per_second"] > 0
    table = (tmp_path / "macro_speed.md").read_text()
    assert table.startswith("<!-- made by: python benchmarks/macro_speed.py --steps 30 --rounds 1")
    assert table.count("met)") == 2  # one verdict per desk, on its warm row


def test_the_verdict_is_the_warm_world_figure_against_the_desks_target() -> None:
    script = load_script("macro_speed")

    def row(world: float) -> dict:
        return {"text": {"steps_per_second": 1.0}, "world": {"steps_per_second": world}}

    target = script.TARGETS["gate"]
    for world, verdict in ((target, "(met)"), (target - 1, "(not met)")):
        result = {
            "desks": {"gate": {"eval": row(world), "procedural": row(1.0)}},
            "steps": 1,
            "rounds": 1,
            "clock": "cpu",
            "load_before": [],
            "load_after": [],
        }
        lines = [line for line in script.markdown(result).splitlines() if line.startswith("| gate")]
        assert verdict in lines[0] and "met" not in lines[1], lines
