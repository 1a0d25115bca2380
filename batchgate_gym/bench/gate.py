"""``batchgate bench`` on the gate: how fast the environment is, measured the same way every time.

Speed is a feature here (users run millions of steps), so it is measured, not
guessed: episodes per second of the reference policies through the full text
interface (grading included), steps per second of single tools, reset time for a
built and for a fresh procedural case, memory per live environment, vector-env
throughput, and how the cost grows with rows per batch and batches per case
(:mod:`.measures`), each against its target (:mod:`.config`); :mod:`.render`
writes the tables.

The single-process figures run pinned to one core (where the platform allows it);
vector envs use what they need. The script ``benchmarks/gate_speed.py`` runs exactly this
code and writes the result and its tables to files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from .config import AT_LEAST, TARGETS, BenchConfig
from .harness import machine, one_core, use_clock
from .measures import (
    episodes_per_second,
    memory_in_subprocess,
    reset_times,
    scaling,
    steps_per_second,
    vector_table,
)
from .render import markdown

__all__ = ["check_targets", "markdown", "run_benchmark"]


def run_benchmark(
    config: BenchConfig, log: Callable[[str], None] = lambda _: None, clock: str = "wall"
) -> dict[str, Any]:
    use_clock(clock)
    result: dict[str, Any] = {"machine": machine(), "config": asdict(config), "clock": clock}
    with one_core() as core:
        result["machine"]["pinned_core"] = core
        log("episodes")
        result["episodes"] = {name: episodes_per_second(name, config) for name in ("careful", "naive")}
        log("steps")
        result["steps_per_second"] = steps_per_second(config)
        log("resets")
        result["reset"] = reset_times(config)
        log("scaling")
        result["scaling"] = scaling(config)
    log("memory")
    result["memory"] = memory_in_subprocess(config.memory_envs)
    log("vector envs")
    result["vector"] = vector_table(config)
    result["targets"] = check_targets(result)
    return result


def check_targets(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    big = [p for p in result["scaling"]["rows"] if p["rows_per_batch"] == 100_000]
    measured = {
        "careful_episodes_per_second": result["episodes"]["careful"]["episodes_per_second"],
        "naive_episodes_per_second": result["episodes"]["naive"]["episodes_per_second"],
        "list_batches_steps_per_second": result["steps_per_second"]["list_batches"],
        "reset_built_us": result["reset"]["reset_built_us"],
        "reset_procedural_ms": result["reset"]["reset_procedural_ms"],
        "memory_1000_envs_mb": result["memory"]["projected_1000_envs_mb"],
        "reset_100k_rows_s": round(big[0]["reset_new_ms"] / 1e3, 3) if big else None,
        "reset_and_profile_100k_rows_s": (
            round((big[0]["reset_new_ms"] + big[0]["profile_first_ms"]) / 1e3, 3) if big else None
        ),
    }
    out = {}
    for name, target in TARGETS.items():
        value = measured[name]
        at_least = name in AT_LEAST
        met = None if value is None else (value >= target if at_least else value <= target)
        out[name] = {
            "measured": value,
            "target": target,
            "at_least" if at_least else "at_most": True,
            "met": met,
        }
    return out
