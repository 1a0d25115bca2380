"""``batchgate bench`` (the gate's, :mod:`batchgate_gym.bench.gate`) runs end to end at
smoke-test size and reports every figure; ``benchmarks/gate_speed.py`` measures what only it
measures: the profile, the user's path, the macro env, hypothesis.

No timing is asserted (machines differ and cores are shared): every figure is present,
positive and consistent with the configuration, and the profile's buckets add up to
the whole episode.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from benchmark_scripts import load_script

from batchgate_gym.app.cli import main
from batchgate_gym.bench import gate as bench

TINY = bench.BenchConfig(
    repeats=1,
    episodes=4,
    steps=5,
    resets=5,
    procedural_resets=2,
    memory_envs=60,  # enough that their pages show in the resident size (a few would not)
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
    reset = result["targets"]["reset_procedural_ms"]
    assert reset["met"] == (reset["measured"] <= reset["target"])
    assert "reset_built_us" not in result["targets"]  # reported, not a target
    assert result["targets"]["reset_and_profile_100k_rows_s"]["met"] is None  # not measured at this size
    table = bench.markdown(result)
    assert "careful, episodes/s" in table and "AsyncVectorEnv" in table and "rows per batch" in table
    json.dumps(result)  # plain JSON all the way down


def test_cli_quick_json(monkeypatch, capsys):
    monkeypatch.setattr(bench.BenchConfig, "quick", classmethod(lambda cls: TINY))
    assert main(["bench", "--quick", "--json", "--clock", "cpu"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["config"]["episodes"] == TINY.episodes and printed["clock"] == "cpu"


def test_the_profile_buckets_add_up_to_the_episode(tmp_path) -> None:
    script = load_script("gate_speed")
    assert script.main(["--profile-only", "--quick", "--clock", "cpu", "--out", str(tmp_path)]) == 0
    profile = json.loads((tmp_path / "gate_speed_profile.json").read_text())
    assert set(profile) == {"careful", "naive"}
    for figures in profile.values():
        buckets = figures["buckets_us"]
        assert set(buckets) == {*script.BUCKETS, script.REST, script.OTHER}
        assert abs(sum(buckets.values()) - figures["us_per_episode"]) <= 0.01 * figures["us_per_episode"] + 1
        assert (
            buckets["SQL prepare/step (queries, loads)"] > 0
            and buckets["log hashing (append, seal, verify)"] > 0
        )
    table = script.profile_table(profile, before=profile)
    assert "careful, before" in table and "**whole episode**" in table


def test_the_macro_env_and_hypothesis_rates_are_measured() -> None:
    script = load_script("gate_speed")
    assert script.macro_steps_per_second(40, 1, "cpu") > 0
    rates = script.hypothesis_rates(2)
    assert rates["state_machine_examples_per_second"] > 0 and rates["replay_property_examples_per_second"] > 0


def test_the_user_path_is_measured_cold_and_warm_on_files_of_its_own(tmp_path) -> None:
    script = load_script("gate_speed")
    first = script.fresh_case_file(tmp_path, 10**6, 3)
    assert first.read_bytes() != script.fresh_case_file(tmp_path, 2 * 10**6, 3).read_bytes()
    assert len(first.read_text().splitlines()) == 3
    path = script.user_path(4, 1, "cpu")
    for name in ("cold_file_ms", "same_file_again_ms", "evaluate_warm_ms", "bare_loop_ms"):
        assert path[name] > 0
    # The cold file was read in a process of its own: this one never read it (a file read
    # here would be kept by the digest of its bytes).
    from batchgate_gym.kernel import case_files

    measured = hashlib.sha256(script.fresh_case_file(tmp_path, 10**6, 4).read_bytes()).hexdigest()
    assert case_files._CASE_FILES and all(digest != measured for _reader, digest in case_files._CASE_FILES)
    # The script divides the unrounded medians; the figures it reports are rounded to 4 places.
    assert path["cold_ratio"] == pytest.approx(path["cold_file_ms"] / path["bare_loop_ms"], abs=2e-3)
    table = script.user_path_table(path)
    assert "never read before" in table and "bare loop" in table
    cold = script.cold_profile(3, path["cold_file_ms"], tmp_path)
    # Every bucket the script names was seen (a renamed function would leave it at zero),
    # and the buckets share out the whole cold episode.
    assert all(us > 0 for us in cold.values()), cold
    assert sum(cold.values()) == pytest.approx(path["cold_file_ms"] * 1e3, rel=1e-2)
    assert "whole cold episode" in script.cold_profile_table(cold)
