"""``batchgate bench --desk analyst``: each store's speed, measured the same way every time.

Per store (and for the level-4 pair ``sqlite+lake``): careful's mean reward and
episodes per second over the marketplace questions (levels 1 to 6) eval asks in
that store (for the optional ``chdb`` store, when its extra is installed: the chdb
split's, the ones eval asks in ``duckdb``), through the full text interface, each
graded, evidence re-run (level 7's TPC-H is timed apart); the median time to open
the store over a dataset already on disk (and, for DuckDB, opened once in the
process); the median latency of one join query; and the median time of a fresh
procedural reset asking in the store (a case seed the process has not built: the
question, its dataset and the world's reset). Medians over ``config.repeats`` runs,
pinned to one core where the platform allows it.
"""

from __future__ import annotations

import importlib.util
import statistics
import time
from collections.abc import Callable
from typing import Any

from batchgate_gym.desks.registry import get
from batchgate_gym.evaluation import run_episode
from batchgate_gym.tables import markdown_table

from .config import BenchConfig
from .harness import machine, median_rate, one_core, seconds, timed_runs, use_clock

LATENCY_QUERY = (
    "SELECT count(*) AS n, sum(i.price) AS revenue FROM order_items i "
    "JOIN orders o ON o.order_id = i.order_id WHERE o.status = 'delivered'"
)
LATENCY_RUNS = 30
FRESH_SEEDS = 1_000_000  # case seeds from here on are built for the benchmark alone (per store)
GROUPS = ("sqlite", "duckdb", "lake", "files", "sqlite+lake")
OPTIONAL_GROUPS = ("chdb",)
MARKET_LEVELS = (
    7  # levels below this ask about the marketplace; level 7 (TPC-H) is timed by benchmarks/analyst_tpch.py
)


def groups() -> tuple[str, ...]:
    """The groups measured: the optional stores only where their extra is installed."""
    return GROUPS + tuple(g for g in OPTIONAL_GROUPS if importlib.util.find_spec(g) is not None)


def bench_cases(group: str) -> list[Any]:
    from batchgate_gym.desks.analyst.sources import split_cases

    cases = split_cases(group) if group in OPTIONAL_GROUPS else split_cases("eval")
    return [case for case in cases if case.store == group and case.level < MARKET_LEVELS]


def run_benchmark(
    config: BenchConfig, log: Callable[[str], None] = lambda _: None, clock: str = "wall"
) -> dict[str, Any]:
    use_clock(clock)
    result: dict[str, Any] = {
        "desk": "analyst",
        "machine": machine(),
        "config": {"repeats": config.repeats},
        "clock": clock,
        "stores": {},
    }
    with one_core() as core:
        result["machine"]["pinned_core"] = core
        for group in groups():
            log(group)
            result["stores"][group] = _measure(group, config.repeats)
    return result


def markdown(result: dict[str, Any]) -> str:
    rows = [
        (
            group,
            str(m["cases"]),
            f"{m['careful_reward']:.4f}",
            f"{m['episodes_per_second']:,.1f}",
            f"{m['open_ms']:,.2f}",
            f"{m['query_ms']:,.2f}",
            f"{m['procedural_reset_ms']:,.1f}",
        )
        for group, m in result["stores"].items()
    ]
    head = [
        "store",
        "eval cases",
        "careful reward",
        "careful episodes/s",
        "open store (ms)",
        "join query (ms)",
        "fresh procedural reset (ms)",
    ]
    return markdown_table(head, rows)


def _measure(group: str, repeats: int) -> dict[str, Any]:
    from batchgate_gym.desks.analyst.engines.stores import open_store
    from batchgate_gym.desks.analyst.world import visible_tables

    desk = get("analyst")  # the environment and the policy come through the registry
    cases = bench_cases(group)
    env = desk.make_env(cases)
    policy = desk.policies.reference_policies["careful"]()
    rewards: list[float] = []

    def loop() -> None:
        rewards.clear()
        for index in range(len(cases)):
            reset = {"seed": index, "options": {"case_index": index}}
            rewards.append(run_episode(env, policy, index, reset, desk).reward)

    runs = timed_runs(loop, repeats)
    env.close()
    first = cases[0]
    name = first.stores[0]

    def opened() -> float:
        start = time.perf_counter()
        store = open_store(name, first.data, visible_tables(first, name))
        took = time.perf_counter() - start
        store.close()
        return took

    store = open_store(name, first.data, visible_tables(first, name))
    store.run(LATENCY_QUERY)
    latencies = []
    for _ in range(LATENCY_RUNS):
        start = time.perf_counter()
        store.run(LATENCY_QUERY)
        latencies.append(time.perf_counter() - start)
    store.close()
    return {
        "cases": len(cases),
        "careful_reward": round(sum(rewards) / len(rewards), 4),
        "episodes_per_second": round(median_rate(runs, len(cases)), 2),
        "open_ms": round(1000 * statistics.median(opened() for _ in range(max(3, repeats))), 3),
        "query_ms": round(1000 * statistics.median(latencies), 3),
        "procedural_reset_ms": round(1000 * _procedural_reset(desk, group, max(5, repeats)), 3),
    }


def _procedural_reset(desk: Any, store: str, resets: int) -> float:
    """The median seconds of a reset to a procedural case asking in ``store`` (the reset option
    ``store``; the level-4 pair is level 4's), each a seed no earlier reset of the process
    built (after one to open the environment), on the bench's clock."""
    env = desk.make_env(None)
    asks = {"level": 4} if "+" in store else {"store": store}
    seeds = iter(range(FRESH_SEEDS, FRESH_SEEDS + resets + 1))
    env.reset(seed=0, options={**asks, "case_seed": next(seeds)})
    took = [seconds(lambda: env.reset(options={**asks, "case_seed": next(seeds)})) for _ in range(resets)]
    env.close()
    return statistics.median(took)
