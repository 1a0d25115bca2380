"""serve keeps to the chat-completions protocol as a real server does: streaming, n, max_tokens,
400s for malformed conversations, bounded memory, a busy port; run-model reads streams."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI

from batchgate_gym.desks.gate.tools import tool_schemas
from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.llm import ChatEpisode
from batchgate_gym.llm.runner import RunStopped, assistant_message
from batchgate_gym.llm.server import SEEN_KEPT, ScriptedServer, ServerSettings

from .support import rows, run_model, serving

ROOT = Path(__file__).resolve().parents[2]
EPISODE_FIELDS = ("case_id", "rollout", "messages", "score", "log", "head", "ended", "usage", "turns")


def post(url: str, data: bytes, content_type: str = "application/json") -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def opening() -> list[dict[str, Any]]:
    chat = ChatEpisode(BatchGateEnv(split="eval"), tool_schemas())
    return chat.reset(options={"case_index": 0})


def test_the_official_client_assembles_a_stream_into_the_same_message() -> None:
    messages = opening()
    with serving("careful") as server:
        client = OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        whole = client.chat.completions.create(model="m", messages=messages, tools=tool_schemas(), seed=1)
        chunks = list(
            client.chat.completions.create(
                model="m", messages=messages, tools=tool_schemas(), seed=1, stream=True,
                stream_options={"include_usage": True},
            )
        )  # fmt: skip
    assert len(chunks) > 3
    from openai.lib.streaming.chat import ChatCompletionStreamState

    state = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(chunk)
    streamed = state.get_final_completion()
    assert assistant_message(streamed) == assistant_message(whole)
    assert streamed.choices[0].finish_reason == whole.choices[0].finish_reason == "tool_calls"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == whole.usage.total_tokens


@pytest.mark.parametrize("mode", ["tools", "text"])
@pytest.mark.slow  # server: whole split streamed and not
def test_run_model_with_stream_writes_the_rows_it_writes_without(tmp_path: Path, mode: str) -> None:
    plain, streamed = tmp_path / "plain.jsonl", tmp_path / "streamed.jsonl"
    with serving("careful", model_errors=0.2, seed=3) as server:
        run_model(server.base_url, plain, "m", split="eval", n=4, rollouts=2, mode=mode)
        run_model(server.base_url, streamed, "m", split="eval", n=4, rollouts=2, mode=mode, stream=True)
    key = lambda row: (row["case_id"], row["rollout"])  # noqa: E731
    a, b = sorted(rows(plain), key=key), sorted(rows(streamed), key=key)
    assert [{f: r[f] for f in EPISODE_FIELDS} for r in a] == [{f: r[f] for f in EPISODE_FIELDS} for r in b]


def test_a_stream_read_without_stream_and_an_html_page_are_named(tmp_path: Path) -> None:
    from aiohttp import web

    from batchgate_gym.llm.server import serve_app_in_thread

    async def events(request: web.Request) -> web.Response:
        return web.Response(text='data: {"id": "x"}\n\n', content_type="text/event-stream")

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<!doctype html><html><body>Login</body></html>", content_type="text/html")

    for handler, cause in ((events, "add --stream"), (page, "HTML page, not a chat completion")):
        app = web.Application()
        app.router.add_post("/v1/chat/completions", handler)
        with serve_app_in_thread(app) as base_url, pytest.raises(RunStopped, match=cause):
            run_model(base_url, tmp_path / "x.jsonl", "m", split="eval", n=1)
    assert not (tmp_path / "x.jsonl").exists() or (tmp_path / "x.jsonl").read_text() == ""


def test_n_choices_and_max_tokens_are_honoured() -> None:
    messages = opening()
    with serving("careful") as server:
        client = OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        three = client.chat.completions.create(model="m", messages=messages, tools=tool_schemas(), n=3)
        cut = client.chat.completions.create(model="m", messages=messages, tools=tool_schemas(), max_tokens=6)
    assert [c.index for c in three.choices] == [0, 1, 2]
    assert len({json.dumps(assistant_message(three)) for _ in range(3)}) == 1
    assert cut.choices[0].finish_reason == "length" and not cut.choices[0].message.tool_calls
    assert cut.usage.completion_tokens == 6


@pytest.mark.parametrize(
    ("body", "content_type", "reason"),
    [
        ({"messages": [{"role": "wizard", "content": "hi"}]}, "application/json", "unknown role 'wizard'"),
        ({"messages": [{"role": "tool", "tool_call_id": "c1", "content": "{}"}]}, "application/json",
         "no call 'c1' waits for an answer"),
        ({"messages": [{"role": "user", "content": "hi"}]}, "text/plain", "Content-Type must be application/json"),
        ({"messages": [{"role": "user", "content": "hi"}], "n": 0}, "application/json", "'n' must be a positive"),
    ],
    ids=["unknown-role", "tool-first", "not-json-content-type", "n-zero"],
)  # fmt: skip
def test_malformed_requests_are_refused_with_400(
    body: dict[str, Any], content_type: str, reason: str
) -> None:
    with serving("careful") as server:
        status, data = post(f"{server.base_url}/chat/completions", json.dumps(body).encode(), content_type)
    assert status == 400 and reason in json.loads(data)["error"]["message"]


def test_memory_stays_bounded_over_many_distinct_requests() -> None:
    server = ScriptedServer(ServerSettings(policy="careful"))
    for number in range(3 * SEEN_KEPT):
        server.fault(number, [{"role": "user", "content": "x"}], "m")
    assert len(server._seen) == SEEN_KEPT


def test_a_busy_port_is_one_line_and_exit_1() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "batchgate_gym", "serve", "--policy", "careful", "--port", str(port)],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"batchgate serve: cannot listen on 127.0.0.1:{port}: Address already in use; pick another --port"
    ]
