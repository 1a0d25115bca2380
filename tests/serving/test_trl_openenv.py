"""benchmarks/trl_openenv.py: two GRPO steps of TRL whose rollouts step a ``serve-env`` process.

The run's rewards are the server's, equal to ``get_reward()`` of the same calls on
the desk's TRL environment in this process, and TRL trains on exactly those.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmark_scripts import load_script

pytest.importorskip("trl", reason="TRL is not installed (pip install -e '.[trl]')")
pytest.importorskip("openenv", reason="the openenv extra is not installed (pip install -e '.[openenv]')")


@pytest.mark.slow
def test_two_grpo_steps_over_openenv_train_on_the_servers_rewards(tmp_path: Path) -> None:
    # Two rows, not the benchmark's four: each step's two completions of one row still
    # earn different rewards, and the long observations make every row's backward pass dear.
    results = load_script("trl_openenv").run(str(tmp_path), seeds=(3, 4))
    assert results["steps"] == 2
    rollouts = results["last_step_rollouts"]
    assert len(rollouts) == 2 and all(r["calls"][-1] == "submit_report" for r in rollouts)
    assert all(r["server_reward"] == r["in_process_reward"] for r in rollouts)
    assert results["trl_rewards_are_the_servers"] and results["rewards_differ"]
    assert results["tool_failures"] == [0.0, 0.0]
