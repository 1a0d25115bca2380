"""The gate's speed script measures what only it measures: the profile, the macro env, hypothesis.

No speed is asserted (machines differ and cores are shared): the profile's buckets
add up to the whole episode, and every rate is a positive number.
"""

from __future__ import annotations

import json

import pytest
from benchmark_scripts import load_script


def test_the_profile_buckets_add_up_to_the_episode(tmp_path) -> None:
    script = load_script("speed")
    assert script.main(["--profile-only", "--quick", "--clock", "cpu", "--out", str(tmp_path)]) == 0
    profile = json.loads((tmp_path / "speed_profile.json").read_text())
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
    script = load_script("speed")
    assert script.macro_steps_per_second(40, 1, "cpu") > 0
    rates = script.hypothesis_rates(2)
    assert rates["state_machine_examples_per_second"] > 0 and rates["replay_property_examples_per_second"] > 0


def test_the_user_path_is_measured_cold_and_warm_on_files_of_its_own(tmp_path) -> None:
    script = load_script("speed")
    first = script.fresh_case_file(tmp_path, 10**6, 3)
    assert first.read_bytes() != script.fresh_case_file(tmp_path, 2 * 10**6, 3).read_bytes()
    assert len(first.read_text().splitlines()) == 3
    path = script.user_path(4, 1, "cpu")
    for name in ("cold_file_ms", "same_file_again_ms", "evaluate_warm_ms", "bare_loop_ms"):
        assert path[name] > 0
    # The script divides the unrounded medians; the figures it reports are rounded to 4 places.
    assert path["cold_ratio"] == pytest.approx(path["cold_file_ms"] / path["bare_loop_ms"], abs=2e-3)
    table = script.user_path_table(path)
    assert "never read before" in table and "bare loop" in table
