"""The gate's measures: episodes, single steps, resets, memory, vector envs and scaling;
the reset times are every desk's (:func:`reset_times` takes the desk's envs)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from batchgate_gym.evaluation import run_episode
from batchgate_gym.kernel.sqlguard import resident_bytes

from .config import BenchConfig
from .harness import CLOCKS, median_rate, seconds, timed_runs

# -- episodes and steps -----------------------------------------------------------------


def eval_env(**kwargs: Any) -> Any:
    from batchgate_gym.envs import BatchGateEnv

    return BatchGateEnv(split="eval", **kwargs)


def episode_loop(env: Any, policy: Any, count: int, first: int = 0) -> int:
    """Run ``count`` episodes over the env's fixed cases, in order; return calls made."""
    n_cases = len(env.source)
    calls = 0
    for index in range(first, first + count):
        calls += run_episode(env, policy, index, {"options": {"case_index": index % n_cases}}).calls
    return calls


def episodes_per_second(policy_name: str, config: BenchConfig) -> dict[str, Any]:
    from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES

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


def reset_times(
    config: BenchConfig,
    make_fixed: Callable[[], Any] | None = None,
    make_fresh: Callable[[], Any] | None = None,
) -> dict[str, float]:
    """Reset of a built case (every fixed case prepared first) and of a fresh procedural one.

    ``make_fixed`` makes an env over fixed cases, ``make_fresh`` one drawing a new case per
    seed; both default to the gate's (its eval split; procedural cases).
    """
    from batchgate_gym.envs import BatchGateEnv

    env = (make_fixed or eval_env)()
    env.reset(seed=0)
    n_cases = len(env.source)
    for index in range(n_cases):
        env.reset(options={"case_index": index})

    def built() -> None:
        for index in range(config.resets):
            env.reset(options={"case_index": index % n_cases})

    built_runs = timed_runs(built, config.repeats)
    procedural = (make_fresh or BatchGateEnv)()
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


def live_env_memory(count: int) -> dict[str, float]:
    """Bytes added by ``count`` envs, each reset on an eval case (run in a fresh process)."""
    envs = [eval_env()]
    envs[0].reset(seed=0)
    n_cases = len(envs[0].source)
    for index in range(n_cases):  # cases built once: the shared part is not per env
        envs[0].reset(options={"case_index": index})
    before = resident_bytes()
    for index in range(count):
        env = eval_env()
        env.reset(seed=index, options={"case_index": index % n_cases})
        envs.append(env)
    added = resident_bytes() - before
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

    from batchgate_gym.policies.gate.reference import CarefulPolicy

    vector_class = gym.vector.SyncVectorEnv if kind == "sync" else gym.vector.AsyncVectorEnv
    vec = vector_class([eval_env] * size)
    policies = [CarefulPolicy() for _ in range(size)]
    observations: Any
    observations, _ = vec.reset(seed=0)
    state: dict[str, Any] = {"obs": tuple(observations), "pending": [False] * size, "episodes": 0}
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
    from batchgate_gym.policies.gate.reference import CarefulPolicy

    budget = SqlBudget(  # time the work, do not cut it off: no step, CPU or clock budget binds
        max_steps=10**10,
        max_action_steps=10**10,
        max_seconds=600.0,
        max_cpu_seconds=600.0,
        max_action_cpu_seconds=600.0,
    )

    def new_reset() -> Any:
        env = BatchGateEnv(load_cases([case_dict]), sql_budget=budget, max_turns=200)
        env.reset(seed=0)
        return env

    new = statistics.median(seconds(new_reset) for _ in range(repeats))
    env = new_reset()
    built = statistics.median(seconds(lambda: env.reset(seed=0)) for _ in range(repeats))
    biggest = max(env.world.case.batches, key=lambda b: len(b.rows))
    profile = seconds(lambda: env.step(f'profile_batch("{biggest.batch_id}")'))
    episode = statistics.median(
        seconds(lambda: run_episode(env, CarefulPolicy(), 0, {"seed": 0})) for _ in range(repeats)
    )
    env.close()
    return {
        "reset_new_ms": round(new * 1e3, 3),
        "reset_built_us": round(built * 1e6, 2),
        "profile_first_ms": round(profile * 1e3, 3),
        "careful_episode_ms": round(episode * 1e3, 3),
    }


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
