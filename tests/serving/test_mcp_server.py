"""The desks as MCP servers, driven by the ``mcp`` SDK's own clients over stdio and streamable HTTP.

Over HTTP each desk's ``batchgate serve-env --protocol mcp`` plays careful and the
naive policy on eval cases, one MCP session per episode: every episode has the
reward and score terms ``batchgate report`` gives the case and a log that replays
under its head. Over stdio ``batchgate mcp`` plays one episode per process. Then
the protocol's edges: the tool list is the desk's schemas, the result resource
comes at the end, malformed requests and guessed or reused session ids are
refused with the reason, the session cap and the idle timeout hold.
"""

from __future__ import annotations

import json
import sys
import urllib.parse
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from .support import (
    Rows,
    Served,
    check_policies_against_report,
    eval_cases,
    replayed_score,
    report_rows,
    same_as_report,
    serving,
)

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install -e '.[mcp]')")
import anyio
import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from batchgate_gym.desks import registry
from batchgate_gym.llm.results import desk_tools
from batchgate_gym.serving.clients import play_mcp
from batchgate_gym.serving.mcp_server import META, RESULT_URI, TASK_URI

pytestmark = pytest.mark.slow  # servers: each desk served in its own process

# The eval cases each desk plays here: an MCP session costs several HTTP exchanges before its
# first step, so a spread of each split (benchmarks/serve_env.py plays every case).
CASES: dict[str, tuple[int, ...] | None] = {
    "gate": tuple(range(0, 32, 4)),
    "refund": tuple(range(1, 32, 4)),
    "analyst": (0, 36, 64, 84),
}
LIMITS = ("--desk", "gate", "--split", "eval", "--max-sessions", "2", "--idle-timeout", "3")
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Served]]:
    commands = [("--protocol", "mcp", "--desk", desk, "--split", "eval") for desk in CASES]
    with serving(*commands, ("--protocol", "mcp", *LIMITS)) as started:
        yield dict(zip([*CASES, "limits"], started, strict=True))


def mcp_url(served: Served, **query: Any) -> str:
    return served.url("/mcp") + ("?" + urllib.parse.urlencode(query) if query else "")


async def over_http(url: str, policy: Any) -> dict[str, Any]:
    async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as session:
        await session.initialize()
        return await play_mcp(session, policy)


@pytest.mark.parametrize("desk", list(CASES))
def test_each_desk_over_mcp_http_scores_as_report_and_its_logs_replay(
    servers: dict[str, Served], desk: str
) -> None:
    spec = registry.get(desk)

    def play(policy: str, rows: Rows) -> list[dict[str, Any]]:
        async def play_all() -> list[dict[str, Any]]:
            found = []
            for n, case_id in enumerate(rows):
                url = mcp_url(servers[desk], seed=n, case_id=case_id)
                found.append(await over_http(url, spec.policies.reference_policies[policy]))
            return found

        return anyio.run(play_all)

    check_policies_against_report(desk, CASES[desk], play)
    assert servers[desk].wait_for_live(0, within=20)["live"] == 0  # the client's DELETE ends each session


def test_stdio_plays_one_episode_per_process_on_every_desk() -> None:
    chosen = [("gate", "careful", 5), ("refund", "naive", 7), ("analyst", "careful", 36)]

    async def one(desk: str, policy: str, index: int, out: dict[str, Any]) -> None:
        case_id = eval_cases(desk)[index].case_id
        command = [sys.executable, "-m", "batchgate_gym", "mcp", "--desk", desk, "--case", case_id]
        params = StdioServerParameters(command=command[0], args=command[1:])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            opened = await session.initialize()
            tools = await session.list_tools()
            task = await session.read_resource(TASK_URI)
            played = await play_mcp(session, registry.get(desk).policies.reference_policies[policy])
            out[desk] = (opened.instructions, tools, task.contents[0].text, played, case_id)

    async def everyone() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with anyio.create_task_group() as group:
            for desk, policy, index in chosen:
                group.start_soon(one, desk, policy, index, out)
        return out

    out = anyio.run(everyone)
    for desk, policy, index in chosen:
        instructions, tools, task, played, case_id = out[desk]
        assert instructions == task and task.startswith(("You ", "A "))
        assert [tool.name for tool in tools.tools] == [s["function"]["name"] for s in desk_tools(desk)]
        row = report_rows(desk, policy, (index,))[case_id]  # a report of that one case plays it with seed 0
        assert played["case_id"] == case_id and same_as_report(desk, row, played)
        assert replayed_score(desk, case_id, played["log"], played["log_head"]) == played["score"]


def test_tools_are_the_desks_schemas_and_the_result_comes_at_the_end(servers: dict[str, Served]) -> None:
    async def session_life() -> dict[str, Any]:
        async with (
            streamable_http_client(mcp_url(servers["refund"], seed=2, case_index=2)) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            seen: dict[str, Any] = {"tools": await session.list_tools()}
            seen["before"] = await session.list_resources()
            with pytest.raises(Exception, match="has not ended"):
                await session.read_resource(RESULT_URI)
            seen["odd"] = await session.call_tool("lookup_order", {"order": 5})
            seen["unknown"] = await session.call_tool("wire_money", {})
            seen["reply"] = await session.call_tool("reply", {"message": "done"})
            seen["late"] = await session.call_tool("reply", {"message": "again"})
            seen["after"] = await session.list_resources()
            seen["result"] = json.loads((await session.read_resource(RESULT_URI)).contents[0].text)
            return seen

    seen = anyio.run(session_life)
    listed = [
        {"name": t.name, "description": t.description, "parameters": t.inputSchema}
        for t in seen["tools"].tools
    ]
    assert listed == [schema["function"] for schema in desk_tools("refund")]
    assert [str(r.uri) for r in seen["before"].resources] == [TASK_URI]
    assert not seen["odd"].isError and "unknown argument 'order'" in seen["odd"].content[0].text
    assert not seen["unknown"].isError and "unknown tool 'wire_money'" in seen["unknown"].content[0].text
    assert seen["reply"].meta[META] == {"turn": 3, "done": True, "reward": seen["result"]["reward"]}
    assert seen["late"].isError and "already ended" in seen["late"].content[0].text
    assert [str(r.uri) for r in seen["after"].resources] == [TASK_URI, RESULT_URI]
    result = seen["result"]
    refused = [entry for entry in result["log"] if not entry["executed"]]
    assert [entry["action"] for entry in refused] == ["invalid_action"] * 2  # both logged as refused calls
    assert replayed_score("refund", result["case_id"], result["log"], result["log_head"]) == result["score"]


# --- faults ------------------------------------------------------------------------------------------------


def initialize(client: httpx.Client, url: str) -> httpx.Response:
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    return client.post(url, json=hello, headers=ACCEPT)


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ({"case_id": "eval-nope-0"}, "no case with case_id 'eval-nope-0'"),
        ({"case_index": 9999}, "case_index 9999 is outside 0..31"),
        ({"split": "test"}, "has no split 'test'"),
    ],
)
def test_a_session_for_a_case_the_server_lacks_is_refused_with_400_before_it_opens(
    servers: dict[str, Served], query: dict[str, Any], reason: str
) -> None:
    with httpx.Client(timeout=30) as client:
        refused = initialize(client, mcp_url(servers["gate"], **query))
        live = client.get(servers["gate"].url("/sessions")).json()["live"]
    assert refused.status_code == 400 and reason in refused.json()["error"]["message"]
    assert "mcp-session-id" not in refused.headers and live == 0


def test_malformed_requests_and_guessed_or_reused_session_ids_are_refused(servers: dict[str, Served]) -> None:
    gate = servers["gate"]
    with httpx.Client(timeout=30) as client:
        assert client.post(mcp_url(gate), content=b"{not json", headers=ACCEPT).status_code == 400
        bad_query = initialize(client, mcp_url(gate, seed="minus-one"))
        assert bad_query.status_code == 400 and "seed must be a whole number" in bad_query.text
        stray = initialize(client, mcp_url(gate, rows=3))
        assert stray.status_code == 400 and "unknown reset option 'rows'" in stray.text
        guessed = {**ACCEPT, "Mcp-Session-Id": uuid.uuid4().hex}
        ping = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        assert client.post(mcp_url(gate), json=ping, headers=guessed).status_code == 404
        opened = initialize(client, mcp_url(gate, seed=1))
        session_id = opened.headers["mcp-session-id"]
        assert len(session_id) >= 32
        assert client.delete(mcp_url(gate), headers={"Mcp-Session-Id": session_id}).status_code == 200
        reused = client.post(mcp_url(gate), json=ping, headers={**ACCEPT, "Mcp-Session-Id": session_id})
        assert reused.status_code == 404
    assert gate.sessions()["live"] == 0


def test_past_the_cap_a_session_is_refused_and_idle_sessions_are_closed(servers: dict[str, Served]) -> None:
    limits = servers["limits"]

    async def crowd() -> tuple[list[Any], Any, dict[str, Any]]:
        async with (
            streamable_http_client(mcp_url(limits, seed=0)) as (r1, w1, _),
            ClientSession(r1, w1) as first,
            streamable_http_client(mcp_url(limits, seed=1)) as (r2, w2, _),
            ClientSession(r2, w2) as second,
        ):
            await first.initialize()
            await second.initialize()
            answers = [await first.call_tool("list_batches", {}), await second.call_tool("list_batches", {})]
            with httpx.Client(timeout=30) as client:
                refused = initialize(client, mcp_url(limits, seed=2))
            counts = limits.sessions()
        return answers, refused, counts

    answers, refused, counts = anyio.run(crowd)
    assert all(not answer.isError for answer in answers) and counts["live"] == 2
    assert refused.status_code == 503 and "Too many open sessions" in refused.text
    with httpx.Client(timeout=30) as client:  # a session left without a DELETE is closed once idle
        opened = initialize(client, mcp_url(limits, seed=3))
        session_id = opened.headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        anyio.run(anyio.sleep, 4.5)
        late = client.post(mcp_url(limits), json=ping, headers={**ACCEPT, "Mcp-Session-Id": session_id})
    assert late.status_code == 404
    assert limits.wait_for_live(0, within=20)["live"] == 0
