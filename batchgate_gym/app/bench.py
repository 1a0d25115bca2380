"""``batchgate bench``: how fast the environment is, measured the same way every time.

Speed is a feature here (users run millions of steps), so it is measured, not
guessed: episodes per second of the reference policies through the full text
interface (grading included), steps per second of single tools, reset time for a
built and for a fresh procedural case, memory per live environment, vector-env
throughput, and how the cost grows with rows per batch and batches per case.

Every figure is a median over ``repeats`` runs. The single-process figures run
pinned to one core (where the platform allows it); vector envs use what they
need. ``--json`` prints the full result; otherwise a Markdown table. The script
``benchmarks/speed.py`` runs exactly this code and writes both to files.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

from .tables import markdown_table

TARGETS = {
    "careful_episodes_per_second": 2000.0,  # at least
    "reset_built_us": 50.0,  # at most
    "reset_procedural_ms": 1.0,  # at most
    "memory_1000_envs_mb": 200.0,  # at most
    "reset_and_profile_100k_rows_s": 1.0,  # at most ("well under a second")
}


@dataclass(frozen=True)
class BenchConfig:
    """How much to measure. ``quick()`` is a smoke-test size, not a measurement."""

    repeats: int = 7
    episodes: int = 320  # per repeat, cycling over the eval split
    steps: int = 2000  # per repeat, for single-tool steps
    resets: int = 2000  # per repeat, built case
    procedural_resets: int = 200  # per repeat, fresh procedural cases
    memory_envs: int = 1000
    vector_sizes: tuple[int, ...] = (1, 2, 4, 8)
    vector_steps: int = 300  # vector steps per repeat
    rows: tuple[int, ...] = (10, 100, 1_000, 10_000, 100_000)
    batches: tuple[int, ...] = (2, 4, 8, 12)
    scaling_repeats: int = 3

    @classmethod
    def quick(cls) -> BenchConfig:
        return cls(
            repeats=2,
            episodes=16,
            steps=50,
            resets=100,
            procedural_resets=10,
            memory_envs=20,
            vector_sizes=(1, 2),
            vector_steps=20,
            rows=(10, 100),
            batches=(2, 4),
            scaling_repeats=1,
        )


def median_rate(runs: Sequence[float], count: int) -> float:
    """Per-second rate from the median duration of runs of ``count`` items each."""
    return count / statistics.median(runs)


CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = CLOCKS["wall"]


def use_clock(name: str) -> None:
    """``wall`` (default) or ``cpu``: this process's CPU time, steadier on a busy machine."""
    global _clock
    _clock = CLOCKS[name]


def timed_runs(
    function: Callable[[], Any], repeats: int, clock: Callable[[], float] | None = None
) -> list[float]:
    """Seconds of ``repeats`` calls of ``function`` (after one warm-up call)."""
    clock = clock or _clock
    function()
    out = []
    for _ in range(repeats):
        start = clock()
        function()
        out.append(clock() - start)
    return out


@contextmanager
def one_core() -> Iterator[int | None]:
    """Pin this process to one core while measuring; yields the core or None."""
    getter = getattr(os, "sched_getaffinity", None)
    if getter is None:
        yield None
        return
    before = getter(0)
    core = max(before)
    os.sched_setaffinity(0, {core})
    try:
        yield core
    finally:
        os.sched_setaffinity(0, before)


# -- episodes and steps -----------------------------------------------------------------


def eval_env(**kwargs: Any) -> Any:
    from batchgate_gym.envs import BatchGateEnv

    return BatchGateEnv(split="eval", **kwargs)


def episode_loop(env: Any, policy: Any, count: int, first: int = 0) -> int:
    """Run ``count`` episodes over the env's fixed cases, in order; return calls made."""
    from .evaluate import run_episode

    n_cases = len(env.source)
    calls = 0
    for index in range(first, first + count):
        calls += run_episode(env, policy, index, {"options": {"case_index": index % n_cases}}).calls
    return calls


def episodes_per_second(policy_name: str, config: BenchConfig) -> dict[str, Any]:
    from batchgate_gym.policies import REFERENCE_POLICIES

    env = eval_env()
    policy = REFERENCE_POLICIES[policy_name]()
    env.reset(seed=0)
    episode_loop(env, policy, len(env.source))  # builds every case once
    runs = timed_runs(lambda: episode_loop(env, policy, config.episodes), config.repeats)
    calls = episode_loop(env, policy, len(env.source))
    env.close()
    rate = median_rate(runs, config.episodes)
    return {
        "episodes_per_second": round(rate, 1),
        "ms_per_episode": round(1000 / rate, 4),
        "calls_per_episode": round(calls / len(env.source), 2),
    }


def step_actions(env: Any) -> dict[str, str]:
    """One cheap, one profiling and one typical SQL action for the env's current case."""
    case = env.world.case
    orders = next((b for b in case.batches if b.table == "orders"), case.batches[0])
    column = "status" if orders.table == "orders" else "country"
    return {
        "list_batches": "list_batches()",
        "profile_batch": f'profile_batch("{orders.batch_id}")',
        "run_sql": f'run_sql("SELECT {column}, COUNT(*) FROM {orders.staging_table} GROUP BY {column}")',
    }


def steps_per_second(config: BenchConfig) -> dict[str, float]:
    env = eval_env(max_turns=config.steps + 1)  # no run reaches the turn limit
    env.reset(seed=0, options={"case_index": 0})
    out = {}
    for name, action in step_actions(env).items():

        def run(action: str = action) -> None:
            env.reset(options={"case_index": 0})  # a fresh log each run
            for _ in range(config.steps):
                env.step(action)

        out[name] = round(median_rate(timed_runs(run, config.repeats), config.steps), 1)
    env.close()
    return out


def reset_times(config: BenchConfig) -> dict[str, float]:
    from batchgate_gym.envs import BatchGateEnv

    env = eval_env()
    env.reset(seed=0)
    n_cases = len(env.source)
    for index in range(n_cases):
        env.reset(options={"case_index": index})

    def built() -> None:
        for index in range(config.resets):
            env.reset(options={"case_index": index % n_cases})

    built_runs = timed_runs(built, config.repeats)
    procedural = BatchGateEnv()
    seeds = iter(range(10**9))  # every reset draws a case never built before

    def fresh() -> None:
        for _ in range(config.procedural_resets):
            procedural.reset(seed=next(seeds))

    fresh_runs = timed_runs(fresh, config.repeats)
    env.close()
    procedural.close()
    return {
        "reset_built_us": round(1e6 / median_rate(built_runs, config.resets), 2),
        "reset_procedural_ms": round(1e3 / median_rate(fresh_runs, config.procedural_resets), 4),
    }


# -- memory -------------------------------------------------------------------------------


def rss_bytes() -> int:
    """Resident set size of this process, from /proc where there is one."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover - not Linux
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def live_env_memory(count: int) -> dict[str, float]:
    """Bytes added by ``count`` envs, each reset on an eval case (run in a fresh process)."""
    envs = [eval_env()]
    envs[0].reset(seed=0)
    n_cases = len(envs[0].source)
    for index in range(n_cases):  # cases built once: the shared part is not per env
        envs[0].reset(options={"case_index": index})
    before = rss_bytes()
    for index in range(count):
        env = eval_env()
        env.reset(seed=index, options={"case_index": index % n_cases})
        envs.append(env)
    added = rss_bytes() - before
    return {
        "envs": count,
        "added_mb": round(added / 2**20, 2),
        "kb_per_env": round(added / count / 1024, 2),
        "projected_1000_envs_mb": round(added / count * 1000 / 2**20, 2),
    }


def memory_in_subprocess(count: int) -> dict[str, float]:
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(live_env_memory, (count,))


# -- vector envs --------------------------------------------------------------------------


def vector_throughput(kind: str, size: int, config: BenchConfig) -> dict[str, float]:
    """Steps and episodes per second of careful agents driving a vector env."""
    import gymnasium as gym

    from batchgate_gym.policies import CarefulPolicy

    vector_class = gym.vector.SyncVectorEnv if kind == "sync" else gym.vector.AsyncVectorEnv
    vec = vector_class([eval_env] * size)
    policies = [CarefulPolicy() for _ in range(size)]
    observations, _ = vec.reset(seed=0)
    state = {"obs": tuple(observations), "pending": [False] * size, "episodes": 0}
    for policy, observation in zip(policies, state["obs"], strict=True):
        policy.reset(observation, {})

    def run() -> None:
        for _ in range(config.vector_steps):
            vector_step(vec, policies, state)

    start_episodes = state["episodes"]
    runs = timed_runs(run, config.repeats, CLOCKS["wall"])  # workers' time counts too
    episodes = (state["episodes"] - start_episodes) / (config.repeats + 1)
    vec.close()
    median = statistics.median(runs)
    return {
        "steps_per_second": round(config.vector_steps * size / median, 1),
        "episodes_per_second": round(episodes / median, 1),
    }


_IGNORED = "list_batches()"  # sent to an env that resets on this step; it never runs


def vector_step(vec: Any, policies: Sequence[Any], state: dict[str, Any]) -> None:
    """One vector step under Gymnasium's next-step autoreset.

    An env that ended on the previous step resets on this one (its action is
    ignored) and returns a fresh task, which its policy then starts from.
    """
    pending = state["pending"]
    actions = tuple(
        _IGNORED if pending[i] else policy.act(state["obs"][i]) for i, policy in enumerate(policies)
    )
    observations, _, terminated, truncated, _ = vec.step(actions)
    state["obs"] = tuple(observations)
    for i, policy in enumerate(policies):
        if pending[i]:
            policy.reset(state["obs"][i], {})
            pending[i] = False
        elif terminated[i] or truncated[i]:
            pending[i] = True
            state["episodes"] += 1


def vector_table(config: BenchConfig) -> dict[str, dict[str, dict[str, float]]]:
    return {
        kind: {str(size): vector_throughput(kind, size, config) for size in config.vector_sizes}
        for kind in ("sync", "async")
    }


# -- scaling ------------------------------------------------------------------------------


def scaling_point(case_dict: dict[str, Any], repeats: int) -> dict[str, float]:
    """Reset (new and built), first profile and one careful episode on one case."""
    from batchgate_gym.desks.gate.cases import load_cases
    from batchgate_gym.envs import BatchGateEnv
    from batchgate_gym.kernel.sqlguard import SqlBudget
    from batchgate_gym.policies import CarefulPolicy

    from .evaluate import run_episode

    budget = SqlBudget(max_steps=10**10, max_seconds=600.0)  # time the work, do not cut it off

    def new_reset() -> Any:
        env = BatchGateEnv(load_cases([case_dict]), sql_budget=budget, max_turns=200)
        env.reset(seed=0)
        return env

    new = statistics.median(_seconds(new_reset) for _ in range(repeats))
    env = new_reset()
    built = statistics.median(_seconds(lambda: env.reset(seed=0)) for _ in range(repeats))
    biggest = max(env.world.case.batches, key=lambda b: len(b.rows))
    profile = _seconds(lambda: env.step(f'profile_batch("{biggest.batch_id}")'))
    episode = statistics.median(
        _seconds(lambda: run_episode(env, CarefulPolicy(), 0, {"seed": 0})) for _ in range(repeats)
    )
    env.close()
    return {
        "reset_new_ms": round(new * 1e3, 3),
        "reset_built_us": round(built * 1e6, 2),
        "profile_first_ms": round(profile * 1e3, 3),
        "careful_episode_ms": round(episode * 1e3, 3),
    }


def _seconds(function: Callable[[], Any]) -> float:
    start = _clock()
    function()
    return _clock() - start


def scaling(config: BenchConfig) -> dict[str, list[dict[str, Any]]]:
    from batchgate_gym.desks.gate.generator import build_case

    by_rows = []
    for rows in config.rows:
        case_dict = build_case(7, rows_per_batch=(rows, rows), batches=2)
        by_rows.append({"rows_per_batch": rows, **scaling_point(case_dict, config.scaling_repeats)})
    by_batches = []
    for batches in config.batches:
        case_dict = build_case(7, rows_per_batch=(20, 20), batches=batches)
        by_batches.append({"batches": batches, **scaling_point(case_dict, config.scaling_repeats)})
    return {"rows": by_rows, "batches": by_batches}


# -- the whole benchmark ------------------------------------------------------------------


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(terse=True),
        "cpus": os.cpu_count(),
    }


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
        "reset_built_us": result["reset"]["reset_built_us"],
        "reset_procedural_ms": result["reset"]["reset_procedural_ms"],
        "memory_1000_envs_mb": result["memory"]["projected_1000_envs_mb"],
        "reset_and_profile_100k_rows_s": (
            round((big[0]["reset_new_ms"] + big[0]["profile_first_ms"]) / 1e3, 3) if big else None
        ),
    }
    out = {}
    for name, target in TARGETS.items():
        value = measured[name]
        at_least = name == "careful_episodes_per_second"
        met = None if value is None else (value >= target if at_least else value <= target)
        out[name] = {
            "measured": value,
            "target": target,
            "at_least" if at_least else "at_most": True,
            "met": met,
        }
    return out


# -- output ---------------------------------------------------------------------------------


def _num(value: float | None, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def markdown(result: dict[str, Any]) -> str:
    """The small tables the README shows."""
    return "\n\n".join([_headline_table(result), _vector_table(result), _scaling_table(result)])


def _headline_table(result: dict[str, Any]) -> str:
    episodes, steps, reset, memory = (result[k] for k in ("episodes", "steps_per_second", "reset", "memory"))
    targets = {name: t["target"] for name, t in result["targets"].items()}
    rows = [
        (
            "careful, episodes/s (eval split, text interface, graded)",
            _num(episodes["careful"]["episodes_per_second"]),
            f">= {targets['careful_episodes_per_second']:,.0f}",
        ),
        ("naive, episodes/s", _num(episodes["naive"]["episodes_per_second"]), ""),
        ("list_batches, steps/s", _num(steps["list_batches"]), ""),
        ("profile_batch, steps/s", _num(steps["profile_batch"]), ""),
        ("run_sql (GROUP BY on a batch), steps/s", _num(steps["run_sql"]), ""),
        ("reset, built case (µs)", _num(reset["reset_built_us"], 1), f"<= {targets['reset_built_us']:.0f}"),
        (
            "reset, fresh procedural case (ms)",
            _num(reset["reset_procedural_ms"], 3),
            f"<= {targets['reset_procedural_ms']:g}",
        ),
        (
            f"memory of 1,000 live envs (MB, from {memory['envs']:,})",
            _num(memory["projected_1000_envs_mb"], 1),
            f"<= {targets['memory_1000_envs_mb']:.0f}",
        ),
    ]
    return markdown_table(["measure (median)", "value", "target"], rows)


def _vector_table(result: dict[str, Any]) -> str:
    sizes = list(result["vector"]["sync"])
    header = ["careful, steps/s", *(f"{n} env{'s' * (n != '1')}" for n in sizes)]
    rows = [
        [label, *(_num(result["vector"][kind][n]["steps_per_second"]) for n in sizes)]
        for kind, label in (("sync", "SyncVectorEnv"), ("async", "AsyncVectorEnv"))
    ]
    return markdown_table(header, rows)


def _scaling_table(result: dict[str, Any]) -> str:
    measures = ["new case reset (ms)", "built reset (µs)", "first profile (ms)", "careful episode (ms)"]
    tables = []
    for key, label in (("rows", "rows per batch"), ("batches", "batches per case")):
        rows = [
            [
                f"{point['rows_per_batch' if key == 'rows' else 'batches']:,}",
                _num(point["reset_new_ms"], 2),
                _num(point["reset_built_us"], 1),
                _num(point["profile_first_ms"], 2),
                _num(point["careful_episode_ms"], 2),
            ]
            for point in result["scaling"][key]
        ]
        tables.append(markdown_table([label, *measures], rows, first="---:"))
    return "\n\n".join(tables)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the full result as JSON")
    parser.add_argument("--quick", action="store_true", help="tiny run (a smoke test, not a measurement)")
    parser.add_argument("--repeats", type=int, default=None, help="runs per figure (median reported)")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall (default) or cpu: process CPU time, steadier on a busy machine (vector envs: wall)",
    )


def config_from(args: argparse.Namespace) -> BenchConfig:
    config = BenchConfig.quick() if args.quick else BenchConfig()
    if args.repeats:
        config = BenchConfig(**{**asdict(config), "repeats": args.repeats})
    return config


def run(args: argparse.Namespace) -> int:
    result = run_benchmark(
        config_from(args), log=lambda stage: print(f"[bench] {stage}", file=sys.stderr), clock=args.clock
    )
    print(json.dumps(result, indent=1) if args.json else markdown(result))
    return 0
