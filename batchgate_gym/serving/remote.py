"""A served desk behind the two Gymnasium calls the TRL adapter makes, and TRL environments on it.

:class:`RemoteDeskEnv` is an OpenEnv session with a desk server, seen through
``reset(seed=..., options=...)`` and ``step(action)`` as the Gymnasium
environment answers them (the same observation, reward, termination, truncation
and ``info``). :func:`remote_environment_factory` gives
``GRPOTrainer(environment_factory=...)`` the desk's TRL environment of
:mod:`batchgate_gym.llm.trl_env` (the same tools, schemas, reset and reward)
whose every call steps that server over the network: the trainer's rollouts
play in another process, and their rewards are the server's.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .openenv_server import DeskAction, DeskEnvClient


class RemoteDeskEnv:
    """One session with a desk server at ``base_url``, answering ``reset`` and ``step`` as the
    desk's Gymnasium environment does; ``actions`` are the text actions sent since the reset,
    ``opened_seed`` the reset's seed."""

    def __init__(self, base_url: str, timeout_s: float = 300.0) -> None:
        self.client = DeskEnvClient(base_url=base_url, message_timeout_s=timeout_s).sync()
        self.client.connect()
        self.actions: list[str] = []
        self.opened_seed: int | None = None

    @property
    def unwrapped(self) -> RemoteDeskEnv:
        return self

    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        result = self.client.reset(seed=seed, **dict(options or {}))
        self.actions, self.opened_seed = [], seed
        return result.observation.text, {"turn": 0, "calls": 0}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.actions.append(action)
        observation = self.client.step(DeskAction(action=action)).observation
        return (
            observation.text,
            float(observation.reward),
            observation.terminated,
            observation.truncated,
            observation.info,
        )

    def end_unfinished(self, reason: str) -> dict[str, Any]:
        """End the running episode unfinished, on the server, as
        :meth:`~batchgate_gym.envs.text_env.TextDeskEnv.end_unfinished` does; its last ``info``."""
        info: dict[str, Any] = self.client.step(DeskAction(end=reason)).observation.info
        return info

    def export_log(self) -> list[dict[str, Any]]:
        """The ended episode's log, as the server exported it."""
        return list(self.client.state().log or [])

    def close(self) -> None:
        self.client.close()


def remote_environment_factory(desk: str, base_url: str | Sequence[str]) -> Callable[[], Any]:
    """A zero-argument factory of ``desk``'s TRL environment whose calls step the desk served at
    ``base_url`` (``batchgate serve-env --desk DESK``), for ``GRPOTrainer(environment_factory=...)``.
    Given several URLs (servers of the same desk), each environment made takes the next in turn."""
    from batchgate_gym.llm.trl_env import tool_env_class

    local = tool_env_class(desk)
    urls = itertools.cycle([base_url] if isinstance(base_url, str) else list(base_url))

    def __init__(self: Any) -> None:  # the world lives in the server: only the session is made here
        self.env = RemoteDeskEnv(next(urls))
        self.observations, self._started, self._done, self._reward, self._info = [], False, False, 0.0, {}

    return type(f"Remote{local.__name__}", (local,), {"__init__": __init__, "__doc__": local.__doc__})


__all__ = ["RemoteDeskEnv", "remote_environment_factory"]
