"""The recorded PPO runs name the library versions they came out of, and the ``train``
extra installs exactly those: a network trained from the same seed differs across
versions of torch and stable-baselines3, so a range would let the published figures
drift without a line of this code changing."""

from __future__ import annotations

import configparser
import json
import re
from pathlib import Path

import pytest
from benchmark_scripts import load_script

from batchgate_gym.bench.harness import library_versions

ROOT = Path(__file__).resolve().parents[2]
RECORDED_RUNS = ("ppo_macro", "ppo_refund")
PINNED = ("torch", "stable-baselines3", "sb3-contrib")


def train_extra_pins() -> dict[str, str]:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    pins = {}
    for line in config["options.extras_require"]["train"].split():
        name, _, version = line.partition("==")
        assert version, f"the train extra names {line!r} without an exact version"
        pins[name] = version
    return pins


def test_the_train_extra_pins_every_library_a_trained_network_depends_on() -> None:
    pins = train_extra_pins()
    assert set(PINNED) <= set(pins)
    assert set(PINNED) <= set(load_script("gate_train_ppo").TRAINING_LIBRARIES)


@pytest.mark.parametrize("run", RECORDED_RUNS)
def test_each_recorded_run_came_out_of_the_pinned_versions(run: str) -> None:
    summary = json.loads((ROOT / "benchmarks" / "results" / run / "summary.json").read_text())
    recorded = summary.get("libraries")
    assert recorded, f"{run}/summary.json does not say which library versions trained it"
    for name, version in train_extra_pins().items():
        # A local build's tag (2.13.0+cpu) is the same release as the pin.
        assert recorded[name].split("+")[0] == version, (run, name, recorded[name], version)


def test_every_install_command_asks_for_the_pinned_torch() -> None:
    # The commands install torch before the extras (so that they find it installed):
    # each must name the version the extra pins, or pip would refuse the pair.
    pinned = train_extra_pins()["torch"]
    named = {}
    for path in [ROOT / "README.md", ROOT / ".ci" / "run", *sorted((ROOT / "docs").glob("*.md"))]:
        for version in re.findall(r"torch==([\w.+]+)", path.read_text()):
            named.setdefault(version, []).append(path.name)
    assert set(named) == {pinned}, named


def test_library_versions_reads_installed_distributions_and_names_missing_ones() -> None:
    found = library_versions(["pytest", "no-such-distribution-here"])
    assert found["pytest"] == pytest.__version__
    assert found["no-such-distribution-here"] is None
