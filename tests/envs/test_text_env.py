"""The generic text environment: it serves any desk through a small adapter.

A toy desk built here (a counter that must reach a target) shows that
:class:`TextDeskEnv` owns the shared behaviour itself: spaces, the turn loop,
seeded case picking, cut observations, the transcript, the terminal info and the
exported log. The batch gate is checked to be that environment with its adapter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.envs.text_env import DeskAdapter, TextDeskEnv, final_info
from batchgate_gym.kernel.codec import MAX_ACTION_CHARS, Param, ToolCall, ToolSpec
from batchgate_gym.kernel.episode import EndingText, EpisodeLimits
from batchgate_gym.kernel.ledger import Ledger


@dataclass(frozen=True)
class CounterCase:
    name: str
    target: int


CASES = [CounterCase("three", 3), CounterCase("five", 5), CounterCase("eight", 8)]
TOOLS = {
    "add": ToolSpec("add", "Add n to the counter.", (Param("n", int, "how much to add"),)),
    "done": ToolSpec("done", "Say you have finished."),
}


class CounterWorld:
    """A desk with one counter: reach the target, then say ``done()``."""

    def __init__(self) -> None:
        self.closed = False
        self.ledger = Ledger()

    def reset(self, case: CounterCase, nonce: str | None = None) -> None:
        self.case, self.total, self.over = case, 0, False  # a toy log: no entry 0, so no nonce
        self.ledger = Ledger()

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        return TOOLS

    @property
    def finished(self) -> bool:
        return self.over

    def call(self, call: ToolCall) -> dict[str, Any]:
        self.ledger.append(call.name, call.args, True)
        if call.name == "add":
            self.total += call.args["n"]
            return {"total": self.total}
        self.over = True
        return {"status": "finished"}


@dataclass(frozen=True)
class CounterScore:
    hit: bool

    def as_dict(self) -> dict[str, Any]:
        return {"reward": 1.0 if self.hit else 0.0, "hit": self.hit}


class CounterCases:
    def pick(self, rng: np.random.Generator, options: Mapping[str, Any]) -> CounterCase:
        if "name" in options:
            return next(case for case in CASES if case.name == options["name"])
        return CASES[int(rng.integers(len(CASES)))]


def counter_env(render_mode: str | None = None, **limits: Any) -> TextDeskEnv:
    adapter = DeskAdapter(
        make_world=CounterWorld,
        source=CounterCases(),
        task_text=lambda case, turns: f"Bring the counter to {case.target} in {turns} turns.\n" + "." * 400,
        score=lambda world: CounterScore(world.total == world.case.target),
        case_info=lambda case: {"case_id": case.name, "target": case.target},
        ending=EndingText(finished="counter done", over="Counting is over."),
        close_world=lambda world: setattr(world, "closed", True),
    )
    return TextDeskEnv(adapter, EpisodeLimits(**limits), render_mode=render_mode)


def test_a_second_desk_plays_a_whole_episode_through_the_text_env():
    env = counter_env()
    observation, info = env.reset(options={"name": "five"})
    assert observation.startswith("Bring the counter to 5 in 30 turns.")
    assert info == {"turn": 0, "calls": 0, "case_id": "five"}  # the case's id; no family, no origin
    observation, reward, terminated, truncated, info = env.step("add(2); add(3)")
    assert observation.startswith("turn 1 of 30\n> add(n=2)\n") and '{"total":5}' in observation
    assert (reward, terminated, truncated, info) == (0.0, False, False, {"turn": 1, "calls": 2})
    observation, reward, terminated, truncated, info = env.step('{"name": "done"}')
    assert observation.endswith("Counting is over.") and (reward, terminated, truncated) == (1.0, True, False)
    log = env.export_log()
    assert info == {
        "turn": 2,
        "calls": 1,
        "case_id": "five",
        "target": 5,
        "score": {"reward": 1.0, "hit": True},
        "log_intact": True,
        "log_entries": len(log),
        "log_head": log[-1]["hash"],
        "log_nonce": None,
    }
    assert [entry["action"] for entry in log[:3]] == ["add", "add", "done"]
    assert log[-1]["args"]["reason"] == "counter done"  # the desk's wording seals the log
    with pytest.raises(RuntimeError):
        env.step("add(1)")
    world = env.world
    env.close()
    assert world.closed


def test_the_text_env_owns_spaces_seeding_cutting_truncation_and_the_transcript():
    env = counter_env(render_mode="ansi", max_turns=2, max_observation_chars=256)
    assert env.action_space.max_length == MAX_ACTION_CHARS
    assert env.observation_space.max_length == 256
    drawn = [env.reset(seed=seed)[0] and env.case.name for seed in range(30)]
    assert drawn == [env.reset(seed=seed)[0] and env.case.name for seed in range(30)]
    assert set(drawn) == {"three", "five", "eight"}
    observation, _ = env.reset(seed=1)
    assert len(observation) <= 256 and "observation cut" in observation
    assert env.observation_space.contains(observation)
    env.step("add(1)")
    observation, reward, terminated, truncated, info = env.step("nonsense(")
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["score"] == {"reward": 0.0, "hit": False} and info["log_intact"]
    assert env.render().count("ACTION:\n") == 2
    with pytest.raises(ValueError, match="render_mode"):
        counter_env(render_mode="rgb_array")


def test_the_batch_gate_is_the_text_env_with_the_gate_adapter():
    env = BatchGateEnv(split="eval")
    assert isinstance(env, TextDeskEnv) and isinstance(env, gym.Env)
    assert env.action_space.max_length == MAX_ACTION_CHARS
    env.reset(seed=0)
    # The space's bound is the parser's: an action just over it is refused and logged.
    too_long = "x" * (MAX_ACTION_CHARS + 1)
    assert not env.action_space.contains(too_long)
    observation, *_ = env.step(too_long)
    assert f"the limit is {MAX_ACTION_CHARS}" in observation
    assert env.export_log()[-1]["executed"] is False
    env.close()


def test_final_info_orders_case_fields_score_extras_then_the_log():
    ledger = Ledger()
    ledger.append("look", {}, True)
    info = final_info({"case_id": "c"}, {"reward": 0.5}, ledger, contribution={"x": 1})
    assert list(info) == [
        "case_id",
        "score",
        "contribution",
        "log_intact",
        "log_entries",
        "log_head",
        "log_nonce",
    ]
    assert info["log_entries"] == 1 and info["log_head"] == ledger.head and info["log_intact"]
