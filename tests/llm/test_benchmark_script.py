"""benchmarks/llm_scripted.py, which makes the model table of docs/models.md, runs end to end (few cases)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from benchmark_scripts import load_script

from batchgate_gym.llm.results import load_results
from batchgate_gym.llm.summary import model_report_json


@pytest.mark.slow  # server: the benchmark script over every scripted player
def test_the_script_writes_one_regradable_file_per_scripted_player(tmp_path: Path, monkeypatch: Any) -> None:
    script = load_script("llm_scripted")
    faulty = next(player for player in script.PLAYERS if player[0] == "scripted-careful-faults")
    assert faulty[2]["stall"] > 100 * faulty[3]["timeout"]  # a stall always times out, whatever the load
    monkeypatch.setitem(faulty[3], "timeout", 1.0)  # each stall costs the test one second, not ten
    assert script.main(["--out", str(tmp_path), "-n", "3"]) == 0
    names = [name for name, *_ in script.PLAYERS]
    paths = [tmp_path / f"{name}.jsonl" for name in names]
    rollouts = 3 * script.ROLLOUTS
    assert all(len(path.read_text().splitlines()) == rollouts for path in paths)
    report = model_report_json(load_results(paths), "gate")["policies"]
    assert list(report) == names
    careful = report["scripted-careful"]
    assert careful["mean_reward"] == 1.0 and careful["ci95"] == [1.0, 1.0]
    assert careful["pass_at_k"] == careful["pass_hat_k"] == {"1": 1.0, "2": 1.0}
    assert careful["tokens"]["prompt_per_rollout"] > 0 and careful["latency_s"]["p50"] is not None
    faulty = report["scripted-careful-faults"]
    assert faulty["scored"] + faulty["infra_errors"] == rollouts
    short = report["scripted-careful-short-context"]
    assert short["scored"] == rollouts and short["truncated"] > 0  # overflows are scored, not dropped
    assert all(entry["common_cases"] == careful["common_cases"] for entry in report.values())
    assert all(
        json.loads(line)["model"].startswith("scripted-")
        for p in paths
        for line in p.read_text().splitlines()
    )
