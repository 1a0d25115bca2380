"""The macro-action environment every desk shares: a text environment, a tracker, the loop between them.

A desk's macro environment (its package's ``macro`` module: :mod:`.gate.macro`,
:mod:`.refund.macro`) offers standard RL libraries a ``Discrete`` move and a ``Box``
observation over a text environment. The desk supplies a tracker that turns moves
into text actions and text observations into numbers; this base class owns the
loop: reset the text environment, send the tracker's opening, then one text action
per move, passing the text environment's reward, termination and info through
unchanged and adding the mask.
"""

from __future__ import annotations

from typing import Any, Protocol

import gymnasium as gym
import numpy as np

from batchgate_gym.kernel.episode import MAX_OBSERVATION_CHARS, EpisodeLimits
from batchgate_gym.kernel.plain import as_int, short_repr

TEXT_OBSERVATION_CHARS = EpisodeLimits().max_observation_chars  # the text environments' default


class MacroTracking(Protocol):
    """A desk's translation between macro moves and text (its ``*Tracker`` class)."""

    def opening(self) -> str: ...

    def absorb(self, observation: str) -> None: ...

    def vector(self) -> np.ndarray: ...

    def mask(self) -> np.ndarray: ...

    def action_text(self, index: int) -> str: ...


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


class TextMacroEnv(gym.Env[np.ndarray, np.int64]):
    """The shared loop. A subclass sets ``text_env``, ``layout``, both spaces and
    ``render_mode`` in its ``__init__`` and makes each episode's tracker in
    :meth:`new_tracker` from the reset observation (the task text)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}
    text_env: Any
    tracker: MacroTracking
    _mask: np.ndarray | None = None  # the tracker's mask since the last move or reset

    def new_tracker(self, task: str) -> MacroTracking:
        raise NotImplementedError

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        task, _info = self.text_env.reset(seed=seed, options=options)
        self.tracker = self.new_tracker(task)
        opening = self.tracker.opening()
        text, _reward, _terminated, _truncated, info = self.text_env.step(opening)
        self.tracker.absorb(text)
        return self.tracker.vector(), self._info(info, opening)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self.action_space.contains(action):
            # Gymnasium's own rule for a move: an int (or numpy integer) in the space,
            # never a float or string rounded or parsed into one.
            raise ValueError(f"action {short_repr(action)} is not in the action space {self.action_space}")
        text_action = self.tracker.action_text(int(action))
        text, reward, terminated, truncated, info = self.text_env.step(text_action)
        self.tracker.absorb(text)
        return self.tracker.vector(), reward, terminated, truncated, self._info(info, text_action)

    def _info(self, info: dict[str, Any], text_action: str) -> dict[str, Any]:
        # The mask is worked out once per move: masked samplers ask for it again
        # (``action_masks``) before the next move, when nothing has changed.
        self._mask = self.tracker.mask()
        return {**info, "action_mask": self._mask.copy(), "text_action": text_action}

    def action_masks(self) -> np.ndarray:
        """The moves allowed now (a new array each call: callers may write to it)."""
        if self._mask is None:  # before the first reset
            return self.tracker.mask()
        return self._mask.copy()

    def render(self) -> str | None:
        rendered: str | None = self.text_env.render()
        return rendered

    def close(self) -> None:
        self.text_env.close()
        super().close()


__all__ = ["TEXT_OBSERVATION_CHARS", "MacroTracking", "TextMacroEnv", "check_whole_observations"]
