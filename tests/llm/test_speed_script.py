"""benchmarks/llm_speed.py runs end to end on a tiny size and writes well-formed files (no timing checks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmark_scripts import load_script


@pytest.mark.slow  # server: the speed script end to end
def test_the_quick_run_writes_json_and_a_table(tmp_path: Path) -> None:
    script = load_script("llm_speed")
    assert script.main(["--quick", "--concurrency", "1", "4", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "llm_speed.json").read_text())
    assert result["config"]["concurrency"] == [1, 4]
    assert list(result["through_server"]) == ["1", "4"]
    for row in result["through_server"].values():
        assert len(row["runs"]) == 1
        run = row["runs"][0]
        assert run["rollouts"] == 4 and run["mean_reward"] == 1.0
        assert run["requests"] >= run["rollouts"]
        assert 0 < run["env_share_of_wall_pct"] <= 100
        assert 0 < run["env_share_per_rollout_pct"] <= 100
        assert all(
            name in row for name in ("rollouts_per_second", "requests_per_second", "median_latency_ms")
        )
    assert result["in_process"]["runs"][0]["rollouts"] == 4
    table = (tmp_path / "llm_speed.md").read_text()
    assert table.startswith("<!-- made by: python benchmarks/llm_speed.py --quick")
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert [line.split("|")[1].strip() for line in rows[1:]] == ["1", "4", "in process, no HTTP"]
    assert all(line.count("|") == rows[0].count("|") for line in rows)
