"""Version 0 of the refund desk's team environment, under PettingZoo's versioned naming.

``from batchgate_gym.envs.refund import team_v0``, then ``team_v0.env()``,
``team_v0.raw_env()`` or ``team_v0.parallel_env()``. A change that alters how
the game plays, scores or observes gets a new version module; this one stays.
"""

from __future__ import annotations

from .team import env, parallel_env, raw_env

__all__ = ["env", "parallel_env", "raw_env"]
