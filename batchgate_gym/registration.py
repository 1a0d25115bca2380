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

from .desks import gate
from .desks.gate import ENV_ID, MACRO_ENV_ID


def entry_points() -> dict[str, str]:
    """Every desk's ids and entry points, desks in name order (the gate's first)."""
    import batchgate_gym.desks as desks

    found: dict[str, str] = dict(gate.GYMNASIUM_IDS)
    for module in sorted(pkgutil.iter_modules(desks.__path__), key=lambda m: m.name):
        if module.ispkg:
            package = importlib.import_module(f"{desks.__name__}.{module.name}")
            found.update(getattr(package, "GYMNASIUM_IDS", {}))
    return found


ENTRY_POINTS: dict[str, str] = entry_points()


def max_episode_steps() -> dict[str, int]:
    """Every desk's ``MAX_EPISODE_STEPS`` (id -> steps with the default arguments), for the spec."""
    import batchgate_gym.desks as desks

    found: dict[str, int] = {}
    for module in pkgutil.iter_modules(desks.__path__):
        if module.ispkg:
            package = importlib.import_module(f"{desks.__name__}.{module.name}")
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


__all__ = ["ENTRY_POINTS", "ENV_ID", "MACRO_ENV_ID", "entry_points", "max_episode_steps", "register_envs"]
