"""``batchgate bench --desk refund``: the refund desk's speed, measured like the gate's.

Episodes per second of careful and naive on our eval split through the full text
interface (each graded, as ``evaluate`` plays it), steps per second of one cheap
call (``lookup_order``), and the time of a reset to a built case and to a fresh
procedural one. Every figure is a median over ``config.repeats`` runs, pinned to
one core where the platform allows it; the sizes come from the gate's
:class:`~.config.BenchConfig` (``episodes``, ``steps``,
``resets``, ``procedural_resets``, ``repeats``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from batchgate_gym.desks.registry import get
from batchgate_gym.evaluation import run_episode
from batchgate_gym.tables import markdown_table

from .config import BenchConfig
from .harness import machine, median_rate, one_core, timed_runs, use_clock
from .measures import reset_times

_SIZES = ("repeats", "episodes", "steps", "resets", "procedural_resets")
"""The fields of the benchmark's config the refund desk uses (the rest are the gate's)."""


def run_benchmark(
    config: BenchConfig, log: Callable[[str], None] = lambda _: None, clock: str = "wall"
) -> dict[str, Any]:
    use_clock(clock)
    result: dict[str, Any] = {
        "desk": "refund",
        "machine": machine(),
        "config": {name: getattr(config, name) for name in _SIZES},
        "clock": clock,
    }
    with one_core() as core:
        result["machine"]["pinned_core"] = core
        log("episodes")
        result["episodes"] = {name: _episodes_per_second(name, config) for name in ("careful", "naive")}
        log("steps")
        result["steps_per_second"] = {"lookup_order": _lookup_steps_per_second(config)}
        log("resets")
        result["reset"] = _reset_times(config)
    return result


def markdown(result: dict[str, Any]) -> str:
    episodes, reset = result["episodes"], result["reset"]
    rows = [
        (
            "careful, episodes/s (eval split, text interface, graded)",
            f"{episodes['careful']['episodes_per_second']:,.0f}",
        ),
        ("naive, episodes/s", f"{episodes['naive']['episodes_per_second']:,.0f}"),
        ("lookup_order, steps/s", f"{result['steps_per_second']['lookup_order']:,.0f}"),
        ("reset, built case (µs)", f"{reset['reset_built_us']:,.1f}"),
        ("reset, fresh procedural case (ms)", f"{reset['reset_procedural_ms']:,.3f}"),
    ]
    return markdown_table(["measure (median)", "value"], rows)


def _episodes_per_second(name: str, config: BenchConfig) -> dict[str, Any]:
    desk = get("refund")
    env = desk.make_env("eval")
    policy = desk.policies.reference_policies[name]()
    n_cases = len(env.source)

    def loop(count: int) -> int:
        calls = 0
        for index in range(count):
            reset = {"options": {"case_index": index % n_cases}}
            calls += run_episode(env, policy, index, reset, desk).calls
        return calls

    calls = loop(n_cases)  # builds every case once; counts the calls of one pass
    runs = timed_runs(lambda: loop(config.episodes), config.repeats)
    env.close()
    rate = median_rate(runs, config.episodes)
    return {
        "episodes_per_second": round(rate, 1),
        "ms_per_episode": round(1000 / rate, 4),
        "calls_per_episode": round(calls / n_cases, 2),
    }


def _lookup_steps_per_second(config: BenchConfig) -> float:
    env = get("refund").make_env("eval", max_turns=config.steps + 1)  # no run reaches the turn limit
    env.reset(seed=0, options={"case_index": 0})
    step = f'lookup_order("{env.unwrapped.world.case.order.order_id}")'

    def run() -> None:
        env.reset(options={"case_index": 0})  # a fresh log each run
        for _ in range(config.steps):
            env.step(step)

    rate = median_rate(timed_runs(run, config.repeats), config.steps)
    env.close()
    return round(rate, 1)


def _reset_times(config: BenchConfig) -> dict[str, float]:
    desk = get("refund")
    return reset_times(config, make_fixed=lambda: desk.make_env("eval"), make_fresh=desk.make_env)
