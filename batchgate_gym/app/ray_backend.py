"""Run evaluation jobs on Ray, for users whose evaluations outgrow one machine.

``evaluate(..., backend="ray")`` hands its list of jobs (each a policy, the
environment's arguments and a run of episodes) to :func:`ray_map`, which runs
each job as a Ray task and yields the results in job order. Episodes are fixed
by their reset arguments, not by where they run, so the results are exactly the
local ones.

Where Ray runs: if Ray is already initialised in this process, there; otherwise
``ray.init()`` joins the cluster named by the ``RAY_ADDRESS`` environment variable
when it is set, and starts a local Ray instance when it is not. Ray stays up for
later calls (``ray.shutdown()`` ends it). On a cluster, every node needs
``batchgate_gym`` installed (or a ``runtime_env`` given to ``ray.init`` before
calling ``evaluate``), and the policy must pickle.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

Job = TypeVar("Job")
Result = TypeVar("Result")


def ensure_ray() -> Any:
    """Import Ray and connect to a cluster (``RAY_ADDRESS``) or start a local one."""
    try:
        import ray
    except ImportError as error:  # pragma: no cover - depends on the installation
        raise ImportError("backend='ray' needs Ray: pip install 'batchgate_gym[ray]'") from error
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS") or None
        # No dashboard for a local cluster; a remote one keeps Ray's default (None).
        ray.init(address=address, log_to_driver=False, include_dashboard=None if address else False)
    return ray


def ray_map(function: Callable[[Job], Result], jobs: Sequence[Job]) -> Iterator[Result]:
    """``function(job)`` for every job as Ray tasks; results in job order."""
    if not jobs:
        return
    ray = ensure_ray()
    task = ray.remote(function)
    pending = [task.remote(job) for job in jobs]
    # Yield in job order (the caller updates progress as each result arrives).
    for reference in pending:
        yield ray.get(reference)
