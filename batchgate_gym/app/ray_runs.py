"""``run-model --backend ray``: a run's rollouts played as Ray tasks.

The run's first rollout is played here, alone, as every run's first request goes out
alone (a bad key or an unknown model stops the run before anything else is asked);
the others are split into tasks, two per CPU of the cluster, each playing its
rollouts with its own client, at most ``--concurrency`` at a time. Rows come back to
this process, which writes them to the out file as each task ends and signs them
with the run's key: the key never leaves the machine that holds it. A rollout is
fixed by its case and its reset seed, not by where it runs, so the rows are those
a local run writes, but for the wall-clock fields.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from batchgate_gym.evaluation.ray_backend import ray_map, task_count
from batchgate_gym.llm.runner import RowProvenance, RunConfig, RunStopped, play_here


def _play_chunk(job: tuple[RunConfig, list[tuple[int, int]], RowProvenance]) -> list[dict[str, Any]]:
    """One Ray task: its rollouts, played with a client of its own; their rows."""
    config, pairs, provenance = job
    rows: list[dict[str, Any]] = []
    asyncio.run(play_here(config, pairs, provenance, rows.append))
    return rows


async def play_on_ray(
    config: RunConfig,
    pairs: Sequence[tuple[int, int]],
    provenance: RowProvenance,
    write: Callable[[dict[str, Any]], None],
) -> None:
    """Play ``pairs`` as Ray tasks (see the module text), ``write`` each row here."""
    if not pairs:
        return
    await play_here(config, pairs[:1], provenance, write)  # alone: a run that cannot work stops here
    rest = list(pairs[1:])
    unsigned = dataclasses.replace(provenance, signer=None)  # the key stays in this process
    size = max(1, -(-len(rest) // task_count(1)))
    jobs = [(config, rest[i : i + size], unsigned) for i in range(0, len(rest), size)]
    loop = asyncio.get_running_loop()
    chunks = ray_map(_play_chunk, jobs)
    while True:
        try:
            rows = await loop.run_in_executor(None, next, chunks, None)
        except Exception as exc:  # a task's RunStopped comes back wrapped by Ray
            cause = getattr(exc, "cause", None)
            if isinstance(cause, RunStopped):
                raise cause from None
            raise
        if rows is None:
            return
        for row in rows:
            write(row)


__all__ = ["play_on_ray"]
