"""Several servers behind one address: Debian's HAProxy in front of two ``serve-env``
processes, with the configuration docs/serving.md gives, run as written (on free ports).

Over MCP and over OpenEnv, with each protocol's own client: every session stays on the
server that opened it, the episodes score as ``batchgate report`` scores them, and a
server killed in the middle of episodes takes only its own sessions with it (their
clients see the connection gone), while every other session plays on to its score.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from batchgate_gym.desks import registry
from batchgate_gym.kernel.text_policy import as_policy
from batchgate_gym.serving.processes import free_port, wait_listening

from .support import Served, report_rows, same_as_report, serving

pytest.importorskip("mcp", reason="the mcp extra is not installed")
pytest.importorskip("openenv", reason="the openenv extra is not installed")

pytestmark = [
    pytest.mark.slow,  # two servers and a balancer per protocol
    pytest.mark.skipif(
        shutil.which("haproxy") is None, reason="HAProxy is not installed (apt-get install haproxy)"
    ),
]

DOCS = Path(__file__).resolve().parents[2] / "docs" / "serving.md"
CASES = 6  # sessions played through the balancer, the first eval cases


def docs_config(front: int, servers: list[Served]) -> str:
    """The docs' HAProxy configuration, its ports replaced by the test's."""
    page = DOCS.read_text()
    config = page.split("with `desks.cfg`:\n\n```\n", 1)[1].split("```", 1)[0]
    ports = [f"127.0.0.1:{port}" for port in (8001, 8002)]
    assert all(port in config for port in ports) and "127.0.0.1:8000" in config
    config = config.replace("127.0.0.1:8000", f"127.0.0.1:{front}")
    for port, served in zip(ports, servers, strict=True):
        config = config.replace(port, f"127.0.0.1:{served.port}")
    return config


@pytest.fixture
def balanced(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, int, list[Served]]]:
    protocol = request.param
    command = ("--protocol", protocol, "--desk", "gate", "--split", "eval")
    with serving(command, command) as servers:
        front = free_port()
        config = tmp_path / "desks.cfg"
        config.write_text(docs_config(front, servers))
        balancer = subprocess.Popen(
            ["haproxy", "-f", str(config), "-db"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_listening(front)
            yield protocol, front, servers
        finally:
            balancer.terminate()
            balancer.wait(timeout=20)


# -- one session's episode, step by step ---------------------------------------------------------------


class Session:
    """One episode through the balancer: ``start`` opens it and plays its first action,
    ``finish`` plays the rest; either raises if the connection is gone."""

    start: Callable[[], Awaitable[None]]
    finish: Callable[[], Awaitable[dict[str, Any]]]


class McpSession(Session):
    def __init__(self, url: str, policy: Any) -> None:
        self.url, self.player = url, as_policy(policy)

    async def start(self) -> None:
        from contextlib import AsyncExitStack

        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        from batchgate_gym.serving.mcp_server import TASK_URI

        self.stack = AsyncExitStack()
        read, write, _ = await self.stack.enter_async_context(streamable_http_client(self.url))
        self.session = await self.stack.enter_async_context(ClientSession(read, write))
        await self.session.initialize()
        task = await self.session.read_resource(TASK_URI)
        self.player.reset(task.contents[0].text, {"turn": 0, "calls": 0})
        self.observation, self.done = await self.act(task.contents[0].text)

    async def act(self, observation: str) -> tuple[str, bool]:
        from batchgate_gym.serving.clients import single_calls
        from batchgate_gym.serving.mcp_server import META

        parts, done = [], False
        for name, arguments in single_calls(self.player.act(observation)):
            answer = await self.session.call_tool(name, arguments)
            parts.append(answer.content[0].text)
            done = bool((answer.meta or {})[META]["done"])
            if done:
                break
        return "\n".join(parts), done

    async def finish(self) -> dict[str, Any]:
        import json

        from batchgate_gym.serving.mcp_server import RESULT_URI

        try:
            while not self.done:
                self.observation, self.done = await self.act(self.observation)
            read = await self.session.read_resource(RESULT_URI)
            return dict(json.loads(read.contents[0].text))
        finally:
            with contextlib.suppress(BaseException):  # a server gone cannot be told the session ends
                await self.stack.aclose()


class OpenEnvSession(Session):
    def __init__(self, url: str, policy: Any, index: int) -> None:
        self.url, self.player, self.index = url, as_policy(policy), index

    async def start(self) -> None:
        from batchgate_gym.serving.openenv_server import DeskAction, DeskEnvClient

        self.client = DeskEnvClient(base_url=self.url)
        await self.client.connect()
        result = await self.client.reset(seed=self.index, case_index=self.index)
        self.player.reset(result.observation.text, {"turn": 0, "calls": 0})
        self.result = await self.client.step(DeskAction(action=self.player.act(result.observation.text)))

    async def finish(self) -> dict[str, Any]:
        from batchgate_gym.serving.openenv_server import DeskAction

        try:
            while not self.result.done:
                self.result = await self.client.step(
                    DeskAction(action=self.player.act(self.result.observation.text))
                )
            state = await self.client.state()
            return dict(state.model_dump(include={"case_id", "reward", "score", "log_head", "log"}))
        finally:
            with contextlib.suppress(BaseException):
                await self.client.close()


def sessions_for(protocol: str, front: int) -> list[Session]:
    careful = registry.get("gate").policies.reference_policies["careful"]
    if protocol == "mcp":
        return [
            McpSession(f"http://127.0.0.1:{front}/mcp?seed={i}&case_index={i}", careful) for i in range(CASES)
        ]
    return [OpenEnvSession(f"http://127.0.0.1:{front}", careful, i) for i in range(CASES)]


async def play_all(
    sessions: list[Session], servers: list[Served]
) -> tuple[list[int], list[dict[str, Any] | BaseException]]:
    """Open every session in turn (so least-connections spreads them over both servers), note
    how many each server holds, kill the first server, then let every session play on. Each
    session lives in one task, as the protocols' clients ask."""
    loop = asyncio.get_running_loop()
    opened = [asyncio.Event() for _ in sessions]
    go = asyncio.Event()

    async def one(index: int) -> dict[str, Any]:
        if index:
            await opened[index - 1].wait()
        try:
            await sessions[index].start()
        finally:
            opened[index].set()
        await go.wait()
        return await sessions[index].finish()

    tasks = [asyncio.ensure_future(one(i)) for i in range(len(sessions))]
    await opened[-1].wait()
    live = [(await loop.run_in_executor(None, server.sessions))["live"] for server in servers]
    servers[0].process.kill()
    await loop.run_in_executor(None, servers[0].process.wait)
    go.set()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    return live, list(outcomes)


@pytest.mark.parametrize("balanced", ["mcp", "openenv"], indirect=True)
def test_sessions_stay_on_their_server_and_a_killed_server_takes_only_its_own(
    balanced: tuple[str, int, list[Served]],
) -> None:
    protocol, front, servers = balanced
    live, outcomes = asyncio.run(asyncio.wait_for(play_all(sessions_for(protocol, front), servers), 240))
    assert sum(live) == CASES and min(live) >= 1, live  # both servers hold sessions
    failed = [o for o in outcomes if isinstance(o, BaseException)]
    played = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(failed) == live[0], outcomes  # exactly the killed server's sessions
    assert len(played) == live[1]
    rows = report_rows("gate", "careful")
    for episode in played:
        assert same_as_report("gate", rows[episode["case_id"]], episode)
    assert servers[1].wait_for_live(0, within=20)["live"] == 0
