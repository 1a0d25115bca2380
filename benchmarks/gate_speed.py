"""Speed benchmark: writes benchmarks/results/gate_speed.json and gate_speed.md.

The same code as ``batchgate bench`` (:mod:`batchgate_gym.bench.gate`), plus what
only this script measures: where one episode's time goes (a profile of careful and
naive episodes on the eval split, in buckets), the user's path (``evaluate`` over a
case file never read before, cold, and again, warm, beside the bench's bare loop),
the macro environment's steps per second under random masked actions, and how many
hypothesis examples per second the state machine and the replay property run. ``--quick`` is a smoke run, ``--clock
cpu`` times this process's CPU instead of the wall clock (steadier when the machine
is busy), ``--profile-only`` measures and writes only the profile
(``gate_speed_profile.json``), which runs on any earlier version of the package too.

    python benchmarks/gate_speed.py [--quick] [--clock cpu] [--profile-only] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from batchgate_gym.app.bench import add_arguments, config_from
from batchgate_gym.bench.gate import markdown, run_benchmark
from batchgate_gym.bench.harness import CLOCKS, one_core
from batchgate_gym.bench.measures import episode_loop, eval_env
from batchgate_gym.tables import markdown_table

# Bucket -> the functions (path suffix, name) whose cumulative time it takes. The
# buckets do not overlap: appends to the log happen inside tools, and are taken out
# of "tools (rest)"; the seal is the one append the episode makes itself.
BUCKETS: dict[str, list[tuple[str, str]]] = {
    "reset (restore image, new log)": [("envs/text_env.py", "reset")],
    "policy (reads and writes text)": [("policies/gate/reference.py", "act")],
    "parse action": [("kernel/codec.py", "parse_action")],
    "SQL prepare/step (queries, loads)": [
        ("kernel/sqlguard.py", "run"),
        ("gate/world.py", "orphans_now"),
        ("gate/world.py", "insert"),
    ],
    "log hashing (append, seal, verify)": [("kernel/ledger.py", "append"), ("kernel/ledger.py", "intact")],
    "observation JSON and text": [
        ("kernel/codec.py", "compact_json"),
        ("kernel/codec.py", "render"),
        ("kernel/codec.py", "escape"),
        ("kernel/codec.py", "cut"),
    ],
    "grading": [("gate/replay.py", "score_live")],
}
REST = "tools (rest)"
OTHER = "other (turn loop, info, episode runner)"
EXTRA_TARGETS = {"macro_steps_per_second": 15_000.0}  # at least
# evaluate's episode over a case file never read before (read, validate, build, play,
# grade) against the bench's warm episode, and evaluate's warm episode against the
# bench's bare loop: at most these ratios.
COLD_RATIO_TARGET = 1.25
WARM_RATIO_TARGET = 1.10


def _cumulative(stats: dict[Any, Any], path: str, name: str) -> float:
    return sum(v[3] for (file, _line, func), v in stats.items() if file.endswith(path) and func == name)


def _spent(
    profiler: cProfile.Profile, buckets: dict[str, list[tuple[str, str]]]
) -> tuple[dict[Any, Any], float, dict[str, float]]:
    """A profiled run's stats, its whole time and the cumulative time of each bucket."""
    stats: dict[Any, Any] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in stats.values())
    spent = {bucket: sum(_cumulative(stats, *f) for f in fs) for bucket, fs in buckets.items()}
    return stats, total, spent


def episode_profile(policy_name: str, episodes: int, repeats: int, clock: str) -> dict[str, Any]:
    """Microseconds per eval-split episode, in :data:`BUCKETS`: cProfile's shares of one
    profiled run, scaled to the median of ``repeats`` unprofiled runs."""
    from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES

    env, policy = eval_env(), REFERENCE_POLICIES[policy_name]()
    env.reset(seed=0)
    episode_loop(env, policy, 2 * len(env.source))  # every case built, every statement warm
    timer = CLOCKS[clock]
    runs = []
    for _ in range(repeats):
        start = timer()
        episode_loop(env, policy, episodes)
        runs.append(timer() - start)
    profiler = cProfile.Profile()
    profiler.enable()
    episode_loop(env, policy, episodes)
    profiler.disable()
    env.close()
    stats, total, spent = _spent(profiler, BUCKETS)
    appends = _cumulative(stats, "kernel/ledger.py", "append") - _cumulative(
        stats, "kernel/ledger.py", "seal"
    )
    spent[REST] = (
        _cumulative(stats, "gate/world.py", "call") - spent["SQL prepare/step (queries, loads)"] - appends
    )
    spent[OTHER] = total - sum(spent.values())
    per_episode = statistics.median(runs) / episodes
    return {
        "us_per_episode": round(per_episode * 1e6, 1),
        "buckets_us": {
            bucket: round(share / total * per_episode * 1e6, 1) for bucket, share in spent.items()
        },
    }


def profiles(quick: bool, clock: str) -> dict[str, Any]:
    episodes, repeats = (32, 1) if quick else (640, 5)
    with one_core():
        return {name: episode_profile(name, episodes, repeats, clock) for name in ("careful", "naive")}


def macro_steps_per_second(steps: int, repeats: int, clock: str) -> float:
    """Steps per second of ``BadBatchGateMacro-v0`` (eval split) under random masked actions."""
    import numpy as np

    from batchgate_gym.envs.gate.macro import GateMacroEnv

    env = GateMacroEnv(split="eval")
    rng = np.random.default_rng(0)
    env.reset(seed=0)  # later resets draw from the env's own generator, as a training loop's do

    def run() -> None:
        for _ in range(steps):
            action = rng.choice(np.flatnonzero(env.action_masks()))
            *_, terminated, truncated, _info = env.step(action)
            if terminated or truncated:
                env.reset()

    run()
    timer = CLOCKS[clock]
    runs = []
    for _ in range(repeats):
        start = timer()
        run()
        runs.append(timer() - start)
    env.close()
    return round(steps / statistics.median(runs), 1)


def fresh_case_file(directory: Path, first_seed: int, count: int) -> Path:
    """A JSONL file of ``count`` procedural cases (the splits' scale) no earlier file of the
    run holds: each measurement of the cold path reads one of its own."""
    from batchgate_gym.desks.gate.generator import build_case, dumps_case
    from batchgate_gym.kernel.case_files import write_jsonl

    path = directory / f"fresh-{first_seed}.jsonl"
    return write_jsonl(path, (dumps_case(build_case(seed)) for seed in range(first_seed, first_seed + count)))


def user_path(cases: int, repeats: int, clock: str) -> dict[str, Any]:
    """Milliseconds per careful episode through ``evaluate``, all in one run: over a case
    file never read before (cold: read, validate, build, play, grade), in a process of its
    own that has seen no other case of the file's kind (:func:`in_fresh_process`), then
    over the same file again in that process (its cases kept by digest; a file of more
    cases than a connection keeps statements compiles them again); over the cached eval
    split, and the bench's bare loop over that split (one env, every case built): medians
    of ``repeats`` files and of three times as many runs of the split, in turn."""
    from batchgate_gym.evaluation import evaluate
    from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES

    careful = REFERENCE_POLICIES["careful"]
    timer = CLOCKS[clock]

    def per_episode(run: Callable[[], Any], episodes: int) -> float:
        start = timer()
        run()
        return (timer() - start) / episodes * 1e3

    env, policy = eval_env(), careful()
    env.reset(seed=0)
    split_size = len(env.source)
    episode_loop(env, policy, 2 * split_size)  # every case built, every statement warm
    evaluate(careful(), split="eval", progress=False)
    warm, bare = [], []
    for _ in range(3 * repeats):  # the warm runs in turn, before any file floods a statement cache
        warm.append(per_episode(lambda: evaluate(careful(), split="eval", progress=False), split_size))
        bare.append(per_episode(lambda: episode_loop(env, policy, split_size), split_size))
    env.close()
    cold, again = [], []
    with tempfile.TemporaryDirectory() as directory:
        for run in range(repeats):
            file = fresh_case_file(Path(directory), 10**6 * (run + 1), cases)
            timed = in_fresh_process(file, Path(directory), clock, profile=False)
            cold.append(timed["cold_ms"])
            again.append(timed["again_ms"])
    figures = {
        "cold_file_ms": statistics.median(cold),
        "same_file_again_ms": statistics.median(again),
        "evaluate_warm_ms": statistics.median(warm),
        "bare_loop_ms": statistics.median(bare),
    }
    rounded = {name: round(value, 4) for name, value in figures.items()}
    cold_ratio = figures["cold_file_ms"] / figures["bare_loop_ms"]
    warm_ratio = figures["evaluate_warm_ms"] / figures["bare_loop_ms"]
    return {
        **rounded,
        "cases": cases,
        "repeats": repeats,
        "cold_ratio": round(cold_ratio, 3),
        "warm_ratio": round(warm_ratio, 3),
        "cold_met": cold_ratio <= COLD_RATIO_TARGET,
        "warm_met": warm_ratio <= WARM_RATIO_TARGET,
    }


# Where a cold episode's time goes (evaluate over a case file never read before):
# bucket -> the functions whose cumulative time it takes. The buckets do not overlap:
# reading the file is its bytes, digest and JSON, its cases' checks taken out; "run SQL
# (rest)" is the guard's run less its compile-and-list of new statements.
COLD_BUCKETS: dict[str, list[tuple[str, str]]] = {
    "read the case file (bytes, digest, JSON)": [("kernel/case_files.py", "read_case_file")],
    "check each case and make it typed": [("gate/cases.py", "case_from_dict")],
    "build the case's image (rows, reference mart)": [("gate/world.py", "_build")],
    "compile new statements (guard EXPLAIN, tables opened)": [("kernel/sqlguard.py", "_compile_and_list")],
    "policy (reads and writes text)": [("policies/gate/reference.py", "act")],
    "grading": [("gate/replay.py", "score_live")],
}
COLD_SQL_REST = "run SQL (rest)"
COLD_OTHER = "other (parse, log, observations, turn loop)"
_READ, _CHECK, _COMPILE = (
    "read the case file (bytes, digest, JSON)",
    "check each case and make it typed",
    "compile new statements (guard EXPLAIN, tables opened)",
)


def cold_profile(cases: int, cold_ms: float, directory: Path, clock: str = "cpu") -> dict[str, float]:
    """Microseconds per cold careful episode, in :data:`COLD_BUCKETS`: cProfile's shares
    of one profiled ``evaluate`` over a fresh file, in a process of its own
    (:func:`in_fresh_process`), scaled to ``cold_ms`` (the unprofiled median of
    :func:`user_path`)."""
    file = fresh_case_file(directory, 9 * 10**6, cases)
    shares = in_fresh_process(file, directory, clock, profile=True)
    return {bucket: round(share * cold_ms * 1e3, 1) for bucket, share in shares.items()}


def _cold_shares(profiler: cProfile.Profile) -> dict[str, float]:
    """A profiled cold run's buckets, as shares of its whole time."""
    stats, total, spent = _spent(profiler, COLD_BUCKETS)
    spent[_READ] -= spent[_CHECK]  # the checks run inside the read
    spent[COLD_SQL_REST] = _cumulative(stats, "kernel/sqlguard.py", "run") - spent[_COMPILE]
    spent[COLD_OTHER] = total - sum(spent.values())
    return {bucket: share / total for bucket, share in spent.items()}


_WARM_UP_SEED = 8 * 10**6  # the fresh process's first file, of cases no measured file holds


def in_fresh_process(file: Path, directory: Path, clock: str, profile: bool) -> dict[str, float]:
    """Time (or, with ``profile``, profile) careful ``evaluate`` over ``file`` in a new
    Python process: a case file's first reading in a process that has played no case of
    its kind, as a user's first command meets it. Earlier files in one process would have
    left their schemas' statements compiled and explained (the guard keeps both per schema
    digest, and small cases' schemas repeat). The process first plays a two-case file of
    other seeds, so the imports and first-use costs of the process are not counted."""
    warm_up = fresh_case_file(directory, _WARM_UP_SEED, 2)
    command = [sys.executable, str(Path(__file__).resolve()), "--cold-file", str(file)]
    command += ["--warm-up-file", str(warm_up), "--clock", clock, *(["--cold-profile"] if profile else [])]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def cold_here(file: str, warm_up: str, clock: str, profile: bool) -> dict[str, float]:
    """:func:`in_fresh_process`'s work, in this process (``--cold-file``)."""
    from batchgate_gym.evaluation import evaluate
    from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES

    careful = REFERENCE_POLICIES["careful"]
    evaluate(careful(), cases=warm_up, progress=False)
    cases = len(Path(file).read_text().splitlines())
    if profile:
        profiler = cProfile.Profile()
        profiler.enable()
        evaluate(careful(), cases=file, progress=False)
        profiler.disable()
        return _cold_shares(profiler)
    timer = CLOCKS[clock]
    figures = {}
    for name in ("cold_ms", "again_ms"):
        start = timer()
        evaluate(careful(), cases=file, progress=False)
        figures[name] = (timer() - start) / cases * 1e3
    return figures


def cold_profile_table(profile: dict[str, float]) -> str:
    rows = [[bucket, f"{us:,.0f}"] for bucket, us in profile.items()]
    rows.append(["**whole cold episode**", f"{sum(profile.values()):,.0f}"])
    return markdown_table(["µs per cold careful episode (shares of one profiled run)", "value"], rows)


def _examples_per_second(test: Callable[[], None], examples: int) -> float:
    start = time.perf_counter()
    test()
    return round(examples / (time.perf_counter() - start), 1)


def hypothesis_rates(examples: int) -> dict[str, float]:
    """Examples per second of the gate's state machine and of its replay property (wall clock:
    hypothesis's own generation counts, as it does in a fuzzing run)."""
    from hypothesis import HealthCheck, given, settings

    from batchgate_gym.desks.gate.replay import replay
    from batchgate_gym.envs import BatchGateEnv
    from batchgate_gym.testing import GateMachine, episodes, render_action

    run = settings(
        max_examples=examples, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    machine = GateMachine.TestCase
    machine.settings = run

    @run
    @given(episodes(rows_per_batch=(1, 10)))
    def replay_property(episode: Any) -> None:
        case, steps = episode
        env = BatchGateEnv([case])
        env.reset(seed=0)
        info: dict[str, Any] = {}
        for calls in [*steps, []]:
            action = render_action(calls) if calls else "submit_report([], [])"
            *_, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        assert replay(case, env.export_log(), head=info["log_head"]).as_dict() == info["score"]

    return {
        "state_machine_examples_per_second": _examples_per_second(machine().runTest, examples),
        "replay_property_examples_per_second": _examples_per_second(replay_property, examples),
        "examples": examples,
    }


def extras(quick: bool, clock: str) -> dict[str, Any]:
    steps, repeats, examples = (50, 1, 3) if quick else (2000, 7, 100)
    cases, file_repeats = (32, 1) if quick else (320, 3)
    with one_core():
        macro = macro_steps_per_second(steps, repeats, clock)
        path = user_path(cases, file_repeats, clock)
        with tempfile.TemporaryDirectory() as directory:
            cold = cold_profile(cases, path["cold_file_ms"], Path(directory), clock)
    return {
        "profile": profiles(quick, clock),
        "user_path": path,
        "cold_profile": cold,
        "macro_steps_per_second": macro,
        "hypothesis": hypothesis_rates(examples),
        "extra_targets": {
            name: {"measured": macro, "target": target, "at_least": True, "met": macro >= target}
            for name, target in EXTRA_TARGETS.items()
        },
    }


def profile_table(profile: dict[str, Any], before: dict[str, Any] | None = None) -> str:
    """Where one eval-split episode's time goes, per policy (and before, when given)."""
    columns = [(name, "") for name in profile] if before is None else []
    if before is not None:
        columns = [(name, when) for name in profile for when in ("before", "now")]
    header = ["µs per episode", *(f"{name}{', ' + when if when else ''}" for name, when in columns)]

    def figure(name: str, when: str, bucket: str | None) -> str:
        source = before if when == "before" else profile
        if source is None or name not in source:
            return "n/a"
        value = source[name]["us_per_episode"] if bucket is None else source[name]["buckets_us"].get(bucket)
        return "n/a" if value is None else f"{value:,.0f}"

    buckets = [*BUCKETS, REST, OTHER]
    rows = [[bucket, *(figure(name, when, bucket) for name, when in columns)] for bucket in buckets]
    rows.append(["**whole episode**", *(figure(name, when, None) for name, when in columns)])
    return markdown_table(header, rows)


def user_path_table(path: dict[str, Any]) -> str:
    """evaluate's episode, cold and warm, beside the bench's bare loop (one run)."""

    def met(flag: bool) -> str:
        return "met" if flag else "not met"

    bare = path["bare_loop_ms"]
    rows = [
        [
            f"evaluate(careful), a {path['cases']}-case file never read before (cold: read, validate,"
            " build, play, grade)",
            f"{path['cold_file_ms']:.3f}",
            f"<= {COLD_RATIO_TARGET}x bare loop ({path['cold_ratio']:.2f}x)",
            met(path["cold_met"]),
        ],
        [
            "evaluate(careful), the same file again (cases kept by digest)",
            f"{path['same_file_again_ms']:.3f}",
            f"reported ({path['same_file_again_ms'] / bare:.2f}x)",
            "",
        ],
        [
            "evaluate(careful), eval split (warm)",
            f"{path['evaluate_warm_ms']:.3f}",
            f"<= {WARM_RATIO_TARGET}x bare loop ({path['warm_ratio']:.2f}x)",
            met(path["warm_met"]),
        ],
        ["the bench's bare loop, eval split (warm)", f"{bare:.3f}", "", ""],
    ]
    return markdown_table(["ms per careful episode (median, one run)", "value", "target", ""], rows)


def extras_table(result: dict[str, Any]) -> str:
    extra = result["extras"]
    met = "met" if extra["extra_targets"]["macro_steps_per_second"]["met"] else "not met"
    rates = extra["hypothesis"]
    rows = [
        [
            "BadBatchGateMacro-v0, random masked actions, steps/s",
            f"{extra['macro_steps_per_second']:,.0f}",
            f">= {EXTRA_TARGETS['macro_steps_per_second']:,.0f}",
            met,
        ],
        [
            "hypothesis state machine (GateMachine), examples/s",
            f"{rates['state_machine_examples_per_second']:,.1f}",
            "reported",
            "",
        ],
        [
            "hypothesis replay property, examples/s",
            f"{rates['replay_property_examples_per_second']:,.1f}",
            "reported",
            "",
        ],
    ]
    return markdown_table(["measure (median; hypothesis: wall clock)", "value", "target", ""], rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"), help="output directory")
    parser.add_argument("--profile-only", action="store_true", help="write only gate_speed_profile.json")
    parser.add_argument(
        "--before", default=None, help="a gate_speed_profile.json to show beside this run's profile"
    )
    parser.add_argument("--cold-file", help=argparse.SUPPRESS)  # in_fresh_process's child
    parser.add_argument("--warm-up-file", help=argparse.SUPPRESS)
    parser.add_argument("--cold-profile", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cold_file or args.warm_up_file or args.cold_profile:
        if not (args.cold_file and args.warm_up_file):
            parser.error("--cold-file and --warm-up-file go together (the script runs itself with them)")
        print(json.dumps(cold_here(args.cold_file, args.warm_up_file, args.clock, args.cold_profile)))
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    command = "python benchmarks/gate_speed.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.profile_only:
        profile = profiles(args.quick, args.clock)
        (out / "gate_speed_profile.json").write_text(json.dumps(profile, indent=1) + "\n")
        print(profile_table(profile))
        return 0
    result = run_benchmark(
        config_from(args), log=lambda stage: print(f"[bench] {stage}", file=sys.stderr), clock=args.clock
    )
    print("[bench] profile, macro env, hypothesis", file=sys.stderr)
    result["extras"] = extras(args.quick, args.clock)
    before = json.loads(Path(args.before).read_text()) if args.before else None
    tables = [
        markdown(result),
        user_path_table(result["extras"]["user_path"]),
        cold_profile_table(result["extras"]["cold_profile"]),
        extras_table(result),
        profile_table(result["extras"]["profile"], before),
    ]
    (out / "gate_speed.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "gate_speed.md").write_text(
        f"<!-- made by: {command.strip()} -->\n\n" + "\n\n".join(tables) + "\n"
    )
    print("\n\n".join(tables))
    return 0


if __name__ == "__main__":
    sys.exit(main())
