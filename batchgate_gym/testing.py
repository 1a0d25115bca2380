"""Hypothesis strategies and a state machine for fuzzing the grader and your own agents.

The public home of every desk's fuzzing helpers. The desk-neutral ones, defined in
:mod:`batchgate_gym.kernel.testing`, are here by name (``tampered_logs``,
``rechained``, ``changed_value``, ``register_profiles``, ``EpisodeMachine``, ...), and
so are the batch gate's, defined in :mod:`batchgate_gym.desks.gate.testing`
(``cases``, ``episodes``, ``GateMachine``, ...); each other desk's are a submodule of
the same names: ``batchgate_gym.testing.refund`` is
:mod:`batchgate_gym.desks.refund.testing`, ``batchgate_gym.testing.analyst`` is
:mod:`batchgate_gym.desks.analyst.testing`.
"""

from __future__ import annotations

from .desks.analyst import testing as analyst
from .desks.gate.testing import *  # noqa: F403
from .desks.gate.testing import __all__ as _gate_names
from .desks.refund import testing as refund
from .kernel.testing import *  # noqa: F403
from .kernel.testing import __all__ as _neutral_names

__all__ = [*_neutral_names, *_gate_names, "analyst", "refund"]
