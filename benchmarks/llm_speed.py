"""Model-loop speed: rollouts/s through the chat-completions server at several concurrencies.

Writes benchmarks/results/llm_speed.json and llm_speed.md. ``batchgate serve
--policy careful`` runs in a process of its own on a free port of 127.0.0.1, and
``batchgate run-model``'s runner (:func:`batchgate_gym.llm.runner.run_rollouts`,
the official ``openai`` client) plays the eval split against it at each
concurrency, ``--repeats`` times, the concurrencies taking turns within each repeat;
the tables give medians over the repeats.

How the environment's share is measured: while the runner plays, the desk's
``make_env`` is swapped for one that wraps each environment it builds in a timer.
Every call into the environment (building it, ``reset``, each ``step``, which
includes the grading on the final step, ``export_log`` and ``close``) is timed on
the wall clock. The runner is one asyncio thread and those calls are synchronous,
so nothing else of this process runs during them: their sum is the environment's
own time. Two shares are reported: per rollout (its environment time over its
latency, from building the environment to closing it; median over rollouts), and
over the run (all environment time over the run's wall time: how busy the
environment kept this process; near 100% would mean the environment is the
bottleneck). "env ceiling" is rollouts per second of environment time alone.
A row "in process" plays the same episodes with the same chat code and the
same policy called directly, without HTTP or the client, as a floor.

The server's CPU time is read from ``/proc/PID/stat`` before and after each run
(user + system, 10 ms ticks); the client's is this process's ``time.process_time``.

    python benchmarks/llm_speed.py [--quick] [--repeats 7] [--rollouts 2] [--out benchmarks/results]

``--wide 512`` instead plays one run at that concurrency (``--rollouts 16`` of each eval
case: 512 rollouts in flight at once) with no retry allowed, and checks that no
connection was dropped (a dropped one is an infra error), and that every planned (case,
rollout) is in the file exactly once; it writes llm_speed_wide.{json,md}.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import dataclasses
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.llm.runner import RunConfig, run_rollouts

DESK = "gate"
POLICY = "careful"
SPLIT = "eval"


# -- timing the environment ------------------------------------------------------------


@dataclasses.dataclass
class EnvClock:
    """The environment's time in one rollout: seconds inside it, and its span."""

    seconds: float = 0.0
    calls: int = 0
    opened: float = 0.0
    closed: float | None = None

    @property
    def span(self) -> float:
        return (self.closed or time.perf_counter()) - self.opened


class _Timed:
    """Runs a call into the environment and adds its duration to an :class:`EnvClock`."""

    def __init__(self, clock: EnvClock) -> None:
        self._clock = clock

    def _time(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            self._clock.seconds += time.perf_counter() - start
            self._clock.calls += 1


class TimedBase(_Timed):
    """What the runner reaches through ``env.unwrapped``: ``export_log`` is timed."""

    def __init__(self, env: Any, clock: EnvClock) -> None:
        super().__init__(clock)
        self._env = env

    def export_log(self, *args: Any, **kwargs: Any) -> Any:
        return self._time(self._env.export_log, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)


class TimedEnv(_Timed):
    """An environment whose ``reset``, ``step`` and ``close`` are timed; the rest passes through."""

    def __init__(self, env: Any, clock: EnvClock) -> None:
        super().__init__(clock)
        self._env = env

    def reset(self, *args: Any, **kwargs: Any) -> Any:
        return self._time(self._env.reset, *args, **kwargs)

    def step(self, action: Any) -> Any:
        return self._time(self._env.step, action)

    def close(self) -> None:
        self._time(self._env.close)
        self._clock.closed = time.perf_counter()

    @property
    def unwrapped(self) -> TimedBase:
        return TimedBase(self._env.unwrapped, self._clock)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)


@contextmanager
def timed_environments(desk_name: str) -> Iterator[list[EnvClock]]:
    """While open, every environment the desk builds is timed; yields the clocks, one per env."""
    clocks: list[EnvClock] = []
    real_get = registry.get
    desk = real_get(desk_name)

    class TimedDesk:
        """The desk as it is, but each environment it makes comes wrapped in a timer."""

        def make_env(self, *args: Any, **kwargs: Any) -> TimedEnv:
            clock = EnvClock(opened=time.perf_counter())
            start = clock.opened
            env = desk.make_env(*args, **kwargs)
            clock.seconds += time.perf_counter() - start
            clock.calls += 1
            clocks.append(clock)
            return TimedEnv(env, clock)

        def __getattr__(self, name: str) -> Any:
            return getattr(desk, name)

    timed = TimedDesk()

    def get(name: str) -> Any:
        return timed if name == desk_name else real_get(name)

    registry.get = get
    try:
        yield clocks
    finally:
        registry.get = real_get


# -- the server in its own process ------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def server_process(policy: str) -> Iterator[tuple[str, int]]:
    """``batchgate serve`` on a free port; yields its base URL and process id."""
    port = free_port()
    command = [sys.executable, "-m", "batchgate_gym", "serve", "--desk", DESK, "--policy", policy]
    process = subprocess.Popen(
        [*command, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=1) as answer:
                if answer.status == 200:
                    break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"batchgate serve did not start: {process.communicate()[1]}") from None
            time.sleep(0.05)
    try:
        yield base_url, process.pid
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process, from /proc (nan where there is no /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    # after the name: state is field 3, utime and stime are fields 14 and 15
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- one run -----------------------------------------------------------------------------


def summarise(clocks: list[EnvClock], wall: float, requests: int) -> dict[str, Any]:
    """Rates, latencies and environment shares of one run's rollouts."""
    env_seconds = sum(clock.seconds for clock in clocks)
    return {
        "rollouts": len(clocks),
        "wall_s": round(wall, 4),
        "rollouts_per_second": round(len(clocks) / wall, 2),
        "requests": requests,
        "requests_per_second": round(requests / wall, 1),
        "median_latency_ms": round(1000 * statistics.median(clock.span for clock in clocks), 2),
        "env_ms_per_rollout": round(1000 * env_seconds / len(clocks), 3),
        "env_share_per_rollout_pct": round(
            100 * statistics.median(clock.seconds / clock.span for clock in clocks), 2
        ),
        "env_share_of_wall_pct": round(100 * env_seconds / wall, 2),
        "env_ceiling_rollouts_per_second": round(len(clocks) / env_seconds, 1),
    }


def run_through_server(
    base_url: str, pid: int, concurrency: int, n: int | None, rollouts: int, folder: Path
) -> dict[str, Any]:
    """One pass over the split through the server; every rollout must be scored."""
    out = folder / f"c{concurrency}.jsonl"
    out.unlink(missing_ok=True)
    config = RunConfig(
        model=f"scripted-{POLICY}",
        base_url=base_url,
        api_key="local",
        out=out,
        desk=DESK,
        split=SPLIT,
        n=n,
        rollouts=rollouts,
        concurrency=concurrency,
        max_retries=0,
    )
    with timed_environments(DESK) as clocks:
        server_before, client_before = cpu_seconds(pid), time.process_time()
        start = time.perf_counter()
        summary = asyncio.run(run_rollouts(config))
        wall = time.perf_counter() - start
        server_cpu, client_cpu = cpu_seconds(pid) - server_before, time.process_time() - client_before
    out.unlink(missing_ok=True)
    if summary.infra_errors or summary.scored != len(clocks) or summary.retries:
        raise RuntimeError(
            f"a run at concurrency {concurrency} was not clean: {summary.infra_errors} infra errors"
        )
    result = summarise(clocks, wall, summary.requests)
    result.update(
        server_cpu_s=round(server_cpu, 3),
        server_cpu_pct_of_core=round(100 * server_cpu / wall, 1),
        server_cpu_ms_per_request=round(1000 * server_cpu / summary.requests, 3),
        client_cpu_pct_of_core=round(100 * client_cpu / wall, 1),
        mean_reward=round(statistics.fmean(row["score"]["reward"] for row in summary.rows), 4),
    )
    return result


def run_in_process(n: int | None, rollouts: int) -> dict[str, Any]:
    """The same episodes with the chat code and the policy called directly: no HTTP, no client."""
    from batchgate_gym.kernel.text_policy import as_policy
    from batchgate_gym.llm.chat import ChatEpisode, ChatSettings
    from batchgate_gym.llm.results import desk_tools
    from batchgate_gym.llm.scripted import ScriptedModel

    desk = registry.get(DESK)
    cases = desk.fixed_cases(split=SPLIT)
    cases = cases if n is None else cases[:n]
    tools = desk_tools(DESK)
    known = desk.policies.known()[POLICY]
    requests = 0
    with timed_environments(DESK) as clocks:
        timed = registry.get(DESK)
        start = time.perf_counter()
        for index in range(len(cases)):
            for _rollout in range(rollouts):
                env = timed.make_env(cases=cases)
                policy = as_policy(known if isinstance(known, type) else copy.deepcopy(known))
                model = ScriptedModel(policy)
                chat = ChatEpisode(
                    env, tools, ChatSettings(mode="tools", no_tool_call=desk.chat_no_tool_call)
                )
                chat.reset(seed=index, options={"case_index": index})
                while True:
                    requests += 1  # one model turn, as one request would be
                    if chat.step(model.respond(chat.messages)).done:
                        break
                env.unwrapped.export_log()
                env.close()
        wall = time.perf_counter() - start
    return summarise(clocks, wall, requests)


# -- the benchmark -----------------------------------------------------------------------

MEDIAN_FIELDS = (
    "rollouts_per_second",
    "requests_per_second",
    "median_latency_ms",
    "env_ms_per_rollout",
    "env_share_per_rollout_pct",
    "env_share_of_wall_pct",
    "env_ceiling_rollouts_per_second",
    "server_cpu_pct_of_core",
    "server_cpu_ms_per_request",
    "client_cpu_pct_of_core",
)


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        name: round(statistics.median(run[name] for run in runs), 3)
        for name in MEDIAN_FIELDS
        if name in runs[0]
    }


def run_benchmark(
    concurrencies: list[int], repeats: int, n: int | None, rollouts: int, log: Callable[[str], None]
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average_before": [round(x, 2) for x in os.getloadavg()],
        },
        "config": {
            "desk": DESK,
            "policy": POLICY,
            "split": SPLIT,
            "cases": n,
            "rollouts_per_case": rollouts,
            "concurrency": concurrencies,
            "repeats": repeats,
            "mode": "tools",
            "server": "batchgate serve in its own process on 127.0.0.1",
        },
        "env_share": (
            "every call into each environment the runner builds (make_env, reset, step with the "
            "final grading, export_log, close) timed by a wrapper; per rollout: its env time over "
            "its latency (median over rollouts); of wall: all env time over the run's wall time"
        ),
    }
    runs: dict[int, list[dict[str, Any]]] = {c: [] for c in concurrencies}
    in_process: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch, server_process(POLICY) as (base_url, pid):
        folder = Path(scratch)
        log("warm-up")
        run_through_server(base_url, pid, max(concurrencies), min(n or 4, 4), 1, folder)
        run_in_process(min(n or 4, 4), 1)
        for repeat in range(repeats):
            for concurrency in concurrencies:
                one = run_through_server(base_url, pid, concurrency, n, rollouts, folder)
                runs[concurrency].append(one)
                log(
                    f"repeat {repeat + 1}/{repeats}, concurrency {concurrency}: "
                    f"{one['rollouts_per_second']} rollouts/s, env {one['env_share_of_wall_pct']}% of wall"
                )
            in_process.append(run_in_process(n, rollouts))
    result["machine"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    result["in_process"] = {**medians(in_process), "runs": in_process}
    result["through_server"] = {
        str(concurrency): {**medians(runs[concurrency]), "runs": runs[concurrency]}
        for concurrency in concurrencies
    }
    return result


def markdown(result: dict[str, Any]) -> str:
    config, machine = result["config"], result["machine"]
    rollouts = result["in_process"]["runs"][0]["rollouts"]
    lines = [
        f"{config['policy']} on the {config['split']} split, {rollouts} rollouts a run, medians of "
        f"{config['repeats']} runs; {machine['cpus']} CPUs, load average "
        f"{machine['load_average_before'][0]} before, {machine['load_average_after'][0]} after.",
        "",
        "| concurrency | rollouts/s | requests/s | median rollout latency (ms) | env ms per rollout "
        "| env share per rollout | env share of wall | env ceiling (rollouts/s) "
        "| server CPU (% of a core) | server CPU ms per request | client CPU (% of a core) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for concurrency, row in result["through_server"].items():
        lines.append(
            f"| {concurrency} | {row['rollouts_per_second']:,.1f} | {row['requests_per_second']:,.0f} "
            f"| {row['median_latency_ms']:,.1f} | {row['env_ms_per_rollout']:.2f} "
            f"| {row['env_share_per_rollout_pct']:.1f}% | {row['env_share_of_wall_pct']:.1f}% "
            f"| {row['env_ceiling_rollouts_per_second']:,.0f} | {row['server_cpu_pct_of_core']:.0f}% "
            f"| {row['server_cpu_ms_per_request']:.2f} | {row['client_cpu_pct_of_core']:.0f}% |"
        )
    row = result["in_process"]
    lines.append(
        f"| in process, no HTTP | {row['rollouts_per_second']:,.1f} | {row['requests_per_second']:,.0f} "
        f"| {row['median_latency_ms']:,.1f} | {row['env_ms_per_rollout']:.2f} "
        f"| {row['env_share_per_rollout_pct']:.1f}% | {row['env_share_of_wall_pct']:.1f}% "
        f"| {row['env_ceiling_rollouts_per_second']:,.0f} |  |  |  |"
    )
    lines += [
        "",
        "Env time is every call into the environment (make_env, reset, step with the final "
        "grading, export_log, close), timed by a wrapper around each environment the runner "
        "builds; per rollout: its env time over its latency; of wall: all env time over the "
        "run's wall time. Env ceiling: rollouts per second of env time alone. In process: the "
        "same episodes, chat code and policy without HTTP or the client (requests/s there are "
        "model turns/s).",
    ]
    return "\n".join(lines)


def run_wide(concurrency: int, rollouts: int, log: Callable[[str], None]) -> dict[str, Any]:
    """One run of every eval case ``rollouts`` times at ``concurrency``: clean, and every row once."""
    from openai._constants import DEFAULT_CONNECTION_LIMITS

    with server_process(POLICY) as (base_url, _pid), tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "wide.jsonl"
        config = RunConfig(
            model=f"scripted-{POLICY}", base_url=base_url, api_key="local", out=out, desk=DESK,
            split=SPLIT, rollouts=rollouts, concurrency=concurrency, max_retries=0,
        )  # fmt: skip
        log(f"{concurrency} rollouts in flight")
        start = time.perf_counter()
        summary = asyncio.run(run_rollouts(config))
        wall = time.perf_counter() - start
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    planned = summary.planned
    pairs = [(row["case_id"], row["rollout"]) for row in rows]
    return {
        "concurrency": concurrency,
        "planned": planned,
        "rows": len(rows),
        "distinct_rows": len(set(pairs)),
        "scored": summary.scored,
        "infra_errors": summary.infra_errors,
        "retries": summary.retries,
        "requests": summary.requests,
        "wall_s": round(wall, 2),
        "rollouts_per_s": round(len(rows) / wall, 1),
        "client_max_connections": DEFAULT_CONNECTION_LIMITS.max_connections,
        "clean": summary.infra_errors == 0
        and summary.retries == 0
        and len(rows) == len(set(pairs)) == planned,
    }


def wide_markdown(result: dict[str, Any]) -> str:
    rows = [
        ["rollouts planned / rows written / distinct", f"{result['planned']} / {result['rows']} / {result['distinct_rows']}"],
        ["scored / infra errors (dropped connections) / retries", f"{result['scored']} / {result['infra_errors']} / {result['retries']}"],
        ["requests", f"{result['requests']:,}"],
        ["wall time (s) / rollouts per s", f"{result['wall_s']} / {result['rollouts_per_s']}"],
        ["the client's connection cap (openai's default)", str(result["client_max_connections"])],
    ]  # fmt: skip
    head = (
        f"run-model's runner at concurrency {result['concurrency']}, no retry allowed, {os.cpu_count()} CPUs"
    )
    lines = [head, "", "|  | value |", "|---|---:|", *(f"| {a} | {b} |" for a, b in rows)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16], help="default 1 4 16")
    parser.add_argument("--repeats", type=int, default=7, help="runs at each concurrency (default 7)")
    parser.add_argument("-n", type=int, default=None, help="cases of the eval split (default all)")
    parser.add_argument("--rollouts", type=int, default=2, help="rollouts of each case a run (default 2)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 4 cases, one repeat")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"), help="output directory")
    parser.add_argument(
        "--wide", type=int, default=None, metavar="C", help="one run at concurrency C (see above)"
    )
    args = parser.parse_args(argv)
    if args.wide is not None:
        return main_wide(args, argv)
    if args.quick:
        args.n, args.rollouts, args.repeats = 4, 1, 1
    result = run_benchmark(
        args.concurrency,
        args.repeats,
        args.n,
        args.rollouts,
        log=lambda stage: print(f"[llm_speed] {stage}", file=sys.stderr, flush=True),
    )
    write_results(Path(args.out), "llm_speed", result, markdown(result), argv)
    return 0


def write_results(out: Path, name: str, result: dict[str, Any], table: str, argv: list[str] | None) -> None:
    """``NAME.json`` and ``NAME.md`` (the table, with the command that made it) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")
    command = "python benchmarks/llm_speed.py " + " ".join(argv if argv is not None else sys.argv[1:])
    (out / f"{name}.md").write_text(f"<!-- made by: {command.strip()} -->\n\n{table}\n")
    print(table)


def main_wide(args: argparse.Namespace, argv: list[str] | None) -> int:
    rollouts = args.rollouts if args.rollouts != 2 else 16
    result = run_wide(args.wide, rollouts, log=lambda stage: print(f"[llm_speed] {stage}", file=sys.stderr))
    write_results(Path(args.out), "llm_speed_wide", result, wide_markdown(result), argv)
    return 0 if result["clean"] else 1


if __name__ == "__main__":
    sys.exit(main())
