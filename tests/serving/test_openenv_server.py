"""``batchgate serve-env --protocol openenv`` driven by OpenEnv's own client over 127.0.0.1.

Each desk's server plays careful and the naive policy on eval cases through
OpenEnv's ``EnvClient``: every episode has the reward and score terms
``batchgate report`` gives the case, the same log head as the Gymnasium
environment playing the same actions in this process, and a log that replays
under that head. Then the faults: many sessions at once, a client gone mid-episode,
malformed messages, guessed session ids, the session cap and the idle timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from .support import (
    Rows,
    Served,
    check_policies_against_report,
    eval_cases,
    report_rows,
    same_as_report,
    serving,
)

pytest.importorskip("openenv", reason="the openenv extra is not installed (pip install -e '.[openenv]')")
websockets = pytest.importorskip("websockets")

from batchgate_gym.desks import registry  # noqa: E402
from batchgate_gym.kernel.text_policy import as_policy  # noqa: E402
from batchgate_gym.serving.clients import play_openenv  # noqa: E402
from batchgate_gym.serving.openenv_server import DeskAction, DeskEnvClient  # noqa: E402

pytestmark = pytest.mark.slow  # servers: each desk served in its own process

# The eval cases each desk plays (None: all); the analyst's are slower, so a few families, some
# of which the naive policy fails.
CASES: dict[str, tuple[int, ...] | None] = {"gate": None, "refund": None, "analyst": (0, 16, 36, 44, 64, 84)}
LIMITS = ("--desk", "gate", "--split", "eval", "--max-sessions", "2", "--idle-timeout", "3")


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Served]]:
    commands = [("--desk", desk, "--split", "eval", "--max-sessions", "64") for desk in CASES]
    with serving(*commands, LIMITS) as started:
        yield dict(zip([*CASES, "limits"], started, strict=True))


def ws_url(served: Served, query: str = "") -> str:
    return f"ws://127.0.0.1:{served.port}/ws{query}"


def in_process_head(desk: str, policy: str, reset: dict[str, Any]) -> str:
    """The log head of the same episode played on the desk's Gymnasium environment here."""
    spec = registry.get(desk)
    env = spec.make_env(eval_cases(desk))
    try:
        player = as_policy(spec.policies.reference_policies[policy])
        observation, info = env.reset(seed=reset["seed"], options={"case_id": reset["case_id"]})
        player.reset(observation, info)
        done = False
        while not done:
            observation, _reward, terminated, truncated, info = env.step(player.act(observation))
            done = terminated or truncated
        return str(info["log_head"])
    finally:
        env.close()


def resets(case_ids: list[str]) -> list[dict[str, Any]]:
    """The n-th case by id with seed n, as the report plays a list of cases."""
    return [{"seed": n, "case_id": case_id} for n, case_id in enumerate(case_ids)]


async def play_cases(served: Served, policy: Any, reset_list: list[dict[str, Any]]) -> list[dict[str, Any]]:
    async with DeskEnvClient(base_url=served.url()) as client:
        return [await play_openenv(client, policy, reset) for reset in reset_list]


@pytest.mark.parametrize("desk", list(CASES))
def test_each_desk_over_openenv_scores_as_report_and_its_logs_replay(
    servers: dict[str, Served], desk: str
) -> None:
    spec = registry.get(desk)

    def play(policy: str, rows: Rows) -> list[dict[str, Any]]:
        plays = resets(list(rows))
        played = asyncio.run(play_cases(servers[desk], spec.policies.reference_policies[policy], plays))
        assert played[-1]["log_head"] == in_process_head(desk, policy, plays[-1])
        return played

    check_policies_against_report(desk, CASES[desk], play)


def test_reset_gives_the_task_text_and_the_desks_tool_schemas(servers: dict[str, Served]) -> None:
    from batchgate_gym.desks.refund.tools import tool_schemas

    async def opening() -> tuple[Any, Any, Any]:
        async with DeskEnvClient(base_url=servers["refund"].url()) as client:
            reset = await client.reset(seed=4, case_index=4)
            before = await client.state()
            step = await client.step(DeskAction(tool="lookup_order", arguments={"order_id": "nope"}))
            return reset, before, step

    reset, before, step = asyncio.run(opening())
    spec = registry.get("refund")
    env = spec.make_env(spec.fixed_cases(split="eval"))
    text, _ = env.reset(seed=4, options={"case_index": 4})
    single = env.step(json.dumps([{"name": "lookup_order", "arguments": {"order_id": "nope"}}]))
    env.close()
    assert reset.observation.text == text and reset.observation.tools == tool_schemas()
    assert reset.reward is None and not reset.done
    assert (
        before.case_id == spec.fixed_cases(split="eval")[4].case_id and not before.done and before.log is None
    )
    assert len(before.episode_id) >= 32  # random, not a counter
    assert step.observation.text == single[0] and step.reward == 0.0 and not step.done


def test_many_concurrent_sessions_score_as_in_process(servers: dict[str, Served]) -> None:
    rows = report_rows("gate", "careful")
    careful = registry.get("gate").policies.reference_policies["careful"]

    async def everyone() -> list[dict[str, Any]]:
        async def one(index: int) -> dict[str, Any]:
            async with DeskEnvClient(base_url=servers["gate"].url()) as client:
                return await play_openenv(client, careful, {"seed": index, "case_index": index})

        return await asyncio.gather(*(one(i % len(rows)) for i in range(48)))

    played = asyncio.run(everyone())
    assert all(same_as_report("gate", rows[episode["case_id"]], episode) for episode in played)
    assert servers["gate"].wait_for_live(0, within=20)["live"] == 0  # every world released


def server_threads(served: Served) -> int:
    with open(f"/proc/{served.process.pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("Threads:"))


def test_live_sessions_share_one_thread_and_no_message_is_compressed(servers: dict[str, Served]) -> None:
    """What keeps a live session small: no thread of its own, no zlib state for per-message
    deflate (a client that offers it is answered without it)."""

    async def hold(count: int) -> tuple[int, list[str | None]]:
        async with contextlib.AsyncExitStack() as stack:
            sockets = [
                await stack.enter_async_context(
                    websockets.connect(ws_url(servers["gate"]), compression="deflate")
                )
                for _ in range(count)
            ]
            for n, ws in enumerate(sockets):
                assert (await exchange(ws, {"type": "reset", "data": {"seed": n}}))["type"] == "observation"
            return server_threads(servers["gate"]), [
                ws.response.headers.get("Sec-WebSocket-Extensions") for ws in sockets
            ]

    asyncio.run(hold(1))  # the shared worker started
    before = server_threads(servers["gate"])
    during, extensions = asyncio.run(hold(12))
    assert during - before <= 2  # a thread per session would add twelve
    assert extensions == [None] * 12


# --- faults ------------------------------------------------------------------------------------------------


async def exchange(ws: Any, message: Any) -> dict[str, Any]:
    await ws.send(message if isinstance(message, str) else json.dumps(message))
    return dict(json.loads(await asyncio.wait_for(ws.recv(), 30)))


def test_malformed_messages_get_clear_errors_and_the_session_goes_on(servers: dict[str, Served]) -> None:
    async def probe() -> list[dict[str, Any]]:
        async with websockets.connect(ws_url(servers["gate"]), max_size=2**24) as ws:
            answers = [
                await exchange(ws, "{not json"),
                await exchange(ws, {"type": "teleport"}),
                await exchange(ws, {"type": "step", "data": {"action": "list_batches()"}}),  # before reset
                await exchange(ws, {"type": "reset", "data": {"seed": 10**30}}),
                await exchange(ws, {"type": "reset", "data": {"case_index": 10**6}}),
                await exchange(ws, {"type": "reset", "data": {"rows": 5}}),
                await exchange(ws, {"type": "reset", "data": {"seed": 1, "case_index": 1}}),
                await exchange(ws, {"type": "step", "data": {"action": 5}}),
                await exchange(ws, {"type": "step", "data": {"action": "x", "tool": "list_batches"}}),
                await exchange(ws, {"type": "step", "data": {"action": "list_batches(\ud800)"}}),
                await exchange(ws, {"type": "step", "data": {"action": "9" * 100_000}}),
                await exchange(ws, {"type": "step", "data": {"tool": "list_batches", "arguments": {}}}),
            ]
            return answers

    answers = asyncio.run(probe())
    kinds = [answer["type"] for answer in answers]
    assert kinds[:6] == ["error"] * 6 and kinds[6] == "observation"
    codes = [answer["data"].get("code") for answer in answers[:6]]
    assert codes == ["INVALID_JSON", "UNKNOWN_TYPE", *["EXECUTION_ERROR"] * 4]
    assert "reset first" in answers[2]["data"]["message"]
    assert "seed must be a whole number" in answers[3]["data"]["message"]
    assert "outside 0..31" in answers[4]["data"]["message"]
    assert "unknown reset option 'rows'" in answers[5]["data"]["message"]
    assert [answer["data"].get("code") for answer in answers[7:9]] == ["VALIDATION_ERROR"] * 2
    # Bad actions the desk itself refuses: an error observation each, logged, a turn spent.
    assert [answer["type"] for answer in answers[9:]] == ["observation"] * 3
    assert "turn 1 of 30" in answers[9]["data"]["observation"]["text"]
    assert "error" in answers[10]["data"]["observation"]["text"]
    assert '"batches"' in answers[11]["data"]["observation"]["text"] and not answers[11]["data"]["done"]


def test_a_message_nested_too_deep_ends_its_session_with_the_reason_and_the_server_goes_on(
    servers: dict[str, Served],
) -> None:
    deep = (
        '{"type": "step", "data": {"tool": "run_sql", "arguments": {"query": ' + "[" * 100_000 + "]" * 100_000
    )
    deep += "}}}"

    async def nest() -> tuple[dict[str, Any], dict[str, Any]]:
        async with websockets.connect(ws_url(servers["gate"]), max_size=2**24) as ws:
            await exchange(ws, {"type": "reset", "data": {"seed": 3}})
            refused = await exchange(ws, deep)
        async with websockets.connect(ws_url(servers["gate"])) as ws:
            return refused, await exchange(ws, {"type": "reset", "data": {"seed": 3}})

    refused, afterwards = asyncio.run(nest())
    assert refused["type"] == "error" and "recursion" in refused["data"]["message"]
    assert afterwards["type"] == "observation"
    assert servers["gate"].wait_for_live(0, within=20)["live"] == 0


def test_a_guessed_or_reused_session_id_is_refused(servers: dict[str, Served]) -> None:
    """A WebSocket session's id never leaves the server; a session opened over HTTP (OpenEnv's
    ``openenv/session/create``) is a token one connection at a time may hold, gone once closed."""
    gate = servers["gate"]

    def rpc(method: str, **params: Any) -> dict[str, Any]:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        request = urllib.request.Request(gate.url("/mcp"), body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return dict(json.loads(response.read()))

    async def attempt(session_id: str, holder: Any = None) -> dict[str, Any]:
        async with websockets.connect(ws_url(gate, f"?session_id={session_id}")) as ws:
            if holder is None:
                return dict(json.loads(await asyncio.wait_for(ws.recv(), 30)))
            return await exchange(ws, {"type": "reset", "data": {"seed": 0}})

    async def held(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
        async with websockets.connect(ws_url(gate, f"?session_id={token}")) as holder:
            mine = await exchange(holder, {"type": "reset", "data": {"seed": 0, "case_index": 0}})
            return mine, await attempt(token)

    for guess in (str(uuid.uuid4()), "0", "../ws"):
        answer = asyncio.run(attempt(guess))
        assert answer["type"] == "error" and "Unknown session_id" in answer["data"]["message"]
    token = rpc("openenv/session/create")["result"]["session_id"]
    assert len(token) >= 32
    mine, second = asyncio.run(held(token))
    assert mine["type"] == "observation"
    assert second["type"] == "error" and "already has an attached WebSocket" in second["data"]["message"]
    assert rpc("openenv/session/close", session_id=token)["result"]["closed"] is True
    reused = asyncio.run(attempt(token))
    assert reused["type"] == "error" and "Unknown session_id" in reused["data"]["message"]


def test_a_client_gone_mid_episode_has_its_session_reaped(servers: dict[str, Served]) -> None:
    async def walk_away() -> int:
        ws = await websockets.connect(ws_url(servers["gate"]))
        await exchange(ws, {"type": "reset", "data": {"seed": 2, "case_index": 2}})
        await exchange(ws, {"type": "step", "data": {"action": "list_batches()"}})
        live = servers["gate"].sessions()["live"]
        ws.transport.abort()  # no close frame: the connection just drops
        return int(live)

    assert asyncio.run(walk_away()) >= 1
    assert servers["gate"].wait_for_live(0, within=20)["live"] == 0


def test_past_the_cap_a_session_is_refused_and_idle_sessions_are_closed(servers: dict[str, Served]) -> None:
    limits = servers["limits"]

    async def crowd() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        first = await websockets.connect(ws_url(limits))
        second = await websockets.connect(ws_url(limits))
        for ws in (first, second):
            await exchange(ws, {"type": "reset", "data": {"seed": 0}})
        async with websockets.connect(ws_url(limits)) as third:
            refused = dict(json.loads(await asyncio.wait_for(third.recv(), 30)))
        await first.close()
        await asyncio.sleep(0.5)
        async with websockets.connect(ws_url(limits)) as fourth:
            admitted = await exchange(fourth, {"type": "reset", "data": {"seed": 1}})
        # ``second`` now sits idle past the timeout: the server closes its session.
        assert limits.wait_for_live(0, within=30)["live"] == 0
        late = await exchange(second, {"type": "step", "data": {"action": "list_batches()"}})
        await second.close()
        return refused, admitted, late

    refused, admitted, late = asyncio.run(crowd())
    assert refused["type"] == "error" and refused["data"]["code"] == "CAPACITY_REACHED"
    assert refused["data"]["max_sessions"] == 2
    assert admitted["type"] == "observation"
    assert late["type"] == "error" and "this session is over" in late["data"]["message"]


def test_an_episode_ended_unfinished_over_the_wire_scores_as_in_process(servers: dict[str, Served]) -> None:
    """``end`` (a trainer's rollout over before its episode) ends the session's episode as
    ``end_unfinished`` does in-process: the same reward, score and log head; misuse is refused."""
    reason = "the rollout ended before the episode did"
    actions = ['lookup_order(order_id="ORD-NONE")', "refund_history()"]

    async def over_the_wire() -> list[dict[str, Any]]:
        async with websockets.connect(ws_url(servers["refund"]), max_size=2**24) as ws:
            return [
                await exchange(ws, {"type": "step", "data": {"end": reason}}),  # before any reset
                await exchange(ws, {"type": "reset", "data": {"seed": 4, "case_index": 3}}),
                *[await exchange(ws, {"type": "step", "data": {"action": a}}) for a in actions],
                await exchange(ws, {"type": "step", "data": {"end": reason, "action": "reply()"}}),
                await exchange(ws, {"type": "step", "data": {"end": "\ud800"}}),
                await exchange(ws, {"type": "step", "data": {"end": reason}}),
                await exchange(ws, {"type": "step", "data": {"end": reason}}),  # already ended
            ]

    answers = asyncio.run(over_the_wire())
    assert "reset first" in answers[0]["data"]["message"]
    assert answers[4]["data"]["code"] == "VALIDATION_ERROR"
    assert "UTF-8" in answers[5]["data"]["message"]
    ended = answers[6]["data"]
    assert ended["done"] and ended["observation"]["truncated"] and not ended["observation"]["terminated"]
    assert "already ended" in answers[7]["data"]["message"]

    env = registry.get("refund").make_env(eval_cases("refund"))
    try:
        env.reset(seed=4, options={"case_index": 3})
        for action in actions:
            env.step(action)
        local = env.unwrapped.end_unfinished(reason)
    finally:
        env.close()
    info = ended["observation"]["info"]
    assert ended["reward"] == local["score"]["reward"] and info["score"] == local["score"]
    assert info["log_head"] == local["log_head"]


def test_a_new_server_counts_no_session_until_a_client_opens_one() -> None:
    # OpenEnv builds environments of its own to answer metadata and schema requests; they
    # are no sessions (the count said "opened": 1 before any client had connected).
    with serving(("--desk", "gate", "--split", "eval")) as (fresh,):
        assert fresh.sessions() == {"live": 0, "opened": 0, "max_sessions": 256}

        async def one_episode() -> None:
            ws = await websockets.connect(ws_url(fresh))
            await exchange(ws, {"type": "reset", "data": {"seed": 0, "case_index": 0}})
            await ws.close()

        asyncio.run(one_episode())
        assert fresh.wait_for_live(0, within=20)["opened"] == 1
