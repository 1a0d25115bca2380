"""The Gymnasium ids of the environments, registered when the package is imported.

Gymnasium has no plugin discovery, so ``import batchgate_gym`` calls
:func:`register_envs`, which adds both ids to Gymnasium's registry with *string*
entry points: the environment code (``batchgate_gym.envs``) is imported only when
``gymnasium.make`` builds one. This is the one core module that imports Gymnasium;
without Gymnasium installed it registers nothing and the core still works.
"""

from __future__ import annotations

ENV_ID = "batchgate_gym/BadBatchGate-v0"
MACRO_ENV_ID = "batchgate_gym/BadBatchGateMacro-v0"
ENTRY_POINTS: dict[str, str] = {
    ENV_ID: "batchgate_gym.envs.gate:BatchGateEnv",
    MACRO_ENV_ID: "batchgate_gym.envs.macro:MacroGateEnv",
}


def register_envs() -> tuple[str, ...]:
    """Register every id not yet in Gymnasium's registry; safe to call any number of times.

    Returns the ids now registered (none when Gymnasium cannot be imported).
    """
    try:
        import gymnasium
    except ImportError:
        return ()
    for env_id, entry_point in ENTRY_POINTS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point)
    return tuple(ENTRY_POINTS)


__all__ = ["ENTRY_POINTS", "ENV_ID", "MACRO_ENV_ID", "register_envs"]
