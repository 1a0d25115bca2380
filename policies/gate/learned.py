"""Text-level policies that act through the macro-action interface.

A network trained on ``BadBatchGateMacro-v0`` picks macro indices from numeric
observations. To compare it with every other policy it must play the text game:
:class:`MacroPolicy` keeps its own :class:`GateMacroTracker`, reads each text
observation into the same vector and mask the training wrapper produced, asks a
chooser for an index and sends the translated tool call. It sees nothing but
observations. Choosers: a trained (or untrained) Stable-Baselines3 model, or a
uniform random pick among the unmasked moves.
"""

from __future__ import annotations

import inspect
import zlib
from collections.abc import Callable
from typing import Any, Protocol, TypeAlias

import numpy as np

from batchgate_gym.envs.gate.macro_codec import GateMacroLayout, GateMacroTracker

Chooser = Callable[[np.ndarray, np.ndarray], int]  # (vector, mask) -> index; may have start(task)


class Predictor(Protocol):
    """A trained network's interface (Stable-Baselines3's): ``predict(vector,
    deterministic=..., [action_masks=...])`` returns ``(action, state)``."""

    def predict(self, observation: np.ndarray, *args: Any, **kwargs: Any) -> tuple[Any, Any]: ...


class TrainedModel(Protocol):
    """A Stable-Baselines3 model: its network is ``.policy``."""

    @property
    def policy(self) -> Predictor: ...


ModelLike: TypeAlias = TrainedModel | Predictor
"""A trained model, or its network alone."""


class MacroPolicy:
    """Play the text game with a macro chooser: opening action, then one move per turn."""

    def __init__(self, choose: Chooser, *, slots: int = 4, name: str = "macro") -> None:
        self.choose = choose
        self.layout = GateMacroLayout(slots)
        self.name = name

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        self.tracker = GateMacroTracker(self.layout)
        self.opened = False
        start = getattr(self.choose, "start", None)
        if start is not None:
            start(observation)

    def act(self, observation: str) -> str:
        if not self.opened:
            self.opened = True
            return self.tracker.opening()
        self.tracker.absorb(observation)
        index = self.choose(self.tracker.vector(), self.tracker.mask())
        return self.tracker.action_text(int(index))


class ModelChooser:
    """A Stable-Baselines3 network's pick (deterministic by default); masked networks
    (MaskablePPO) get the mask. Holds only the network (``model.policy``), not the
    model's training environments, so it pickles to worker processes and Ray."""

    def __init__(self, model: ModelLike, *, deterministic: bool = True) -> None:
        self.network: Predictor = model.policy if hasattr(model, "policy") else model
        self.deterministic = deterministic
        self.masked = "action_masks" in _parameters(self.network.predict)

    def __call__(self, vector: np.ndarray, mask: np.ndarray) -> int:
        extra = {"action_masks": mask} if self.masked else {}
        index, _state = self.network.predict(vector, deterministic=self.deterministic, **extra)
        return int(index)


class RandomChooser:
    """Uniform among unmasked moves. Reseeded from the task text at every episode, so
    an episode's draws do not depend on which episodes ran before it (serial,
    parallel or on Ray)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._rng = np.random.default_rng(seed)

    def start(self, task: str) -> None:
        self._rng = np.random.default_rng([self.seed, zlib.crc32(task.encode())])

    def __call__(self, vector: np.ndarray, mask: np.ndarray) -> int:
        return int(self._rng.choice(np.flatnonzero(mask)))


def learned_policy(model: ModelLike, *, slots: int = 4, name: str = "ppo") -> MacroPolicy:
    return MacroPolicy(ModelChooser(model), slots=slots, name=name)


def random_macro_policy(seed: int = 0, *, slots: int = 4) -> MacroPolicy:
    return MacroPolicy(RandomChooser(seed), slots=slots, name="random")


def _parameters(function: Callable[..., Any]) -> tuple[str, ...]:
    return tuple(inspect.signature(function).parameters)


__all__ = [
    "MacroPolicy",
    "ModelChooser",
    "ModelLike",
    "Predictor",
    "RandomChooser",
    "TrainedModel",
    "learned_policy",
    "random_macro_policy",
]
