"""Run evaluation jobs on Ray, for users whose evaluations outgrow one machine.

``evaluate(..., backend="ray")`` hands its list of jobs (each a policy, the
environment's arguments and a run of episodes) to :func:`ray_map`, which runs
each job as a Ray task and yields the results in job order. Episodes are fixed
by their reset arguments, not by where they run, so the results are exactly the
local ones. The commands that play many episodes (``report``, ``attacks``,
``team``, ``run-model``) take ``--backend ray`` and ``--ray-address``
(:func:`batchgate_gym.app.shared.add_backend_options`), and say on how many nodes
their episodes ran (:data:`NODES`).

Where Ray runs: if Ray is already initialised in this process, there; otherwise
``ray.init()`` joins the cluster at the address given (``--ray-address``, or the
``RAY_ADDRESS`` environment variable), and starts a local Ray instance when there
is none. Ray stays up for later calls (``ray.shutdown()`` ends it). On a cluster,
every node needs ``batchgate_gym`` installed (or a ``runtime_env`` given to
``ray.init`` before calling ``evaluate``), and the policy must pickle.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

Job = TypeVar("Job")
Result = TypeVar("Result")

BACKENDS = ("local", "ray")
NODES: Counter[str] = Counter()
"""Jobs run per Ray node (its id) by :func:`ray_map` in this process: what a command reports."""


def ensure_ray(address: str | None = None) -> Any:
    """Import Ray and connect to a cluster (``address``, else ``RAY_ADDRESS``) or start a local one."""
    try:
        import ray
    except ImportError as error:  # pragma: no cover - depends on the installation
        raise ImportError("backend='ray' needs Ray: pip install 'batchgate_gym[ray]'") from error
    if not ray.is_initialized():
        address = address or os.environ.get("RAY_ADDRESS") or None
        if address not in (None, "auto", "local"):
            _check_listening(str(address))
        # No dashboard for a local cluster; a remote one keeps Ray's default (None).
        ray.init(address=address, log_to_driver=False, include_dashboard=None if address else False)
    return ray


def _check_listening(address: str) -> None:
    """Fail at once (ConnectionError) where nothing listens at ``HOST:PORT``: Ray itself retries
    for minutes before it gives up on a cluster that is not there."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"a Ray address is HOST:PORT, not {address!r}")
    try:
        with socket.create_connection((host, int(port)), timeout=10):
            pass
    except OSError as exc:
        raise ConnectionError(f"nothing answers at {host}:{port} ({exc.strerror or exc})") from None


def task_count(asked: int) -> int:
    """How many tasks to split episodes into: ``asked`` when more than one, else two per CPU
    of the cluster (so every node gets work)."""
    if asked > 1:
        return asked
    cpus = int(ensure_ray().cluster_resources().get("CPU", 1))
    return max(2, 2 * cpus)


def _located(function: Callable[[Job], Result], job: Job) -> tuple[str, Result]:
    """``function(job)``, with the id of the node that ran it."""
    import ray

    return ray.get_runtime_context().get_node_id(), function(job)


def ray_map(function: Callable[[Job], Result], jobs: Sequence[Job]) -> Iterator[Result]:
    """``function(job)`` for every job as Ray tasks; results in job order (:data:`NODES` counts
    where they ran)."""
    if not jobs:
        return
    ray = ensure_ray()
    # SPREAD: Ray would otherwise keep short tasks on the node that is free first, often one.
    task = ray.remote(_located).options(scheduling_strategy="SPREAD")
    pending = [task.remote(function, job) for job in jobs]
    # Yield in job order (the caller updates progress as each result arrives).
    for reference in pending:
        node, result = ray.get(reference)
        NODES[node] += 1
        yield result
