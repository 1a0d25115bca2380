"""Both ways a macro move can reach the world give the same episode.

A macro env sends a move's calls to the desk's tools directly; with ``via_text=True``
it writes them as the text action a language agent would send and reads the text
observation back. Seeded random move sequences (mostly allowed moves, some masked
ones, which send refused or empty actions) are played both ways, side by side, on
every desk with a macro env, over fixed and procedural cases: every step must give
the same vector, reward, termination, truncation and ``info`` (the mask, the text
action and, at the end, the score and the log's head), and every episode the same
exported log, entry for entry, and the same transcript. A bare text environment of the
same settings, sent each move's text action, keeps the same log head after every step,
pays the same rewards and exports the same log: a macro move is the text call it
stands for. A move whose call differs from its text action by one argument fails it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from batchgate_gym.envs.gate.macro import GateMacroEnv
from batchgate_gym.envs.refund.macro import RefundMacroEnv
from batchgate_gym.envs.text_env import TextDeskEnv

MASKED_SHARE = 0.15  # of moves drawn among all moves, allowed or not
CLOSING_SHARE = 0.1  # of moves that may be the closing one (submit, reply): longer episodes
EPISODES = 60
MACRO_ONLY = ("slots", "lines")  # the wrappers' own settings; the rest are the text env's

CONFIGS: dict[str, tuple[type[Any], dict[str, Any]]] = {
    "gate-eval": (GateMacroEnv, {"split": "eval"}),
    "gate-procedural": (GateMacroEnv, {"slots": 6}),
    "refund-eval": (RefundMacroEnv, {"split": "eval"}),
    "refund-procedural": (RefundMacroEnv, {}),
    "refund-recovery": (RefundMacroEnv, {"recovery": True, "hints": True}),
    "refund-original-rules": (RefundMacroEnv, {"split": "eval", "rules": "original"}),
}


def _same_info(world: dict[str, Any], text: dict[str, Any]) -> None:
    assert world.keys() == text.keys()
    for key, value in text.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(world[key], value) and world[key].dtype == value.dtype, key
        else:
            assert world[key] == value, key


def _closing_move(env: Any) -> int:
    """The move that ends an episode: the gate's report, the refund desk's reply."""
    if isinstance(env, GateMacroEnv):
        return int(env.layout.submit)
    return int(env.layout.index(-1, "reply"))


def _bare_text_env(world: Any, kwargs: dict[str, Any]) -> Any:
    """A text environment of the macro env's settings, with no wrapper around it."""
    return type(world.text_env)(**{key: value for key, value in kwargs.items() if key not in MACRO_ONLY})


def _same_step_on_text(bare: Any, world: Any, info: dict[str, Any], out: tuple[Any, ...] | None) -> None:
    """The move's text action sent to the bare text env: the same reward, ending and log head."""
    _text, *ending, _info = bare.step(info["text_action"])
    if out is not None:
        assert tuple(ending) == tuple(out[1:4]), "the text call's reward or ending differs"
    assert bare.world.ledger.head == world.text_env.world.ledger.head, "the text call's log differs"


def _play_both(env_class: type[Any], kwargs: dict[str, Any], seed: int, render: bool = False) -> int:
    """One seeded episode both ways, compared step by step, and replayed as text on a bare
    text environment; the number of steps played."""
    mode = {"render_mode": "ansi"} if render else {}
    world, text = env_class(**kwargs, **mode), env_class(**kwargs, via_text=True, **mode)
    bare = _bare_text_env(world, kwargs)
    try:
        rng = np.random.default_rng(seed)
        vector, info = world.reset(seed=seed)
        text_vector, text_info = text.reset(seed=seed)
        assert np.array_equal(vector, text_vector)
        _same_info(info, text_info)
        bare.reset(seed=seed)
        _same_step_on_text(bare, world, info, None)  # the opening action
        steps, done = 0, False
        while not done:
            mask = world.action_masks()
            pool = np.arange(len(mask)) if rng.random() < MASKED_SHARE else np.flatnonzero(mask)
            if rng.random() >= CLOSING_SHARE and len(pool) > 1:
                pool = pool[pool != _closing_move(world)]
            move = int(pool[rng.integers(len(pool))])
            out, text_out = world.step(move), text.step(move)
            assert np.array_equal(out[0], text_out[0]), f"vector differs at step {steps}"
            assert out[1:4] == text_out[1:4], f"reward or ending differs at step {steps}"
            _same_info(out[4], text_out[4])
            assert world.text_env.world.ledger.head == text.text_env.world.ledger.head
            _same_step_on_text(bare, world, out[4], out)
            steps, done = steps + 1, out[2] or out[3]
        assert world.text_env.export_log() == text.text_env.export_log() == bare.export_log()
        assert world.render() == text.render()
        return steps
    finally:
        world.close()
        text.close()
        bare.close()


@pytest.mark.parametrize("config", list(CONFIGS))
def test_a_move_gives_the_same_episode_on_the_world_as_through_the_text(config: str) -> None:
    env_class, kwargs = CONFIGS[config]
    steps = [_play_both(env_class, kwargs, seed) for seed in range(EPISODES)]
    assert sum(steps) >= EPISODES * 5 and max(steps) >= 10  # long episodes among them


@pytest.mark.parametrize("env_class", [GateMacroEnv, RefundMacroEnv])
def test_the_transcript_is_the_same_on_the_world_as_through_the_text(env_class: type[Any]) -> None:
    kwargs = {"split": "eval"}
    for seed in range(3):
        _play_both(env_class, kwargs, seed, render=True)


def _one_argument_changed(calls: list[Any]) -> list[Any]:
    """The calls with one string argument of the first call that has one given a space more."""
    changed = [dict(call) for call in calls]
    for call in changed:
        strings = [key for key, value in call.get("arguments", {}).items() if isinstance(value, str)]
        if strings:
            call["arguments"] = {**call["arguments"], strings[0]: call["arguments"][strings[0]] + " "}
            break
    return changed


@pytest.mark.parametrize("env_class", [GateMacroEnv, RefundMacroEnv])
def test_a_move_whose_call_differs_from_its_text_action_is_caught(
    env_class: type[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison is not vacuous: a world path that sends one argument changed (a
    query or a reason with a space more, the text action as it was) fails it."""
    original = TextDeskEnv.step_calls
    monkeypatch.setattr(
        TextDeskEnv,
        "step_calls",
        lambda self, calls, bound=None: original(self, _one_argument_changed(calls)),
    )
    with pytest.raises(AssertionError):
        for seed in range(5):
            _play_both(env_class, {"split": "eval"}, seed)


@pytest.mark.parametrize("env_class", [GateMacroEnv, RefundMacroEnv])
def test_a_move_is_bound_once_per_text_action(env_class: type[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A macro env binds a move's calls the first time it sends their text action and
    keeps the binding (the equivalence tests above hold it to a fresh one): over many
    moves, no more bindings than distinct text actions."""
    from batchgate_gym.envs import macro_env
    from batchgate_gym.kernel import codec, episode

    bound: list[str] = []

    def counting(items: list[Any], tools: Any, max_calls: int) -> Any:
        bound.append(codec.json.dumps(items))
        return codec.bind_calls(items, tools, max_calls)

    monkeypatch.setattr(macro_env, "bind_calls", counting)
    monkeypatch.setattr(episode, "bind_calls", counting)
    env = env_class(split="eval")
    rng = np.random.default_rng(0)
    sent = [env.reset(seed=0)[1]["text_action"]]
    for _ in range(300):
        allowed = np.flatnonzero(env.action_masks())
        *_, terminated, truncated, info = env.step(int(allowed[rng.integers(len(allowed))]))
        sent.append(info["text_action"])
        if terminated or truncated:
            sent.append(env.reset()[1]["text_action"])
    sent = [text for text in sent if text]  # a move with no call binds nothing
    assert len(set(sent)) < len(sent)  # the openings at least repeat
    assert sorted(bound) == sorted(set(sent))


@pytest.mark.parametrize("env_class", [GateMacroEnv, RefundMacroEnv])
def test_via_text_must_be_a_bool(env_class: type[Any]) -> None:
    with pytest.raises(ValueError, match="via_text must be True or False"):
        env_class(split="eval", via_text=1)
