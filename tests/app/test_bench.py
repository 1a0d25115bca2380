"""The speed benchmark runs end to end at smoke-test size and reports every figure.

No timing is asserted (machines differ); the test checks that every figure of
the issue is present, positive and consistent with the configuration.
"""

from __future__ import annotations

import json

import pytest

from batchgate_gym.app.cli import main
from batchgate_gym.bench import gate as bench

TINY = bench.BenchConfig(
    repeats=1,
    episodes=4,
    steps=5,
    resets=5,
    procedural_resets=2,
    memory_envs=5,
    vector_sizes=(1, 2),
    vector_steps=6,
    rows=(10, 50),
    batches=(2, 3),
    scaling_repeats=1,
)


@pytest.fixture(scope="module")
def result():
    return bench.run_benchmark(TINY, clock="cpu")


def test_every_figure_is_there_and_positive(result):
    for policy in ("careful", "naive"):
        figures = result["episodes"][policy]
        assert figures["episodes_per_second"] > 0
        assert figures["ms_per_episode"] == pytest.approx(1000 / figures["episodes_per_second"], rel=1e-3)
    assert (
        result["episodes"]["careful"]["calls_per_episode"] > result["episodes"]["naive"]["calls_per_episode"]
    )
    assert set(result["steps_per_second"]) == {"list_batches", "profile_batch", "run_sql"}
    assert all(rate > 0 for rate in result["steps_per_second"].values())
    assert result["reset"]["reset_built_us"] > 0 and result["reset"]["reset_procedural_ms"] > 0
    assert result["memory"]["envs"] == TINY.memory_envs and result["memory"]["kb_per_env"] > 0


def test_vector_and_scaling_follow_the_config(result):
    for kind in ("sync", "async"):
        assert list(result["vector"][kind]) == [str(n) for n in TINY.vector_sizes]
        assert all(v["steps_per_second"] > 0 for v in result["vector"][kind].values())
    assert [p["rows_per_batch"] for p in result["scaling"]["rows"]] == list(TINY.rows)
    assert [p["batches"] for p in result["scaling"]["batches"]] == list(TINY.batches)
    for point in result["scaling"]["rows"] + result["scaling"]["batches"]:
        assert min(point[k] for k in ("reset_new_ms", "reset_built_us", "profile_first_ms")) > 0
        assert point["careful_episode_ms"] > 0


def test_targets_and_table(result):
    assert set(result["targets"]) == set(bench.TARGETS)
    reset = result["targets"]["reset_built_us"]
    assert reset["met"] == (reset["measured"] <= reset["target"])
    assert result["targets"]["reset_and_profile_100k_rows_s"]["met"] is None  # not measured at this size
    table = bench.markdown(result)
    assert "careful, episodes/s" in table and "AsyncVectorEnv" in table and "rows per batch" in table
    json.dumps(result)  # plain JSON all the way down


def test_cli_quick_json(monkeypatch, capsys):
    monkeypatch.setattr(bench.BenchConfig, "quick", classmethod(lambda cls: TINY))
    assert main(["bench", "--quick", "--json", "--clock", "cpu"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["config"]["episodes"] == TINY.episodes and printed["clock"] == "cpu"
