"""The speed benchmark of every desk, one module per desk with the desk's name.

A desk names its module by entry point (``DeskSpec.bench``, as
``"batchgate_gym.bench.refund"``); each module has ``run_benchmark(config, log,
clock)``, whose result is a JSON-ready dict, and ``markdown(result)``, its table.
What they share: :mod:`.config` (the size of a run and the gate's targets),
:mod:`.harness` (clocks, medians, core pinning) and :mod:`.measures` (episodes,
steps, resets, memory, vector envs and scaling, measured on the gate, and the reset
times every desk measures alike). ``batchgate bench`` (:mod:`batchgate_gym.app.bench`)
runs the module of the desk it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, cast

from batchgate_gym.desks.registry import DeskSpec, load

from .config import BenchConfig

__all__ = ["BenchConfig", "DeskBench", "bench_of"]


class DeskBench(Protocol):
    """What a desk's benchmark module offers."""

    def run_benchmark(
        self, config: BenchConfig, log: Callable[[str], None] = ..., clock: str = ...
    ) -> dict[str, Any]: ...

    def markdown(self, result: dict[str, Any]) -> str: ...


def bench_of(desk: DeskSpec) -> DeskBench:
    """The benchmark module ``desk`` names (``ValueError`` if it names none)."""
    if desk.bench is None:
        raise ValueError(f"desk {desk.name!r} has no speed benchmark")
    return cast(DeskBench, load(desk.bench))
