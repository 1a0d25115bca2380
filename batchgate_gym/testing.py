"""Hypothesis strategies and a state machine for fuzzing the grader and your own agents.

The public home of every desk's fuzzing helpers; today the batch gate's, defined
in :mod:`batchgate_gym.desks.gate.testing` (see there for what each one draws).
"""

from __future__ import annotations

from .desks.gate.testing import *  # noqa: F403
from .desks.gate.testing import __all__ as __all__
