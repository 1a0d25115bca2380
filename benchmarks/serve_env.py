"""The desks as network environments, measured: load, a soak, replicas behind HAProxy, parity.

``python benchmarks/serve_env.py`` starts ``batchgate serve-env`` processes on 127.0.0.1
and writes ``benchmarks/results/serve_env.json`` and ``.md``. Every client runs in a
process of its own, apart from the measurement (``--client-processes`` of them, the
sessions of a round dealt out between them), and the baseline is OpenEnv's own echo
environment on OpenEnv's ``create_app`` (``serve_floor.echo_app``), driven the same way:

* **load** (OpenEnv, the gate's eval split): 1, 8, 64 and 512 concurrent sessions, one
  careful episode each through OpenEnv's ``EnvClient``, for as many episodes as the round
  has sessions (at least one per eval case); steps per second and each step's round trip
  (p50, p99), and whether every episode's score equals the in-process report's. The echo
  column sends the same actions (careful's, recorded in this process on the same cases).
* **soak**: 2,048 sessions on one server (``--max-sessions 2048``, procedural cases), each
  connected and reset, left idle ``--idle-s`` seconds, then stepped once; the server's
  resident memory per live session; then a 2,049th connection, which must be refused
  with OpenEnv's ``CAPACITY_REACHED`` while every other session stays live. The echo
  (OpenEnv's defaults) is soaked the same way, for its memory.
* **balancer**: K gate servers behind Debian's HAProxy, the docs' configuration with a
  server line per process (K = 1, 2, 4), beside one server reached directly: the load
  round of 64 sessions through the front, and the sessions each server opened.
* **parity**: every desk, both protocols (OpenEnv, MCP over streamable HTTP), careful and
  the naive policy on the whole eval split: episodes whose reward and score terms equal
  ``batchgate report``'s and whose exported log replays under its head.

The machine is shared and has two cores: rounds are noisy, so the load and balancer
rounds are each run ``--repeats`` times and their medians recorded. Every request goes
to 127.0.0.1 only, and every loop is bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from serve_floor import rss_bytes, server

from batchgate_gym.desks import registry
from batchgate_gym.kernel.text_policy import as_policy
from batchgate_gym.serving.checking import compared, differences, report_rows
from batchgate_gym.serving.processes import ServedProcess, free_port, started, wait_listening

RESULTS = Path(__file__).resolve().parent / "results"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "serving.md"
CLIENTS = (1, 8, 64, 512)
SOAK_SESSIONS = 2048
BALANCED_CLIENTS = 64
REPLICAS = (1, 2, 4)
TIMEOUT_S = 600.0  # a safety net per message: never reached on a sound run


# --- one client process ------------------------------------------------------------------------------------


def careful_actions(cases: int) -> list[list[str]]:
    """Careful's actions on each eval case of the gate, played in this process (for the echo)."""
    spec = registry.get("gate")
    env = spec.make_env(spec.fixed_cases(split="eval"))
    try:
        return [
            list(actions_of(env, spec.policies.reference_policies["careful"], index))
            for index in range(cases)
        ]
    finally:
        env.close()


def actions_of(env: Any, policy_class: Any, index: int) -> Iterator[str]:
    """The actions of one episode on eval case ``index`` (seed ``index``), as it is played."""
    player = as_policy(policy_class)
    observation, info = env.reset(seed=index, options={"case_index": index})
    player.reset(observation, info)
    while True:
        action = player.act(observation)
        yield action
        observation, _reward, terminated, truncated, _info = env.step(action)
        if terminated or truncated:
            return


async def gate_episode(url: str, index: int, latencies: list[float]) -> dict[str, Any]:
    """One session, one careful episode on eval case ``index``; each step's round trip appended."""
    from batchgate_gym.serving.openenv_server import DeskAction, DeskEnvClient

    player = as_policy(registry.get("gate").policies.reference_policies["careful"])
    async with DeskEnvClient(
        base_url=url, connect_timeout_s=TIMEOUT_S, message_timeout_s=TIMEOUT_S
    ) as client:
        result = await client.reset(seed=index, case_index=index)
        player.reset(result.observation.text, {})
        while not result.done:
            action = DeskAction(action=player.act(result.observation.text))
            sent = time.perf_counter()
            result = await client.step(action)
            latencies.append(time.perf_counter() - sent)
        state = await client.state()
    return dict(state.model_dump(include={"case_id", "reward", "score", "log_head", "log"}))


async def echo_episode(url: str, actions: list[str], latencies: list[float]) -> dict[str, Any]:
    """The same episode's actions sent to the echo."""
    from openenv.core.generic_client import GenericEnvClient

    async with GenericEnvClient(
        base_url=url, connect_timeout_s=TIMEOUT_S, message_timeout_s=TIMEOUT_S
    ) as client:
        await client.reset(seed=0)
        for action in actions:
            sent = time.perf_counter()
            await client.step({"message": action})
            latencies.append(time.perf_counter() - sent)
    return {}


def load_client(job: tuple[str, str, list[int], int, list[list[str]]]) -> dict[str, Any]:
    """One client process: ``sessions`` at once over its share of episodes (case indexes)."""
    kind, url, indexes, sessions, actions = job

    async def run() -> list[tuple[int, dict[str, Any]]]:
        async def session(mine: list[int]) -> list[tuple[int, dict[str, Any]]]:
            played = []
            for index in mine:
                episode = (
                    await gate_episode(url, index, latencies)
                    if kind == "gate"
                    else await echo_episode(url, actions[index], latencies)
                )
                played.append((index, episode))
            return played

        everyone = await asyncio.gather(*(session(indexes[k::sessions]) for k in range(sessions)))
        return [p for chunk in everyone for p in chunk]

    import openenv.core.generic_client  # noqa: F401  imported before the clock starts

    import batchgate_gym.serving.openenv_server  # noqa: F401

    latencies: list[float] = []
    began = time.perf_counter()
    played = asyncio.run(run())
    return {"latencies": latencies, "wall_s": time.perf_counter() - began, "played": played}


# --- load --------------------------------------------------------------------------------------------------


def load_round(
    kind: str, url: str, clients: int, processes: int, cases: int, actions: list[list[str]]
) -> dict[str, Any]:
    """``clients`` sessions at once, dealt out over at most ``processes`` client processes."""
    episodes = [n % cases for n in range(max(clients, cases))]
    used = min(processes, clients)
    shares = [clients // used + (1 if p < clients % used else 0) for p in range(used)]
    jobs = [(kind, url, episodes[p::used], shares[p], actions) for p in range(used)]
    with multiprocessing.get_context("spawn").Pool(used) as pool:
        found = pool.map(load_client, jobs)
    latencies = sorted(t for part in found for t in part["latencies"])
    wall = max(part["wall_s"] for part in found)  # the slowest client process's, start-up left out
    return {
        "steps_per_s": len(latencies) / wall,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        "steps": len(latencies),
        "played": [p for part in found for p in part["played"]],
    }


def medians(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        key: round(statistics.median(r[key] for r in rounds), 2)
        for key in ("steps_per_s", "p50_ms", "p99_ms")
    }


def faults_of(played: list[tuple[int, dict[str, Any]]], rows: dict[str, Any]) -> list[str]:
    ids = list(rows)
    return [
        fault
        for index, episode in played
        for fault in differences("gate", {ids[index]: rows[ids[index]]}, [episode])
    ]


def measured_rounds(
    kind: str,
    url: str,
    clients: int,
    args: argparse.Namespace,
    actions: list[list[str]],
    rows: dict[str, Any],
) -> dict[str, Any]:
    """``--repeats`` rounds of ``clients`` sessions: medians, and every gate episode checked."""
    rounds = [
        load_round(kind, url, clients, args.client_processes, len(actions), actions)
        for _ in range(args.repeats)
    ]
    figures = medians(rounds) | {"steps": rounds[0]["steps"]}
    if kind == "gate":
        wrong = [fault for r in rounds for fault in faults_of(r["played"], rows)]
        figures |= {"scores_equal_in_process": not wrong, "faults": wrong[:5]}
    return figures


def load(gate: ServedProcess, echo_port: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = report_rows("gate", "careful")
    actions = careful_actions(len(rows))
    out = []
    for clients in CLIENTS:
        row = {
            "clients": clients,
            "gate": measured_rounds("gate", gate.url(), clients, args, actions, rows),
            "echo": measured_rounds("echo", f"http://127.0.0.1:{echo_port}", clients, args, actions, rows),
        }
        out.append(row)
        print(json.dumps(row), flush=True)
        gate.wait_for_live(0, within=120)
    return out


# --- the soak ---------------------------------------------------------------------------------------------


def soak_client(kind: str, port: int, first: int, count: int, phase: Any, results: Any) -> None:
    """``count`` sessions held at once: connect and reset, wait, one step each, wait, close."""
    from openenv.core.generic_client import GenericEnvClient

    async def run() -> dict[str, Any]:
        url = f"http://127.0.0.1:{port}"
        clients = [
            GenericEnvClient(base_url=url, connect_timeout_s=TIMEOUT_S, message_timeout_s=TIMEOUT_S)
            for _ in range(count)
        ]
        for start in range(0, count, 128):  # connect in waves: a handshake has its own timeout
            await asyncio.gather(*(c.connect() for c in clients[start : start + 128]))
        await asyncio.gather(*(c.reset(seed=first + i) for i, c in enumerate(clients)))
        await asyncio.to_thread(phase.wait)  # all held: the parent measures, then idles
        await asyncio.to_thread(phase.wait)
        latencies: list[float] = []

        async def step(client: Any) -> bool:
            sent = time.perf_counter()
            result = await client.step(
                {"message": "list_batches()"} if kind == "echo" else {"action": "list_batches()"}
            )
            latencies.append(time.perf_counter() - sent)
            return "batches" in str(result.observation) or kind == "echo"

        stepped = await asyncio.gather(*(step(c) for c in clients), return_exceptions=True)
        await asyncio.to_thread(phase.wait)  # every session has stepped
        await asyncio.to_thread(phase.wait)  # the parent has knocked a 2,049th time
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
        return {"stepped": sum(s is True for s in stepped), "latencies": latencies}

    results.put(run_safely(run))


def run_safely(run: Any) -> dict[str, Any]:
    try:
        return dict(asyncio.run(run()))
    except Exception as exc:  # reported in the results, never hidden
        return {"stepped": 0, "latencies": [], "error": f"{type(exc).__name__}: {exc}"}


async def knock(port: int) -> dict[str, Any]:
    """One more connection: what the server answers it (its first message, or how it closed)."""
    import websockets

    async with websockets.connect(f"ws://127.0.0.1:{port}/ws", open_timeout=TIMEOUT_S) as ws:
        try:
            return dict(json.loads(await asyncio.wait_for(ws.recv(), 60)))
        except websockets.ConnectionClosed as closed:
            return {"closed": str(closed)}


def soak(kind: str, port: int, pid: int, args: argparse.Namespace, live: Any) -> dict[str, Any]:
    """``SOAK_SESSIONS`` sessions held over ``--client-processes`` processes (see the module text);
    ``live`` reads the server's live sessions, None for the echo (which has no cap at 2,048 and
    is not knocked on)."""
    context = multiprocessing.get_context("spawn")
    processes = args.client_processes
    phase, results = context.Barrier(processes + 1), context.Queue()
    share = SOAK_SESSIONS // processes
    workers = [
        context.Process(target=soak_client, args=(kind, port, 10_000 + p * share, share, phase, results))
        for p in range(processes)
    ]
    idle = rss_bytes(pid)
    for worker in workers:
        worker.start()
    try:
        phase.wait(timeout=TIMEOUT_S)
        held_rss, live_seen = rss_bytes(pid), live and live()
        time.sleep(args.idle_s)
        phase.wait(timeout=TIMEOUT_S)
        phase.wait(timeout=TIMEOUT_S)  # every session has stepped
        refused = asyncio.run(knock(port)) if live else {}
        live_after = live and live()
        phase.wait(timeout=TIMEOUT_S)
        found = [results.get(timeout=TIMEOUT_S) for _ in workers]
    finally:
        for worker in workers:
            worker.join(timeout=60)
            worker.kill()
    latencies = sorted(t for part in found for t in part["latencies"])
    return {
        "sessions": SOAK_SESSIONS,
        "live_seen": live_seen,
        "idle_s": args.idle_s,
        "stepped": sum(part["stepped"] for part in found),
        "errors": [part["error"] for part in found if "error" in part],
        "kb_per_live_session": round((held_rss - idle) / 1024 / SOAK_SESSIONS, 1),
        "p99_step_ms": round(1000 * latencies[int(0.99 * (len(latencies) - 1))], 1) if latencies else None,
        "next_refused": refused.get("data", {}).get("code") == "CAPACITY_REACHED" if live else None,
        "live_after_refusal": live_after,
        "next_answer": refused,
    }


def soaks(args: argparse.Namespace) -> dict[str, Any]:
    """The gate (procedural cases) and the echo (OpenEnv's defaults), each soaked alone."""
    out = {}
    with started(("--desk", "gate", "--max-sessions", str(SOAK_SESSIONS))) as (gate,):
        warm(gate.port, "gate")
        out["gate"] = soak("gate", gate.port, gate.process.pid, args, lambda: gate.sessions()["live"])
        print(json.dumps({"gate": out["gate"]}), flush=True)
    with server("echo") as (port, pid):
        warm(port, "echo")
        out["echo"] = soak("echo", port, pid, args, None)
        print(json.dumps({"echo": out["echo"]}), flush=True)
    return out


def warm(port: int, kind: str) -> None:
    """A few sessions first: imports and first cases done before memory is measured."""
    from serve_floor import sessions

    asyncio.run(sessions(kind, port, 0, 4, 2))


# --- K servers behind HAProxy -----------------------------------------------------------------------------


def haproxy_config(front: int, ports: list[int]) -> str:
    """The docs' HAProxy configuration (the one tests/serving/test_balancer.py runs), its front
    on ``front`` and a server line per port."""
    config = DOCS.read_text().split("with `desks.cfg`:\n\n```\n", 1)[1].split("```", 1)[0]
    kept = [line for line in config.splitlines() if not line.strip().startswith("server ")]
    servers = [f"    server gate{k + 1} 127.0.0.1:{port}" for k, port in enumerate(ports)]
    return "\n".join(kept + servers).replace("127.0.0.1:8000", f"127.0.0.1:{front}") + "\n"


@contextmanager
def balancer(ports: list[int]) -> Iterator[int]:
    """Debian's HAProxy in front of ``ports``: its front port."""
    front = free_port()
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "desks.cfg"
        config.write_text(haproxy_config(front, ports))
        process = subprocess.Popen(
            ["haproxy", "-f", str(config), "-db"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            wait_listening(front)
            yield front
        finally:
            process.terminate()
            process.wait(timeout=30)


def balanced(args: argparse.Namespace) -> list[dict[str, Any]]:
    """One server reached directly, then K servers behind HAProxy: the 64-session load round."""
    rows = report_rows("gate", "careful")
    actions = careful_actions(len(rows))
    command = ("--desk", "gate", "--split", "eval", "--max-sessions", "600")
    out = []
    for replicas in (0, *REPLICAS):  # 0: one server, no balancer
        with started(*[command] * max(1, replicas)) as servers:
            if replicas:
                with balancer([s.port for s in servers]) as front:
                    figures = measured_rounds(
                        "gate", f"http://127.0.0.1:{front}", BALANCED_CLIENTS, args, actions, rows
                    )
            else:
                figures = measured_rounds("gate", servers[0].url(), BALANCED_CLIENTS, args, actions, rows)
            figures["opened_per_server"] = [s.sessions()["opened"] for s in servers]
        out.append({"servers": max(1, replicas), "haproxy": bool(replicas), **figures})
        print(json.dumps(out[-1]), flush=True)
    return out


# --- parity ----------------------------------------------------------------------------------------------


async def over_openenv(base: str, policy: Any, ids: list[str]) -> list[dict[str, Any]]:
    from batchgate_gym.serving.clients import play_openenv
    from batchgate_gym.serving.openenv_server import DeskEnvClient

    async with DeskEnvClient(base_url=base, message_timeout_s=TIMEOUT_S) as client:
        return [
            await play_openenv(client, policy, {"seed": n, "case_id": case_id})
            for n, case_id in enumerate(ids)
        ]


async def over_mcp(base: str, policy: Any, ids: list[str]) -> list[dict[str, Any]]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from batchgate_gym.serving.clients import play_mcp

    played = []
    for n, case_id in enumerate(ids):
        url = f"{base}/mcp?" + urllib.parse.urlencode({"seed": n, "case_id": case_id})
        async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as session:
            await session.initialize()
            played.append(await play_mcp(session, policy))
    return played


def parity_job(job: tuple[str, str, int, str]) -> dict[str, Any]:
    """In a client process: one desk's policy over one protocol, every eval case."""
    desk, protocol, port, policy = job
    rows = report_rows(desk, policy)
    play = over_openenv if protocol == "openenv" else over_mcp
    began = time.perf_counter()
    played = asyncio.run(
        play(f"http://127.0.0.1:{port}", registry.get(desk).policies.reference_policies[policy], list(rows))
    )
    faults = differences(desk, rows, played)
    return {
        "episodes": len(played),
        "equal_and_replayed": len(played) - len(faults),
        "faults": faults[:5],
        "wall_s": round(time.perf_counter() - began, 1),
    }


def parity_into(found: Any) -> None:
    found.put(parity())


def parity() -> dict[str, Any]:
    commands = []
    for desk in registry.names():
        commands += [
            ("--desk", desk, "--split", "eval"),
            ("--desk", desk, "--split", "eval", "--protocol", "mcp"),
        ]
    out: dict[str, Any] = {}
    with started(*commands) as servers, multiprocessing.get_context("spawn").Pool(1) as pool:
        for index, (desk, protocol) in enumerate(
            (d, p) for d in registry.names() for p in ("openenv", "mcp")
        ):
            for policy in compared(desk):
                found = pool.apply(parity_job, ((desk, protocol, servers[index].port, policy),))
                out.setdefault(desk, {}).setdefault(protocol, {})[policy] = found
                print(
                    desk, protocol, policy, f"{found['equal_and_replayed']}/{found['episodes']}", flush=True
                )
    return out


# --- output ----------------------------------------------------------------------------------------------


def section(intro: list[str], columns: list[str], alignment: str, rows: list[list[Any]]) -> list[str]:
    """A table in Markdown below its lines of introduction."""
    body = ["| " + " | ".join(map(str, row)) + " |" for row in rows]
    return ["", *intro, "", "| " + " | ".join(columns) + " |", alignment, *body]


def yes(flag: bool) -> str:
    return "yes" if flag else "NO"


def load_table(results: dict[str, Any]) -> list[str]:
    s = results["settings"]
    intro = [
        "Load: OpenEnv WebSocket sessions on the gate's eval split, one careful episode each, the",
        f"clients in {s['client_processes']} processes of their own; the echo (OpenEnv's `create_app`, its",
        f"defaults) gets the same actions. Medians of {s['repeats']} rounds on {results['machine']['cpus']}"
        " shared CPUs (noisy: the load average is in the JSON).",
    ]
    columns = ["sessions at once", "gate steps/s", "gate p50 ms", "gate p99 ms"]
    columns += ["echo steps/s", "echo p50 ms", "echo p99 ms", "scores equal in-process"]
    rows = [
        [r["clients"], *(r[k][f] for k in ("gate", "echo") for f in ("steps_per_s", "p50_ms", "p99_ms"))]
        + [yes(r["gate"]["scores_equal_in_process"])]
        for r in results["load"]
    ]
    return section(intro, columns, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: |", rows)[1:]


def soak_table(results: dict[str, Any]) -> list[str]:
    intro = [
        f"Soak: {SOAK_SESSIONS:,} sessions on one server, each connected and reset, idle"
        f" {results['settings']['idle_s']:g} s, then stepped once; then one connection more."
    ]
    columns = [
        "server",
        "live sessions",
        "stepped",
        "p99 step ms",
        "KB per live session",
        "the next connection",
    ]
    labels = {"gate": "gate, procedural cases", "echo": "OpenEnv echo (create_app, its defaults)"}
    rows = []
    for kind, label in labels.items():
        f = results["soak"][kind]
        live = "-" if f["live_seen"] is None else f"{f['live_seen']:,}"
        answer = {None: "-", True: "refused: CAPACITY_REACHED", False: "ADMITTED"}[f["next_refused"]]
        rows.append([label, live, f"{f['stepped']:,}", f["p99_step_ms"], f["kb_per_live_session"], answer])
    return section(intro, columns, "| --- | ---: | ---: | ---: | ---: | --- |", rows)


def balancer_table(results: dict[str, Any]) -> list[str]:
    intro = [
        f"Replicas: the gate's eval split, {BALANCED_CLIENTS} sessions at once (careful), through one server"
        " directly or",
        "K servers behind Debian's HAProxy (the configuration of docs/serving.md, a server line per process).",
    ]
    columns = [
        "servers",
        "HAProxy",
        "steps/s",
        "p50 ms",
        "p99 ms",
        "sessions each server opened (all rounds)",
    ]
    rows = [
        [r["servers"], "yes" if r["haproxy"] else "no", r["steps_per_s"], r["p50_ms"], r["p99_ms"]]
        + [", ".join(map(str, r["opened_per_server"])), yes(r["scores_equal_in_process"])]
        for r in results["balancer"]
    ]
    columns.append("scores equal in-process")
    return section(intro, columns, "| ---: | :---: | ---: | ---: | ---: | --- | :---: |", rows)


def parity_table(results: dict[str, Any]) -> list[str]:
    intro = [
        "Parity: episodes whose reward and score terms equal `batchgate report`'s and whose exported log",
        "replays under its head, over the whole eval split.",
    ]
    rows = []
    for desk, protocols in results["parity"].items():
        for policy in compared(desk):
            cells = [protocols[p][policy] for p in ("openenv", "mcp")]
            rows.append([desk, policy, *(f"{c['equal_and_replayed']} / {c['episodes']}" for c in cells)])
    columns = ["desk", "policy", "OpenEnv", "MCP (streamable HTTP)"]
    return section(intro, columns, "| --- | --- | ---: | ---: |", rows)


def markdown(results: dict[str, Any]) -> str:
    tables = load_table(results) + soak_table(results) + balancer_table(results) + parity_table(results)
    return "\n".join(tables) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for serve_env.json and .md")
    parser.add_argument("--client-processes", type=int, default=2, help="processes the clients run in")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of each load figure (medians kept)")
    parser.add_argument("--idle-s", type=float, default=15.0, help="seconds the soak's sessions sit idle")
    parser.add_argument("--skip-parity", action="store_true", help="no parity: the .md is not written")
    args = parser.parse_args(argv)
    if shutil.which("haproxy") is None:
        parser.error("HAProxy is not installed (apt-get install haproxy)")
    results: dict[str, Any] = {
        "command": "python benchmarks/serve_env.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "settings": {k: v for k, v in vars(args).items() if k != "out"} | {"out": str(args.out)},
        # The load average at the start: on a shared machine the figures move with it.
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average": os.getloadavg(),
        },
    }
    # Parity takes longest and measures no speed: it plays in a process of its own, alongside.
    context = multiprocessing.get_context("spawn")
    found: Any = context.Queue()
    alongside = context.Process(target=parity_into, args=(found,))
    if not args.skip_parity:
        alongside.start()
    results["soak"] = soaks(args)  # first: memory before any load grows a heap
    with (
        started(("--desk", "gate", "--split", "eval", "--max-sessions", "600")) as (gate,),
        server("echo") as (port, _),
    ):
        results["load"] = load(gate, port, args)
    results["balancer"] = balanced(args)
    if not args.skip_parity:
        results["parity"] = found.get(timeout=3 * 3600)
        alongside.join()
    results["machine"]["load_average_after"] = os.getloadavg()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "serve_env.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    if "parity" in results:
        (args.out / "serve_env.md").write_text(markdown(results))
    print(markdown(results) if "parity" in results else "")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
