"""The desks as network environments, measured: load, memory and parity with the report.

``python benchmarks/serve_env.py`` starts ``batchgate serve-env`` processes on
127.0.0.1 and writes ``benchmarks/results/serve_env.json`` and ``.md``:

* **load** (OpenEnv, the gate's eval split, careful): 1, 8, 64 and 500 concurrent
  clients, each a WebSocket session per episode through OpenEnv's own
  ``EnvClient``; sessions opened per second, steps per second, p50 and p95 step
  latency (request to answer, seen by the client), and whether every episode's
  score equals the in-process report's. The clients run in this process, on the
  same two cores as the server: the figures are the whole loop's, not the
  server's alone.
* **memory** (measured first, on a server warmed by a few episodes): the
  server's resident memory with no session, then with 500 live sessions
  (connected and reset), per live session; and live sessions once they have
  closed.
* **parity**: every desk, both protocols (OpenEnv, MCP over streamable HTTP),
  careful and the naive policy on the whole eval split: episodes whose reward and
  score terms equal ``batchgate report``'s and whose exported log replays under
  its head.

Every request goes to 127.0.0.1 only, and every loop is bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import time
import urllib.parse
from pathlib import Path
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.kernel.text_policy import as_policy
from batchgate_gym.serving.checking import COMPARED, differences, report_rows
from batchgate_gym.serving.processes import ServedProcess, started

RESULTS = Path(__file__).resolve().parent / "results"
CLIENTS = (1, 8, 64, 500)
LIVE_SESSIONS = 500
TIMEOUT_S = 600.0  # a safety net per message: never reached on a sound run


# --- load ------------------------------------------------------------------------------------------------


async def careful_episode(url: str, index: int, latencies: list[float]) -> dict[str, Any]:
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


async def load_round(server: ServedProcess, clients: int, cases: int) -> dict[str, Any]:
    """``clients`` at once, max(clients, cases) episodes in all, each client's in turn."""
    episodes = max(clients, cases)
    latencies: list[float] = []

    async def client(first: int) -> list[tuple[int, dict[str, Any]]]:
        played = []
        for number in range(first, episodes, clients):
            played.append((number % cases, await careful_episode(server.url(), number % cases, latencies)))
        return played

    began = time.perf_counter()
    everyone = await asyncio.gather(*(client(k) for k in range(clients)))
    wall = time.perf_counter() - began
    return {
        "episodes": episodes,
        "wall_s": wall,
        "latencies": latencies,
        "played": [p for c in everyone for p in c],
    }


def load(server: ServedProcess) -> list[dict[str, Any]]:
    rows = report_rows("gate", "careful")
    ids = list(rows)
    rounds = []
    for clients in CLIENTS:
        measured = asyncio.run(load_round(server, clients, len(ids)))
        wrong = [
            fault
            for index, episode in measured["played"]
            for fault in differences("gate", {ids[index]: rows[ids[index]]}, [episode])
        ]
        steps = sorted(measured["latencies"])
        rounds.append(
            {
                "clients": clients,
                "sessions": measured["episodes"],
                "steps": len(steps),
                "wall_s": round(measured["wall_s"], 3),
                "sessions_per_s": round(measured["episodes"] / measured["wall_s"], 1),
                "steps_per_s": round(len(steps) / measured["wall_s"], 1),
                "p50_step_ms": round(1000 * statistics.median(steps), 2),
                "p95_step_ms": round(1000 * steps[int(0.95 * (len(steps) - 1))], 2),
                "scores_equal_in_process": not wrong,
                "faults": wrong[:5],
            }
        )
        print(json.dumps({k: v for k, v in rounds[-1].items() if k != "faults"}), flush=True)
        server.wait_for_live(0, within=60)
    return rounds


async def hold_sessions(server: ServedProcess, count: int) -> dict[str, Any]:
    """``count`` sessions connected and reset at once; the server's memory with them live."""
    from batchgate_gym.serving.openenv_server import DeskEnvClient

    idle = server.rss_bytes()
    clients = [
        DeskEnvClient(base_url=server.url(), connect_timeout_s=TIMEOUT_S, message_timeout_s=TIMEOUT_S)
        for _ in range(count)
    ]
    await asyncio.gather(*(client.connect() for client in clients))
    await asyncio.gather(*(client.reset(seed=i, case_index=i % 32) for i, client in enumerate(clients)))
    live = server.sessions()["live"]
    busy = server.rss_bytes()
    await asyncio.gather(*(client.close() for client in clients))
    after = server.wait_for_live(0, within=60)["live"]
    return {
        "sessions": count,
        "live_seen": live,
        "rss_idle_mb": round(idle / 2**20, 1),
        "rss_live_mb": round(busy / 2**20, 1),
        "per_session_kb": round((busy - idle) / count / 1024, 1),
        "live_after_close": after,
        "rss_after_close_mb": round(server.rss_bytes() / 2**20, 1),
    }


# --- parity ----------------------------------------------------------------------------------------------


async def over_openenv(server: ServedProcess, policy: Any, ids: list[str]) -> list[dict[str, Any]]:
    from batchgate_gym.serving.clients import play_openenv
    from batchgate_gym.serving.openenv_server import DeskEnvClient

    async with DeskEnvClient(base_url=server.url(), message_timeout_s=TIMEOUT_S) as client:
        return [
            await play_openenv(client, policy, {"seed": n, "case_id": case_id})
            for n, case_id in enumerate(ids)
        ]


async def over_mcp(server: ServedProcess, policy: Any, ids: list[str]) -> list[dict[str, Any]]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from batchgate_gym.serving.clients import play_mcp

    played = []
    for n, case_id in enumerate(ids):
        url = server.url("/mcp?" + urllib.parse.urlencode({"seed": n, "case_id": case_id}))
        async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as session:
            await session.initialize()
            played.append(await play_mcp(session, policy))
    return played


def parity(servers: dict[tuple[str, str], ServedProcess]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for (desk, protocol), server in servers.items():
        spec = registry.get(desk)
        for policy in COMPARED[desk]:
            rows = report_rows(desk, policy)
            play = over_openenv if protocol == "openenv" else over_mcp
            began = time.perf_counter()
            played = asyncio.run(play(server, spec.policies.reference_policies[policy], list(rows)))
            faults = differences(desk, rows, played)
            out.setdefault(desk, {}).setdefault(protocol, {})[policy] = {
                "episodes": len(played),
                "equal_and_replayed": len(played) - len(faults),
                "faults": faults[:5],
                "wall_s": round(time.perf_counter() - began, 1),
            }
            print(desk, protocol, policy, f"{len(played) - len(faults)}/{len(played)}", flush=True)
    return out


# --- output ----------------------------------------------------------------------------------------------


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "Load: OpenEnv WebSocket sessions on the gate's eval split, careful, one session per episode",
        "(clients in the same process as the measurement, on the same two cores as the server).",
        "",
        "| clients | sessions | sessions/s | steps/s | p50 step ms | p95 step ms | scores equal in-process |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | :---: |",
    ]
    for row in results["load"]:
        lines.append(
            f"| {row['clients']} | {row['sessions']} | {row['sessions_per_s']} | {row['steps_per_s']} |"
            f" {row['p50_step_ms']} | {row['p95_step_ms']} | {'yes' if row['scores_equal_in_process'] else 'NO'} |"
        )
    memory = results["memory"]
    lines += [
        "",
        f"Memory: {memory['sessions']} live sessions (connected and reset) take the server from"
        f" {memory['rss_idle_mb']} MB to {memory['rss_live_mb']} MB resident,"
        f" {memory['per_session_kb']} KB per live session; once they close, {memory['live_after_close']}"
        f" sessions are live ({memory['rss_after_close_mb']} MB resident).",
        "",
        "Parity: episodes whose reward and score terms equal `batchgate report`'s and whose exported log",
        "replays under its head, over the whole eval split.",
        "",
        "| desk | policy | OpenEnv | MCP (streamable HTTP) |",
        "| --- | --- | ---: | ---: |",
    ]
    for desk, protocols in results["parity"].items():
        for policy in COMPARED[desk]:
            cells = [
                f"{protocols[p][policy]['equal_and_replayed']} / {protocols[p][policy]['episodes']}"
                for p in ("openenv", "mcp")
            ]
            lines.append(f"| {desk} | {policy} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for serve_env.json and .md")
    parser.add_argument("--skip-parity", action="store_true", help="load and memory only")
    args = parser.parse_args(argv)
    commands = [("--desk", "gate", "--split", "eval", "--max-sessions", "600")]
    if not args.skip_parity:
        for desk in COMPARED:
            commands += [
                ("--desk", desk, "--split", "eval"),
                ("--desk", desk, "--split", "eval", "--protocol", "mcp"),
            ]
    with started(*commands) as servers:
        results: dict[str, Any] = {
            "command": "python benchmarks/serve_env.py",
            # The load average at the start: on a shared machine the figures move with it.
            "machine": {
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "load_average": os.getloadavg(),
            },
        }
        asyncio.run(load_round(servers[0], 4, 8))  # warm: imports, the case cache, the first sessions
        results["memory"] = asyncio.run(
            hold_sessions(servers[0], LIVE_SESSIONS)
        )  # before load grows the heap
        print(json.dumps(results["memory"]), flush=True)
        results["load"] = load(servers[0])
        if not args.skip_parity:
            named = {}
            for desk_index, desk in enumerate(COMPARED):
                named[(desk, "openenv")] = servers[1 + 2 * desk_index]
                named[(desk, "mcp")] = servers[2 + 2 * desk_index]
            results["parity"] = parity(named)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "serve_env.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    if "parity" in results:
        (args.out / "serve_env.md").write_text(markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
