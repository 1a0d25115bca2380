"""The macro-action environment every desk shares: a text environment, a tracker, the loop between them.

A desk's macro environment (its package's ``macro`` module: :mod:`.gate.macro`,
:mod:`.refund.macro`) offers standard RL libraries a ``Discrete`` move and a ``Box``
observation over a text environment. The desk supplies a tracker that turns moves
into tool calls and their results into numbers; this base class owns the loop:
reset the text environment, send the tracker's opening, then one move's calls per
step, passing the text environment's reward, termination and info through
unchanged and adding the mask. The calls go to the desk's tools directly, or, with
``via_text``, as the text action a language agent would write: the same episode
either way, the first without writing and parsing the text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import gymnasium as gym
import numpy as np

from batchgate_gym.kernel.codec import MAX_ACTION_CHARS, ActionError, ToolCall, bind_calls
from batchgate_gym.kernel.episode import MAX_OBSERVATION_CHARS, EpisodeLimits
from batchgate_gym.kernel.plain import as_int, short_repr
from batchgate_gym.kernel.text_policy import ToolCallDict, action

from .text_env import StepBudgetSpec

TEXT_OBSERVATION_CHARS = EpisodeLimits().max_observation_chars  # the text environments' default


class MacroTracking(Protocol):
    """A desk's translation between macro moves and tool calls (its ``*Tracker`` class)."""

    def opening_calls(self) -> list[ToolCallDict]: ...

    def move_calls(self, index: int) -> list[ToolCallDict]: ...

    def move_action(self, index: int) -> tuple[list[ToolCallDict], str]: ...

    def record(self, answered: Sequence[tuple[str, Mapping[str, Any]]], turn: int | None = None) -> None: ...

    def absorb(self, observation: str) -> None: ...

    def vector(self) -> np.ndarray: ...

    def mask(self) -> np.ndarray: ...


_PLAIN_INTS = (int, np.int64)
_BINDINGS_KEPT = 4096  # text actions whose bound calls an environment keeps


def check_whole_observations(text_kwargs: dict[str, Any]) -> None:
    """A wrapper parses whole text observations: a cut one would break it, so the text
    environment's ``max_observation_chars`` may not go below its default (``None``)."""
    value = text_kwargs.get("max_observation_chars")
    if value is None:
        return
    number = as_int(value)
    if number is None or not TEXT_OBSERVATION_CHARS <= number <= MAX_OBSERVATION_CHARS:
        raise ValueError(
            f"max_observation_chars must be an int in {TEXT_OBSERVATION_CHARS:,}..{MAX_OBSERVATION_CHARS:,},"
            f" not {short_repr(value)}"
        )


class TextMacroEnv(StepBudgetSpec, gym.Env[np.ndarray, np.int64]):
    """The shared loop. A subclass sets ``text_env``, ``layout``, both spaces,
    ``render_mode`` and ``via_text`` in its ``__init__`` and makes each episode's
    tracker in :meth:`new_tracker` from the reset observation (the task text).

    A move's calls go to the text environment's :meth:`~.text_env.TextDeskEnv.step_calls`,
    the world's tools called directly, and the tracker reads their results as they
    are. With ``via_text`` they go as the text action a language agent would write
    (:meth:`~.text_env.TextDeskEnv.step`), and the tracker reads the text observation:
    the same episode, the same log, rewards, vectors and ``info``, at the cost of
    writing and parsing the text both ways. A move with no call (on an empty slot)
    is always sent as the empty text action, which the text environment refuses.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}
    action_space: gym.spaces.Discrete
    text_env: Any
    tracker: MacroTracking
    via_text: bool = False
    _mask: np.ndarray | None = None  # the tracker's mask since the last move or reset
    _bound_over: Any = None  # the tools the kept bindings were made over
    _bindings: dict[str, list[ToolCall]]  # a move's text action -> its calls, bound

    def new_tracker(self, task: str) -> MacroTracking:
        raise NotImplementedError

    @property
    def episode_steps(self) -> int:
        """The most moves an episode takes: the turn limit, less the opening's turn."""
        return int(self.text_env.limits.max_turns) - 1

    def check_opening_turn(self) -> None:
        """The opening action takes the first turn: a turn limit below 2 (given, or the
        desk's) leaves no move, and the text environment just built is closed again."""
        max_turns = self.text_env.limits.max_turns
        if max_turns < 2:
            self.text_env.close()
            raise ValueError(
                f"max_turns must be at least 2 for macro moves (the opening action takes one), not {max_turns}"
            )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        task, opened = self.text_env.reset(seed=seed, options=options)
        self.tracker = self.new_tracker(task)
        calls = self.tracker.opening_calls()
        *_ended, info, text_action = self._send(calls, text_action_of(calls))
        # The text reset's case fields (case_id, family, split or seed), then the opening's turn and calls.
        return self.tracker.vector(), self._info({**opened, **info}, text_action)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not (type(action) in _PLAIN_INTS and 0 <= action < self.action_space.n) and not (
            self.action_space.contains(action)
        ):
            # Gymnasium's own rule for a move: an int (or numpy integer) in the space,
            # never a float or string rounded or parsed into one. (A plain int or a NumPy
            # int64 in range, what samplers give, is in it without asking the space.)
            raise ValueError(f"action {short_repr(action)} is not in the action space {self.action_space}")
        reward, terminated, truncated, info, text_action = self._send(*self.tracker.move_action(int(action)))
        return self.tracker.vector(), reward, terminated, truncated, self._info(info, text_action)

    def _send(
        self, calls: list[ToolCallDict], text_action: str
    ) -> tuple[float, bool, bool, dict[str, Any], str]:
        """One move's calls (and the text action they make) to the text environment, their
        answers to the tracker; the step's reward, termination, truncation, ``info`` and
        text action."""
        # An action too long for the text environment's parser goes as text, to be refused as such.
        if calls and not self.via_text and len(text_action) <= MAX_ACTION_CHARS:
            outcome, reward, info = self.text_env.step_calls(calls, self._bound(calls, text_action))
            self.tracker.record([(call.name, result) for call, result in outcome.results], info["turn"])
            terminated, truncated = outcome.terminated, outcome.truncated
        else:
            text, reward, terminated, truncated, info = self.text_env.step(text_action)
            self.tracker.absorb(text)
        return reward, terminated, truncated, info, text_action

    def _bound(self, calls: list[ToolCallDict], text_action: str) -> list[ToolCall] | None:
        """The move's calls bound over the text environment's tools, bound once per text
        action and kept: a binding is a function of the calls (which their JSON text
        names), the tools and the call cap alone, and the world's handlers take the
        arguments as keywords, never changing a call. ``None`` for calls that do not
        bind: the step binds them again and is refused as the text environment refuses
        them."""
        tools = self.text_env.episode.world.tools
        if tools is not self._bound_over:
            self._bindings, self._bound_over = {}, tools
        bound = self._bindings.get(text_action)
        if bound is None:
            try:
                bound = bind_calls(calls, tools, self.text_env.limits.max_calls_per_step)
            except ActionError:
                return None
            if len(self._bindings) >= _BINDINGS_KEPT:
                self._bindings.clear()
            self._bindings[text_action] = bound
        return bound

    def _info(self, info: dict[str, Any], text_action: str) -> dict[str, Any]:
        # The mask is worked out once per move: masked samplers ask for it again
        # (``action_masks``) before the next move, when nothing has changed.
        self._mask = self.tracker.mask()
        info["action_mask"] = self._mask.copy()
        info["text_action"] = text_action
        return info

    def action_masks(self) -> np.ndarray:
        """The moves allowed now (a new array each call: callers may write to it)."""
        if self._mask is None:  # before the first reset
            return self.tracker.mask()
        return self._mask.copy()

    def render(self) -> Any:  # str or None, as the text environment's
        rendered: str | None = self.text_env.render()
        return rendered

    def close(self) -> None:
        self.text_env.close()
        super().close()


def text_action_of(calls: list[ToolCallDict]) -> str:
    """The text action a move's calls make (``""`` for none): what a language agent
    would send for the move."""
    return action(*calls) if calls else ""


__all__ = [
    "TEXT_OBSERVATION_CHARS",
    "MacroTracking",
    "TextMacroEnv",
    "check_whole_observations",
    "text_action_of",
]
