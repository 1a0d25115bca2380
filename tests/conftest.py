"""Shared fixtures: the original eval fixture and small helpers to drive the env."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from batchgate_gym.testing import register_profiles

DATA = Path(__file__).parent / "data"
FIXTURE_CASES = DATA / "seed_eval_curated.jsonl"
FIXTURE_EXPECTED = DATA / "seed_eval_expected.json"

register_profiles()  # hypothesis profiles: "ci" bounded by default, "long" for nightly runs


@pytest.fixture(scope="session")
def fixture_cases():
    from batchgate_gym.desks.gate.cases import load_cases

    return load_cases(FIXTURE_CASES)


@pytest.fixture(scope="session")
def expected() -> dict[str, Any]:
    return json.loads(FIXTURE_EXPECTED.read_text())


def run_actions(env: Any, actions: list[str], **reset_kwargs: Any) -> tuple[list[str], float, dict[str, Any]]:
    """Reset, send each action in turn; return observations, last reward, last info."""
    observation, info = env.reset(**reset_kwargs)
    observations = [observation]
    reward = 0.0
    for action in actions:
        observation, reward, terminated, truncated, info = env.step(action)
        observations.append(observation)
        if terminated or truncated:
            break
    return observations, reward, info


def last_json(observation: str) -> dict[str, Any]:
    """The JSON result on the last line that holds one."""
    for line in reversed(observation.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise AssertionError(f"no JSON result in {observation!r}")
