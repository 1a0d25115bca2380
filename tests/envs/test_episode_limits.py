"""Episode limits: one value object, its defaults in one place, applied the same way by every env."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from batchgate_gym.envs.analyst.text import ANALYST_LIMITS, AnalystDeskEnv
from batchgate_gym.envs.gate import team as gate_team
from batchgate_gym.envs.gate.macro import GateMacroEnv
from batchgate_gym.envs.gate.text import GATE_LIMITS, BatchGateEnv
from batchgate_gym.envs.refund import team as refund_team
from batchgate_gym.envs.refund.macro import RefundMacroEnv
from batchgate_gym.envs.refund.text import REFUND_LIMITS, TURNS_PER_TICKET, RefundDeskEnv
from batchgate_gym.kernel.episode import EpisodeLimits

LIMIT_NAMES = ("max_turns", "max_calls_per_step", "max_observation_chars")


def test_given_puts_each_limit_given_in_place_and_checks_it():
    defaults = EpisodeLimits(max_turns=16)
    assert defaults.given() == defaults
    assert defaults.given(max_calls_per_step=4) == EpisodeLimits(16, 4, 65_536)
    assert defaults.given(3, 5, 1_000) == EpisodeLimits(3, 5, 1_000)
    for bad in (0, True, 1.5, "3"):
        with pytest.raises(ValueError, match=r"max_turns must be an int in 1\.\.10,000"):
            defaults.given(max_turns=bad)  # type: ignore[arg-type]


def _limits(env: Any) -> EpisodeLimits:
    inner = getattr(env, "unwrapped", env)
    for holder in (inner, getattr(inner, "text_env", None), getattr(inner, "game", None)):
        if holder is not None and isinstance(getattr(holder, "limits", None), EpisodeLimits):
            return holder.limits
    raise AssertionError(f"no limits on {env!r}")


# Each env, how to build it, and its limits when no limit is given.
ENVS: dict[str, tuple[Callable[..., Any], EpisodeLimits]] = {
    "gate text": (BatchGateEnv, GATE_LIMITS),
    "gate macro": (GateMacroEnv, GATE_LIMITS),
    "gate team": (gate_team.raw_env, GATE_LIMITS),
    "gate team parallel": (gate_team.parallel_env, GATE_LIMITS),
    "refund text": (RefundDeskEnv, REFUND_LIMITS),
    "refund macro": (RefundMacroEnv, REFUND_LIMITS),
    # two tickets a worker, and one more: a request sent again may be dealt to it
    "refund team": (refund_team.raw_env, REFUND_LIMITS.given(max_turns=3 * TURNS_PER_TICKET)),
    "refund team parallel": (refund_team.parallel_env, REFUND_LIMITS.given(max_turns=3 * TURNS_PER_TICKET)),
    "analyst text": (AnalystDeskEnv, ANALYST_LIMITS),
}


@pytest.mark.parametrize("name", ENVS)
def test_every_env_takes_its_desks_limits_unless_given(name):
    make, defaults = ENVS[name]
    env = make()
    try:
        assert _limits(env) == defaults
    finally:
        env.close()
    given = make(max_turns=7, max_calls_per_step=3, max_observation_chars=200_000)
    try:
        assert _limits(given) == EpisodeLimits(7, 3, 200_000)
    finally:
        given.close()


@pytest.mark.parametrize(
    "env_class",
    [BatchGateEnv, RefundDeskEnv, AnalystDeskEnv, gate_team.GateTeamSetup, refund_team.RefundTeamSetup],
)
def test_no_env_writes_a_limit_default_of_its_own(env_class):
    parameters = inspect.signature(env_class).parameters
    assert {name: parameters[name].default for name in LIMIT_NAMES} == dict.fromkeys(LIMIT_NAMES)
