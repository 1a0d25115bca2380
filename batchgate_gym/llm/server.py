"""A local chat-completions server whose "model" is a scripted policy.

``POST /v1/chat/completions`` answers with the next assistant message of a text
policy of a desk (played by :class:`~.scripted.ScriptedModel`), in the JSON shape
of the OpenAI API, so that any client of that API (``batchgate run-model``, or
another harness) can be tried end to end without a model. It binds to 127.0.0.1
only; the model name in a request is echoed and otherwise ignored, and any key is
accepted, unless ``model_name`` or ``api_key`` is set (then others are refused with
404 ``model_not_found`` or 401 ``invalid_api_key``, as a hosted API does).

Stateless over HTTP. Nothing of an episode is kept between requests: every request
rebuilds the policy's state by replaying the conversation it carries through a
fresh policy (each earlier assistant turn is asked for again, from the messages
before it, and the answer discarded), then asks for the next turn. The same
messages always give the same answer, so a retried request cannot disturb an
episode, and any number of episodes can be in flight at once.

Two kinds of trouble can be switched on, both drawn from a seeded hash (never
from a clock or a shared random stream):

* ``faults``: the probability that a request fails in transport. The failure is
  one of: ``429`` with ``Retry-After`` (and ``retry-after-ms``), ``500``, an answer
  held back ``stall`` seconds (past a client's timeout), or a ``200`` whose body is
  not valid JSON. The draw is keyed by the server's seed, the request's ``seed``
  field, the conversation, and how many times this very request was seen before,
  so a retry draws afresh and a run is reproducible request by request.
  (``delay`` holds back every answer, as a slow model would: no fault.)
* ``model_errors``: the probability that a turn is a model's mistake instead of the
  policy's answer: a call to a tool that does not exist, or arguments that are not
  JSON. The draw is keyed by the seed, the request's ``seed`` and the conversation
  only (not the attempt), so the server recognises its own mistakes when the
  conversation comes back: those turns, and the messages they drew, are left out
  when the policy's state is rebuilt, and the policy then answers as if the
  mistaken turn had not been there.

Token usage is estimated, not counted by a tokenizer: :func:`estimate_tokens`
charges ``ceil(characters / 4)`` for the text of every message (its content, and
each tool call's name and arguments) plus 4 per message; ``prompt_tokens`` is that
over the request's messages and ``completion_tokens`` over the answer.

``created`` is the number of assistant messages in the request (the turn), never
the clock, and ``id`` is a hash of the request, so a response is a pure function
of the request and the settings.

What a real server does with a request, this one does too, so a client is tested
against the protocol and not against a lenient stand-in:

* ``stream: true`` is answered as server-sent events (``chat.completion.chunk``
  objects: the role, the content in pieces, each tool call's id and name and then
  its arguments in pieces, the finish reason, a usage chunk when
  ``stream_options.include_usage`` asks for it, then ``data: [DONE]``), which the
  official client assembles into the same message;
* ``n`` > 1 gives n choices (the policy is deterministic: n equal answers);
* ``max_tokens`` (or ``max_completion_tokens``) is honoured: an answer whose
  estimate is longer is cut to that many tokens' worth of text, without its tool
  calls, with ``finish_reason: "length"``;
* ``context_window`` (tokens, estimated as above) refuses a longer request with
  400 ``context_length_exceeded``, as a model whose context is full;
* a body that is not JSON, a ``Content-Type`` that is not JSON, an unknown role, a
  ``tool`` message that answers no call of the assistant message before it, and
  ``n`` or ``max_tokens`` that are not positive integers are refused with 400.

Memory stays bounded: the only thing kept between requests is how often each
request was seen (for the fault draws), for the last :data:`SEEN_KEPT` distinct
requests.
"""

from __future__ import annotations

import asyncio
import copy
import errno
import hashlib
import json
import math
import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import DEFAULT_DESK

from .scripted import ScriptedModel

FAULT_KINDS = ("rate_limit", "server_error", "stall", "bad_json")
MODEL_ERROR_KINDS = ("unknown_tool", "bad_arguments")
UNKNOWN_TOOL = "drop_warehouse"  # no desk has it
HOST = "127.0.0.1"
ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
SEEN_KEPT = 20_000  # distinct requests whose repeats are counted (a retry comes soon after)
STREAM_PIECE = 16  # characters of content or arguments per streamed chunk


@dataclass(frozen=True)
class ServerSettings:
    """What the server plays and how often it misbehaves (see the module docstring)."""

    desk: str = DEFAULT_DESK
    policy: str = "careful"
    faults: float = 0.0
    model_errors: float = 0.0
    seed: int = 0
    stall: float = 30.0  # seconds a stalled answer is held back
    retry_after: float = 1.0  # seconds a 429 asks the client to wait
    delay: float = 0.0  # seconds every answer takes, as a model's would
    context_window: int | None = None  # tokens (estimated); a longer request is refused with 400
    api_key: str | None = None  # when set, any other key is refused with 401
    model_name: str | None = None  # when set, any other model name is refused with 404

    def __post_init__(self) -> None:
        for name in ("faults", "model_errors"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} is a probability in [0, 1], not {value!r}")
        if min(self.stall, self.retry_after, self.delay) < 0:
            raise ValueError("stall, retry_after and delay are seconds, at least 0")
        if self.context_window is not None and self.context_window < 1:
            raise ValueError(f"context_window is a number of tokens, at least 1, not {self.context_window!r}")


@dataclass
class ServerStats:
    """What the server saw: requests, each fault and mistake it injected by kind, and the last
    request's settings (its body without the messages, and its header names: no values)."""

    requests: int = 0
    answered: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    model_errors: Counter[str] = field(default_factory=Counter)
    last_settings: dict[str, Any] = field(default_factory=dict)
    last_headers: frozenset[str] = frozenset()


def estimate_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """The documented estimate: ``ceil(chars / 4)`` of each message's text, plus 4 per message."""
    total = 0
    for message in messages:
        text = str(message.get("content") or "")
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {} if isinstance(call, Mapping) else {}
            text += str(function.get("name") or "") + str(function.get("arguments") or "")
        total += math.ceil(len(text) / 4) + 4
    return total


def canonical(messages: Sequence[Mapping[str, Any]]) -> str:
    """The conversation as the draws see it: role, content, tool calls and call ids, in a fixed form."""
    kept = []
    for message in messages:
        item = {"role": message.get("role"), "content": message.get("content")}
        if message.get("tool_calls"):
            item["tool_calls"] = [
                {
                    "id": call.get("id"),
                    "name": (call.get("function") or {}).get("name"),
                    "arguments": (call.get("function") or {}).get("arguments"),
                }
                for call in message["tool_calls"]
                if isinstance(call, Mapping)
            ]
        if message.get("tool_call_id") is not None:
            item["tool_call_id"] = message["tool_call_id"]
        kept.append(item)
    return json.dumps(kept, sort_keys=True, separators=(",", ":"))


def draw(*parts: Any) -> float:
    """A number in [0, 1) fixed by ``parts`` (a hash, so the same parts always give the same number)."""
    digest = hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class ScriptedServer:
    """The request handling, without the HTTP: :meth:`answer` maps a request body to a response."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        known = registry.get(settings.desk).policies.known()
        if settings.policy not in known:
            raise ValueError(f"unknown policy {settings.policy!r}; known: {', '.join(known)}")
        self._policy = known[settings.policy]
        self.stats = ServerStats()
        self._seen: OrderedDict[str, int] = OrderedDict()  # the last SEEN_KEPT requests, oldest first
        self._lock = threading.Lock()

    # -- the draws -------------------------------------------------------------

    def mistake(self, request_seed: Any, messages: Sequence[Mapping[str, Any]]) -> str | None:
        """The model error this turn is (given the conversation before it), or None."""
        settings = self.settings
        if settings.model_errors <= 0:
            return None
        key = (settings.seed, request_seed, canonical(messages))
        if draw("mistake", *key) >= settings.model_errors:
            return None
        return MODEL_ERROR_KINDS[int(draw("mistake-kind", *key) * len(MODEL_ERROR_KINDS))]

    def fault(self, request_seed: Any, messages: Sequence[Mapping[str, Any]], model: str) -> str | None:
        """The transport fault this request meets, or None; each repeat of a request draws again."""
        settings = self.settings
        conversation = canonical(messages)
        request_key = hashlib.sha256(f"{request_seed}|{model}|{conversation}".encode()).hexdigest()
        with self._lock:
            attempt = self._seen.pop(request_key, 0)
            self._seen[request_key] = attempt + 1
            if len(self._seen) > SEEN_KEPT:
                self._seen.popitem(last=False)
        if settings.faults <= 0:
            return None
        key = (settings.seed, request_seed, conversation, attempt)
        if draw("fault", *key) >= settings.faults:
            return None
        return FAULT_KINDS[int(draw("fault-kind", *key) * len(FAULT_KINDS))]

    # -- the answer ------------------------------------------------------------

    def next_message(self, messages: Sequence[Mapping[str, Any]], request_seed: Any, tools: bool) -> dict:
        """The assistant message that follows ``messages``: the policy's, or an injected mistake."""
        kind = self.mistake(request_seed, messages)
        if kind is not None:
            self.stats.model_errors[kind] += 1
            return _mistake_message(kind, messages, tools)
        model = ScriptedModel(self._fresh_policy())
        kept = self._without_mistakes(messages, request_seed)
        for index, message in enumerate(kept):
            if message.get("role") == "assistant":
                model.respond(kept[:index])  # rebuilds the policy's state; the answer was already given
        reply = model.respond(kept)
        if not tools and reply.get("tool_calls"):
            calls = [
                {"name": call["function"]["name"], "arguments": json.loads(call["function"]["arguments"])}
                for call in reply["tool_calls"]
            ]
            reply = {"role": "assistant", "content": json.dumps(calls)}
        return reply

    def _without_mistakes(
        self, messages: Sequence[Mapping[str, Any]], request_seed: Any
    ) -> list[Mapping[str, Any]]:
        """The conversation less every injected mistake and the messages that answered it."""
        kept: list[Mapping[str, Any]] = []
        skipping = False
        for index, message in enumerate(messages):
            if message.get("role") == "assistant":
                skipping = self.mistake(request_seed, messages[:index]) is not None
            if not skipping:
                kept.append(message)
        return kept

    def _fresh_policy(self) -> Any:
        from batchgate_gym.kernel.text_policy import as_policy

        policy = self._policy
        return as_policy(policy if isinstance(policy, type) else copy.deepcopy(policy))

    def completion(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The chat-completions response to a (valid) request body."""
        messages = body["messages"]
        request_seed = body.get("seed")
        reply = self.next_message(messages, request_seed, tools=bool(body.get("tools")))
        finish = "tool_calls" if reply.get("tool_calls") else "stop"
        limit = answer_limit(body)
        if limit is not None and estimate_tokens([reply]) > limit:
            reply, finish = cut_to(reply, limit), "length"
        count = int(body.get("n") or 1)
        turn = sum(1 for message in messages if message.get("role") == "assistant")
        prompt = estimate_tokens(messages)
        completion = estimate_tokens([reply]) if finish != "length" else int(limit or 0)
        ident = hashlib.sha256(f"{request_seed}|{canonical(messages)}".encode()).hexdigest()[:24]
        return {
            "id": f"chatcmpl-{ident}",
            "object": "chat.completion",
            "created": turn,
            "model": str(body.get("model") or ""),
            "choices": [
                {"index": index, "message": copy.deepcopy(reply), "finish_reason": finish, "logprobs": None}
                for index in range(count)
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion * count,
                "total_tokens": prompt + completion * count,
            },
        }


def answer_limit(body: Mapping[str, Any]) -> int | None:
    """The request's cap on answer tokens (``max_completion_tokens`` or ``max_tokens``), if any."""
    for name in ("max_completion_tokens", "max_tokens"):
        if body.get(name) is not None:
            return int(body[name])
    return None


def cut_to(reply: Mapping[str, Any], tokens: int) -> dict[str, Any]:
    """An answer cut at ``tokens`` (the estimate's four characters each): its text, no complete call."""
    text = str(reply.get("content") or "")
    for call in reply.get("tool_calls") or []:
        text += json.dumps({"name": call["function"]["name"], "arguments": call["function"]["arguments"]})
    return {"role": "assistant", "content": text[: max(0, tokens - 4) * 4]}


def request_problem(body: Any) -> str | None:
    """Why a request body is not one this server (or a real one) accepts; None if it is."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        return "'messages' must be a non-empty list of objects"
    for name in ("n", "max_tokens", "max_completion_tokens"):
        value = body.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            return f"'{name}' must be a positive integer, not {value!r}"
    if int(body.get("n") or 1) > 128:
        return "'n' must be at most 128"
    calls: set[str] = set()  # ids of the calls the latest assistant message made, not yet answered
    for position, message in enumerate(messages):
        role = message.get("role")
        if role not in ROLES:
            return f"messages[{position}]: unknown role {role!r}; roles are {', '.join(sorted(ROLES))}"
        if role == "assistant":
            calls = {
                str(call.get("id")) for call in message.get("tool_calls") or [] if isinstance(call, dict)
            }
        elif role == "tool":
            if str(message.get("tool_call_id")) not in calls:
                return (
                    f"messages[{position}]: a tool message must answer a call of the assistant message"
                    f" before it; no call {message.get('tool_call_id')!r} waits for an answer"
                )
            calls.discard(str(message.get("tool_call_id")))
        else:
            calls = set()
    return None


def stream_events(answer: Mapping[str, Any], include_usage: bool) -> Iterator[str]:
    """The response as server-sent events of ``chat.completion.chunk`` objects, then ``[DONE]``."""
    base = {key: answer[key] for key in ("id", "created", "model")}

    def chunk(choices: list[dict[str, Any]], **extra: Any) -> str:
        body = {**base, "object": "chat.completion.chunk", "choices": choices, **extra}
        return f"data: {json.dumps(body, separators=(',', ':'))}\n\n"

    for choice in answer["choices"]:
        index, message = choice["index"], choice["message"]
        opening = {"role": "assistant", "content": None if message.get("content") is None else ""}
        yield chunk([{"index": index, "delta": opening, "finish_reason": None}])
        content = str(message.get("content") or "")
        for start in range(0, len(content), STREAM_PIECE):
            piece = content[start : start + STREAM_PIECE]
            yield chunk([{"index": index, "delta": {"content": piece}, "finish_reason": None}])
        for position, call in enumerate(message.get("tool_calls") or []):
            function = {"name": call["function"]["name"], "arguments": ""}
            head = {"index": position, "id": call["id"], "type": "function", "function": function}
            yield chunk([{"index": index, "delta": {"tool_calls": [head]}, "finish_reason": None}])
            arguments = call["function"]["arguments"]
            for start in range(0, len(arguments), STREAM_PIECE):
                fragment = {
                    "index": position,
                    "function": {"arguments": arguments[start : start + STREAM_PIECE]},
                }
                yield chunk([{"index": index, "delta": {"tool_calls": [fragment]}, "finish_reason": None}])
        yield chunk([{"index": index, "delta": {}, "finish_reason": choice["finish_reason"]}])
    if include_usage:
        yield chunk([], usage=answer["usage"])
    yield "data: [DONE]\n\n"


def _mistake_message(kind: str, messages: Sequence[Mapping[str, Any]], tools: bool) -> dict[str, Any]:
    if kind == "unknown_tool":
        name, arguments = UNKNOWN_TOOL, "{}"
    else:
        name, arguments = "list_batches", '{"batch_id": '  # cut off: not JSON
    turn = sum(1 for message in messages if message.get("role") == "assistant") + 1
    if not tools:
        return {"role": "assistant", "content": json.dumps({"name": name, "arguments": arguments})}
    call = {"id": f"call_m{turn}_0", "type": "function", "function": {"name": name, "arguments": arguments}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _error(
    status: int, message: str, kind: str, headers: Mapping[str, str] | None = None, code: str | None = None
) -> web.Response:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return web.json_response(body, status=status, headers=headers)


def _refused_caller(settings: ServerSettings, authorization: str, model: Any) -> web.Response | None:
    """401 for a key other than the one set, 404 for a model name other than the one served."""
    if settings.api_key is not None and authorization != f"Bearer {settings.api_key}":
        return _error(401, "Incorrect API key provided.", "invalid_request_error", code="invalid_api_key")
    if settings.model_name is not None and model != settings.model_name:
        message = f"The model {model!r} does not exist or you do not have access to it."
        return _error(404, message, "invalid_request_error", code="model_not_found")
    return None


async def _stream(request: web.Request, events: Iterator[str]) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    for event in events:
        await response.write(event.encode())
    await response.write_eof()
    return response


def make_app(server: ScriptedServer) -> web.Application:
    """The aiohttp application: ``POST /v1/chat/completions`` and ``GET /v1/models``."""

    async def completions(request: web.Request) -> web.StreamResponse:
        server.stats.requests += 1
        if request.content_type != "application/json":
            return _error(
                400,
                f"Content-Type must be application/json, not {request.content_type!r}",
                "invalid_request_error",
            )
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "the request body is not JSON", "invalid_request_error")
        problem = request_problem(body)
        if problem is not None:
            return _error(400, problem, "invalid_request_error")
        messages = body["messages"]
        settings = server.settings
        server.stats.last_settings = {key: value for key, value in body.items() if key != "messages"}
        server.stats.last_headers = frozenset(name.lower() for name in request.headers)
        refused = _refused_caller(settings, request.headers.get("Authorization", ""), body.get("model"))
        if refused is not None:
            return refused
        fault = server.fault(body.get("seed"), messages, str(body.get("model") or ""))
        if fault is not None:
            server.stats.faults[fault] += 1
        if fault == "rate_limit":
            headers = {
                "Retry-After": str(math.ceil(settings.retry_after)),
                "retry-after-ms": str(round(settings.retry_after * 1000)),
            }
            return _error(429, "rate limited (injected)", "rate_limit_exceeded", headers)
        if fault == "server_error":
            return _error(500, "internal error (injected)", "server_error")
        window = settings.context_window
        if window is not None and estimate_tokens(messages) > window:
            return _error(
                400,
                f"This model's maximum context length is {window} tokens; the messages hold"
                f" {estimate_tokens(messages)}. Please reduce the length of the messages.",
                "invalid_request_error",
                code="context_length_exceeded",
            )
        try:
            answer = server.completion(body)
        except Exception as exc:  # a policy that cannot go on from these messages
            return _error(400, f"cannot answer these messages: {exc!r}", "invalid_request_error")
        if settings.delay:
            await asyncio.sleep(settings.delay)
        if fault == "stall":
            await asyncio.sleep(settings.stall)
        if fault == "bad_json":
            text = json.dumps(answer)
            return web.Response(text=text[: len(text) // 2], content_type="application/json")
        server.stats.answered += 1
        if body.get("stream") is True:
            options = body.get("stream_options")
            include_usage = isinstance(options, dict) and options.get("include_usage") is True
            return await _stream(request, stream_events(answer, include_usage))
        return web.json_response(answer)

    async def models(request: web.Request) -> web.StreamResponse:
        name = server.settings.model_name or f"scripted-{server.settings.policy}"
        return web.json_response(
            {
                "object": "list",
                "data": [{"id": name, "object": "model", "created": 0, "owned_by": "batchgate"}],
            }
        )

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_get("/v1/models", models)
    return app


@dataclass
class RunningServer:
    """A server started by :func:`serve_in_thread`: where it listens and what it saw."""

    server: ScriptedServer
    port: int

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    @property
    def stats(self) -> ServerStats:
        return self.server.stats


@contextmanager
def serve_in_thread(settings: ServerSettings, port: int = 0) -> Iterator[RunningServer]:
    """Serve on 127.0.0.1 (a free port when ``port`` is 0) from a thread of this process."""
    server = ScriptedServer(settings)
    with serve_app_in_thread(make_app(server), port) as base_url:
        yield RunningServer(server, int(base_url.rsplit(":", 1)[1].split("/")[0]))


@contextmanager
def serve_app_in_thread(app: web.Application, port: int = 0) -> Iterator[str]:
    """Any aiohttp application on 127.0.0.1 from a thread of this process; yields its ``/v1`` base URL."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    state: dict[str, Any] = {}

    async def start() -> None:
        runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=1.0, handler_cancellation=True)
        await runner.setup()
        site = web.TCPSite(runner, HOST, port)
        await site.start()
        state["runner"] = runner
        state["port"] = runner.addresses[0][1]

    def main() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(start())
        except BaseException as exc:  # surfaced to the caller below
            state["error"] = exc
            started.set()
            return
        started.set()
        loop.run_forever()
        loop.run_until_complete(state["runner"].cleanup())
        loop.close()

    thread = threading.Thread(target=main, name="batchgate-serve", daemon=True)
    thread.start()
    started.wait()
    if "error" in state:
        raise state["error"]
    try:
        yield f"http://{HOST}:{state['port']}/v1"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)


def serve_forever(settings: ServerSettings, port: int, announce: Any = print) -> None:
    """Serve on 127.0.0.1:``port`` until interrupted (the ``batchgate serve`` command).

    A port already taken raises :class:`PortBusy` before anything is served.
    """
    server = ScriptedServer(settings)
    try:
        web.run_app(
            make_app(server),
            host=HOST,
            port=port,
            handler_cancellation=True,
            print=lambda _text: announce(
                f"serving {settings.desk}/{settings.policy} at http://{HOST}:{port}/v1 (Ctrl-C to stop)"
            ),
        )
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, errno.EACCES):
            reason = os.strerror(exc.errno)
            raise PortBusy(f"cannot listen on {HOST}:{port}: {reason}; pick another --port") from None
        raise


class PortBusy(OSError):
    """The port is taken (or not ours to take): ``batchgate serve`` says so in one line."""


__all__ = [
    "FAULT_KINDS",
    "MODEL_ERROR_KINDS",
    "PortBusy",
    "RunningServer",
    "ScriptedServer",
    "ServerSettings",
    "ServerStats",
    "canonical",
    "estimate_tokens",
    "make_app",
    "serve_app_in_thread",
    "serve_forever",
    "serve_in_thread",
]
