"""Playing policies on a desk's text environment: the loop every layer above the desks uses.

:func:`evaluate` plays one policy over a desk's cases (a split, a file, or procedural
seeds) in this process, in worker processes or as Ray tasks (:mod:`.ray_backend`), and
returns exact results (:class:`EvaluationResult`); :func:`run_policies` plays several on
the same cases and :func:`report_json` gives them the shape ``batchgate report --json``
prints. It stands on the desk registry, the environments and the kernel's text-policy
interface, and is imported by the command line (:mod:`batchgate_gym.app`), the speed
benchmark (:mod:`batchgate_gym.bench`) and the servers (:mod:`batchgate_gym.serving`);
it imports none of them.
"""

from __future__ import annotations

from .compare import report_json, run_policies
from .loop import (
    Aggregate,
    EpisodeResult,
    EvaluationResult,
    PolicyError,
    evaluate,
    policy_name,
    run_episode,
)

__all__ = [
    "Aggregate",
    "EpisodeResult",
    "EvaluationResult",
    "PolicyError",
    "evaluate",
    "policy_name",
    "report_json",
    "run_episode",
    "run_policies",
]
