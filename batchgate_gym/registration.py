"""The Gymnasium ids of every desk's environments, registered when the package is imported.

Gymnasium has no plugin discovery, so ``import batchgate_gym`` calls
:func:`register_envs`, which reads ``GYMNASIUM_IDS`` (id -> entry point) from each
desk package (``batchgate_gym/desks/NAME/__init__.py``) and adds the ids to
Gymnasium's registry with *string* entry points and the package's
``MAX_EPISODE_STEPS`` (the steps an episode takes at most with the default
arguments, for ``spec.max_episode_steps`` and Gymnasium's ``TimeLimit``): the
environment code (``batchgate_gym.envs``) is imported only when ``gymnasium.make``
builds one. A new
desk names its ids in its own package and nothing here changes. This is the one
core module that imports Gymnasium; without Gymnasium installed it registers
nothing and the core still works.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from .desks.registry import DEFAULT_DESK


def _desk_packages() -> list[Any]:
    """Every desk's package, the default desk's first, then the others in name order."""
    import batchgate_gym.desks as desks

    names = sorted(module.name for module in pkgutil.iter_modules(desks.__path__) if module.ispkg)
    ordered = sorted(names, key=lambda name: name != DEFAULT_DESK)  # a stable sort: the rest keep name order
    return [importlib.import_module(f"{desks.__name__}.{name}") for name in ordered]


def entry_points() -> dict[str, str]:
    """Every desk's ids and entry points, desks in name order (the default desk's first)."""
    found: dict[str, str] = {}
    for package in _desk_packages():
        found.update(getattr(package, "GYMNASIUM_IDS", {}))
    return found


ENTRY_POINTS: dict[str, str] = entry_points()


def max_episode_steps() -> dict[str, int]:
    """Every desk's ``MAX_EPISODE_STEPS`` (id -> steps with the default arguments), for the spec."""
    found: dict[str, int] = {}
    for package in _desk_packages():
        found.update(getattr(package, "MAX_EPISODE_STEPS", {}))
    return found


def register_envs() -> tuple[str, ...]:
    """Register every id not yet in Gymnasium's registry; safe to call any number of times.

    Returns the ids now registered (none when Gymnasium cannot be imported).
    """
    try:
        import gymnasium
    except ImportError:
        return ()
    steps = max_episode_steps()
    for env_id, entry_point in ENTRY_POINTS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point, max_episode_steps=steps.get(env_id))
    return tuple(ENTRY_POINTS)


def __getattr__(name: str) -> Any:
    # ENV_ID and MACRO_ENV_ID: the default desk's ids, read from its package when asked for.
    if name in ("ENV_ID", "MACRO_ENV_ID"):
        return getattr(importlib.import_module(f"{__package__}.desks.{DEFAULT_DESK}"), name)
    raise AttributeError(name)


__all__ = ["ENTRY_POINTS", "entry_points", "max_episode_steps", "register_envs"]
