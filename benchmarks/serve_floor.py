"""The served step against the protocol's floor: the gate's OpenEnv server beside an echo.

The echo is an environment that does nothing but answer each step with its action's
text, served by OpenEnv's own ``create_app`` in production mode exactly as the desks
are, twice: on OpenEnv's and uvicorn's defaults (a worker thread per session,
per-message deflate), and served as serve-env serves a desk (one worker thread shared by
the sessions, no deflate), so that the gate's cost beyond the protocol shows apart from
what the serving choices save. Each server runs in a process of its own on 127.0.0.1;
the clients, OpenEnv's ``GenericEnvClient`` (the same for all), run in ``--client-processes`` further
processes, each holding ``--sessions`` sessions at once, each session a reset
(a procedural gate case drawn from its seed) and ``--steps`` steps of the same action
(``list_batches()``, a read the gate answers from its world). Per server:

* steps per second over the run (wall clock of the slowest client process, from its first
  connection), and each step's round trip seen by the clients: p50 and p99;
* the server's CPU time per step (user + system from ``/proc``, over the run, resets
  included) and the gate's ratio to each echo's;
* resident memory per live session: ``--live`` sessions connected and reset at once,
  the server's resident memory before and with them, divided by their number.

Writes ``benchmarks/results/serve_floor.{json,md}``. Every request goes to 127.0.0.1,
and every loop is bounded.

    python benchmarks/serve_floor.py [--client-processes 2] [--sessions 16] [--steps 20] [--live 256]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from batchgate_gym.serving.processes import free_port, wait_listening

RESULTS = Path(__file__).resolve().parent / "results"
ACTION = "list_batches()"
ECHOES = ("echo", "echo-lean")
SERVERS = {
    "echo": "OpenEnv echo (create_app, OpenEnv's and uvicorn's defaults)",
    "echo-lean": "OpenEnv echo (create_app, served as serve-env serves)",
    "gate": "gate, procedural cases (serve-env)",
}
TICK = os.sysconf("SC_CLK_TCK")


# --- the echo, on OpenEnv's own server ---------------------------------------------------------------


def echo_app(shared_thread: bool) -> Any:
    """OpenEnv's ``create_app`` serving an environment that echoes each action's text; its
    sessions on one shared worker thread (as serve-env's are) or each on its own (OpenEnv's
    default)."""
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, ConcurrencyConfig, Observation, ServerMode, State

    class EchoAction(Action):
        message: str = ""

    class EchoObservation(Observation):
        text: str = ""

    class EchoEnvironment(Environment[EchoAction, EchoObservation, State]):
        SUPPORTS_CONCURRENT_SESSIONS = True
        REQUIRES_SINGLE_THREAD_EXECUTOR = shared_thread

        def __init__(self) -> None:
            super().__init__()
            self._state = State(episode_id=None, step_count=0)

        def reset(self, seed: int | None = None, episode_id: str | None = None, **_: Any) -> EchoObservation:
            self._state = State(episode_id=episode_id, step_count=0)
            return EchoObservation(text="ready", reward=None, done=False)

        def step(self, action: EchoAction, timeout_s: float | None = None, **_: Any) -> EchoObservation:
            self._state.step_count += 1
            return EchoObservation(text=action.message, reward=0.0, done=False)

        @property
        def state(self) -> State:
            return self._state

    return create_app(
        EchoEnvironment,
        EchoAction,
        EchoObservation,
        env_name="echo",
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=4096, session_timeout=600.0),
        mode=ServerMode.PRODUCTION,
    )


def serve_echo(port: int, lean: bool) -> None:
    """The echo on uvicorn: with OpenEnv's and uvicorn's defaults, or (``lean``) served as
    serve-env serves a desk: one shared worker thread, no per-message deflate."""
    import uvicorn

    uvicorn.run(
        echo_app(shared_thread=lean),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        ws_max_size=2**24,
        ws_per_message_deflate=not lean,
    )


# --- servers -------------------------------------------------------------------------------------------


@contextmanager
def server(kind: str) -> Iterator[tuple[int, int]]:
    """The gate's serve-env (procedural cases) or an echo, in a process of its own: (port, pid)."""
    port = free_port()
    if kind in ECHOES:
        command = [sys.executable, __file__, f"--{kind}-server", str(port)]
    else:
        command = [
            sys.executable,
            "-m",
            "batchgate_gym",
            "serve-env",
            "--port",
            str(port),
            "--max-sessions",
            "4096",
        ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, within=240)  # a loaded two-core machine imports slowly
        yield port, process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


# --- clients -------------------------------------------------------------------------------------------


def action_of(kind: str) -> dict[str, str]:
    return {"message": ACTION} if kind in ECHOES else {"action": ACTION}


async def sessions(kind: str, port: int, first_seed: int, count: int, steps: int) -> list[float]:
    """``count`` sessions at once, each a reset and ``steps`` steps; every step's round trip."""
    from openenv.core.generic_client import GenericEnvClient

    latencies: list[float] = []

    async def one(seed: int) -> None:
        async with GenericEnvClient(base_url=f"http://127.0.0.1:{port}") as client:
            await client.reset(seed=seed)
            for _ in range(steps):
                sent = time.perf_counter()
                await client.step(action_of(kind))
                latencies.append(time.perf_counter() - sent)

    await asyncio.gather(*(one(first_seed + i) for i in range(count)))
    return latencies


def client_process(job: tuple[str, int, int, int, int]) -> tuple[list[float], float]:
    """One client process's round trips, and its own wall time (its start-up left out)."""
    kind, port, first_seed, count, steps = job
    began = time.perf_counter()
    latencies = asyncio.run(sessions(kind, port, first_seed, count, steps))
    return latencies, time.perf_counter() - began


def load(kind: str, port: int, pid: int, processes: int, count: int, steps: int) -> dict[str, Any]:
    jobs = [(kind, port, 1000 + p * count, count, steps) for p in range(processes)]
    before = cpu_seconds(pid)
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        found = pool.map(client_process, jobs)
    cpu = cpu_seconds(pid) - before
    wall = max(seconds for _, seconds in found)  # the slowest client's, from its first connection
    latencies = sorted(t for chunk, _ in found for t in chunk)
    return {
        "steps": len(latencies),
        "steps_per_s": round(len(latencies) / wall, 1),
        "p50_ms": round(1000 * statistics.median(latencies), 2),
        "p99_ms": round(1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], 2),
        "server_cpu_ms_per_step": round(1000 * cpu / len(latencies), 3),
    }


async def hold(port: int, pid: int, count: int) -> int:
    """``count`` sessions connected and reset at once: the server's resident memory with them."""
    from openenv.core.generic_client import GenericEnvClient

    clients = [GenericEnvClient(base_url=f"http://127.0.0.1:{port}") for _ in range(count)]
    await asyncio.gather(*(c.connect() for c in clients))
    await asyncio.gather(*(c.reset(seed=5000 + i) for i, c in enumerate(clients)))
    measured = rss_bytes(pid)
    await asyncio.gather(*(c.close() for c in clients))
    return measured


def memory(kind: str, port: int, pid: int, count: int) -> dict[str, Any]:
    asyncio.run(sessions(kind, port, 0, 4, 2))  # warm: imports and first cases done
    idle = rss_bytes(pid)
    live = asyncio.run(hold(port, pid, count))
    return {"live_sessions": count, "kb_per_live_session": round((live - idle) / 1024 / count, 1)}


def in_process_cpu_ms(args: argparse.Namespace) -> float:
    """The gate's own work in the load's episodes: the same resets and steps on the server's
    environment class in this process, each observation serialized as OpenEnv sends it, no
    server and no client. CPU time of this process per step, after a warm-up episode."""
    from openenv.core.env_server.serialization import serialize_observation

    from batchgate_gym.serving.episodes import DeskCatalog
    from batchgate_gym.serving.openenv_server import DeskAction, DeskEnvironment

    env, action = DeskEnvironment(DeskCatalog("gate", protocol="openenv")), DeskAction(action=ACTION)
    seeds = [1000 + n for n in range(args.client_processes * args.sessions)]

    def episode(seed: int) -> None:
        serialize_observation(env.reset(seed=seed))
        for _ in range(args.steps):
            serialize_observation(env.step(action))

    episode(0)
    began = time.process_time()
    for seed in seeds:
        episode(seed)
    return 1000 * (time.process_time() - began) / (len(seeds) * args.steps)


def run(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"settings": vars(args) | {"cpus": os.cpu_count()}, "servers": {}}
    out["gate_in_process_cpu_ms_per_step"] = round(in_process_cpu_ms(args), 3)
    for kind in SERVERS:
        with server(kind) as (port, pid):
            figures = memory(kind, port, pid, args.live)
            figures.update(load(kind, port, pid, args.client_processes, args.sessions, args.steps))
        out["servers"][kind] = figures
        print(json.dumps({kind: figures}), flush=True)
    gate = out["servers"]["gate"]["server_cpu_ms_per_step"]
    out["cpu_ratio_to"] = {
        kind: round(gate / out["servers"][kind]["server_cpu_ms_per_step"], 2) for kind in ECHOES
    }
    return out


def markdown(result: dict[str, Any]) -> str:
    s = result["settings"]
    head = (
        f"OpenEnv (GenericEnvClient) in {s['client_processes']} client processes x {s['sessions']} sessions,"
        f" {s['steps']} steps of `{ACTION}` each after a reset; {s['live']} live sessions for memory;"
        f" {s['cpus']} CPUs shared by servers and clients."
    )
    rows = [
        "| server | steps/s | p50 step ms | p99 step ms | server CPU ms per step | KB per live session |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for kind, label in SERVERS.items():
        f = result["servers"][kind]
        rows.append(
            f"| {label} | {f['steps_per_s']:,} | {f['p50_ms']} | {f['p99_ms']} |"
            f" {f['server_cpu_ms_per_step']} | {f['kb_per_live_session']} |"
        )
    ratios = result["cpu_ratio_to"]
    ratio = (
        f"The gate's server CPU per step is {ratios['echo']}x the echo's on OpenEnv's defaults and"
        f" {ratios['echo-lean']}x the echo's served as serve-env serves (target: at most 1.1x)."
    )
    own = (
        f"The same episodes played on the gate's environment in one process, no server, observations"
        f" serialized as OpenEnv sends them: {result['gate_in_process_cpu_ms_per_step']} ms of CPU per step."
    )
    return "\n".join([head, "", *rows, "", ratio, own])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client-processes", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=16, help="sessions at once in each client process")
    parser.add_argument("--steps", type=int, default=20, help="steps of each session after its reset")
    parser.add_argument("--live", type=int, default=256, help="sessions held at once for the memory figure")
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("--echo-server", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--echo-lean-server", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.echo_server is not None or args.echo_lean_server is not None:
        serve_echo(args.echo_server or args.echo_lean_server, lean=args.echo_lean_server is not None)
        return 0
    result = run(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "serve_floor.json").write_text(json.dumps(result, indent=1) + "\n")
    command = "python benchmarks/serve_floor.py " + " ".join(argv if argv is not None else sys.argv[1:])
    table = markdown(result)
    (out / "serve_floor.md").write_text(f"<!-- made by: {command.strip()} -->\n\n{table}\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
