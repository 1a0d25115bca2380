"""Every registered environment pickles, before and after reset (Ray, multiprocessing
with spawn and checkpointing libraries pickle environments).

An environment unpickled before any reset is a fresh one that waits for ``reset``; one
unpickled mid-episode continues that episode: the next steps give what the original
gives, to the log's last hash, in this process and in a new one.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from typing import Any

import gymnasium
import numpy as np
import pytest

import batchgate_gym  # noqa: F401  (registers the ids)
from batchgate_gym.desks import registry
from batchgate_gym.kernel.text_policy import as_policy
from batchgate_gym.registration import ENTRY_POINTS

SEED = 7


def _careful_actions(env_id: str) -> list[Any]:
    """The actions of a whole episode at ``SEED``: the desk's careful policy on a text
    environment, the first legal move each turn on a macro one."""
    env = gymnasium.make(env_id)
    try:
        observation, info = env.reset(seed=SEED)
        if isinstance(env.action_space, gymnasium.spaces.Discrete):
            act = lambda _observation: int(np.flatnonzero(env.unwrapped.action_masks())[0])  # noqa: E731
        else:
            desk = next(
                registry.get(name) for name in registry.names() if registry.get(name).env_id == env_id
            )
            policy = as_policy(desk.policies.reference_policies["careful"])
            policy.reset(observation, info)
            act = policy.act
        actions, done = [], False
        while not done:
            actions.append(act(observation))
            observation, _reward, terminated, truncated, _info = env.step(actions[-1])
            done = terminated or truncated
        return actions
    finally:
        env.close()


def _text_env(env: Any) -> Any:
    """The text environment under ``env`` (a macro env plays one)."""
    return getattr(env.unwrapped, "text_env", env.unwrapped)


def _play(env: Any, actions: list[Any]) -> list[Any]:
    return [env.step(action) for action in actions]


@pytest.mark.parametrize("env_id", list(ENTRY_POINTS))
def test_every_env_pickles_before_reset_as_a_fresh_env(env_id):
    env = gymnasium.make(env_id)
    copy = pickle.loads(pickle.dumps(env))
    try:
        first, copied = env.reset(seed=SEED), copy.reset(seed=SEED)
        np.testing.assert_equal(copied, first)
    finally:
        env.close(), copy.close()


@pytest.mark.parametrize("env_id", list(ENTRY_POINTS))
def test_an_env_pickled_mid_episode_continues_the_same_episode(env_id):
    actions = _careful_actions(env_id)
    cut = max(1, len(actions) // 2)
    env = gymnasium.make(env_id)
    try:
        env.reset(seed=SEED)
        _play(env, actions[:cut])
        copy = pickle.loads(pickle.dumps(env))
        copied, original = _play(copy, actions[cut:]), _play(env, actions[cut:])
        np.testing.assert_equal(copied, original)
        final_info = original[-1][4]
        assert final_info["log_intact"] and final_info["log_head"] == copied[-1][4]["log_head"]
        assert original[-1][2], "the episode ended (careful finishes it)"
        # An ended episode pickles too, and its copy is as ended as it is.
        ended = pickle.loads(pickle.dumps(env))
        assert _text_env(ended).export_log() == _text_env(env).export_log()
        copy.close(), ended.close()
    finally:
        env.close()


_CONTINUE = """
import pickle, sys
import batchgate_gym
env, actions = pickle.loads(sys.stdin.buffer.read())
for action in actions:
    *_, info = env.step(action)
print(info["log_head"])
"""


def test_an_env_pickled_mid_episode_continues_in_a_new_process():
    """The gate's world holds an SQLite connection: its pickle must rebuild the warehouse."""
    env_id = "batchgate_gym/BadBatchGate-v0"
    actions = _careful_actions(env_id)
    cut = len(actions) // 2
    env = gymnasium.make(env_id)
    env.reset(seed=SEED)
    _play(env, actions[:cut])
    sent = pickle.dumps((env, actions[cut:]))
    expected = _play(env, actions[cut:])[-1][4]["log_head"]
    env.close()
    out = subprocess.run([sys.executable, "-c", _CONTINUE], input=sent, capture_output=True, check=True)
    assert out.stdout.decode().strip() == expected


def _gate_mid_episode() -> tuple[Any, list[Any]]:
    """A gate env at ``SEED`` after the careful policy's first action, and the rest of its actions."""
    actions = _careful_actions("batchgate_gym/BadBatchGate-v0")
    env = gymnasium.make("batchgate_gym/BadBatchGate-v0")
    env.reset(seed=SEED)
    env.step(actions[0])
    return env, actions[1:]


def test_a_step_refused_after_the_end_leaves_the_episode_as_it_was():
    """Stepping an ended episode raises and changes nothing: the env still pickles, and its
    copy holds the same ended episode (the refused action is not kept as one played)."""
    env, rest = _gate_mid_episode()
    try:
        _play(env, rest)
        with pytest.raises(RuntimeError, match="episode is over"):
            env.step(rest[-1])
        copy = pickle.loads(pickle.dumps(env))
        assert _text_env(copy).export_log() == _text_env(env).export_log()
        with pytest.raises(RuntimeError, match="episode is over"):
            copy.step(rest[-1])
        copy.close()
    finally:
        env.close()


def test_an_env_the_machine_stopped_pickles_as_stopped(monkeypatch):
    """A safety net fires on a call (the machine stalled: the same query runs fine again).
    The episode ends unscored there, and a pickled copy holds that same ended episode, to
    the log's last entry, not the episode the action would have played on a calm machine."""
    from batchgate_gym.kernel.infra import InfraFailure
    from batchgate_gym.kernel.sqlguard import SqlGuard

    env, rest = _gate_mid_episode()
    try:
        real_run = SqlGuard.run
        stalls = iter([True])

        def stalled_run(guard: SqlGuard, query: str) -> Any:
            if next(stalls, False):
                raise InfraFailure("the statement ran past the wall-clock safety limit")
            return real_run(guard, query)

        monkeypatch.setattr(SqlGuard, "run", stalled_run)
        _observation, reward, terminated, truncated, info = env.step(rest[0])
        monkeypatch.undo()
        assert "safety limit" in info["infra_error"] and truncated and not terminated and reward == 0.0
        log = _text_env(env).export_log()
        assert log[-2]["note"].startswith("infra: ") and log[-1]["args"]["reason"].startswith("infra error: ")
        copy = pickle.loads(pickle.dumps(env))
        assert _text_env(copy).export_log() == log
        with pytest.raises(RuntimeError, match="episode is over"):
            copy.step(rest[1])
        copy.close()
    finally:
        env.close()


def test_a_step_that_raises_part_way_ends_the_episode_and_refuses_to_pickle(monkeypatch):
    """An error escapes a turn after its first call ran (a fault in the desk's code, an
    interrupt): the world holds part of an action that cannot be played again, so the
    episode is over and a pickle says why instead of carrying another episode."""
    from batchgate_gym.desks.gate.world import GateWorld

    env, rest = _gate_mid_episode()
    try:
        real_call = GateWorld.call
        calls = iter(range(100))

        def failing_call(world: GateWorld, call: Any) -> Any:
            if next(calls) == 1:
                raise KeyboardInterrupt
            return real_call(world, call)

        monkeypatch.setattr(GateWorld, "call", failing_call)
        two_calls = next(action for action in rest if action.count('"name"') >= 2)
        with pytest.raises(KeyboardInterrupt):
            env.step(two_calls)
        monkeypatch.undo()
        with pytest.raises(RuntimeError, match="episode is over"):
            env.step(rest[-1])
        with pytest.raises(RuntimeError, match="cannot be pickled"):
            pickle.dumps(env)
        env.reset(seed=SEED)  # a new episode pickles again
        assert _text_env(pickle.loads(pickle.dumps(env))).export_log() == _text_env(env).export_log()
    finally:
        env.close()
