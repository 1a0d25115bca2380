"""One request to the model: sent, read, and when it fails, classified (:func:`classify`) and
retried with backoff, cut short, or the run stopped."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Mapping
from typing import Any

from ..chat import ChatEpisode
from .config import RunConfig

LOG = logging.getLogger(__name__)  # unconfigured, its warnings reach stderr as bare lines


class ServiceFailure(Exception):
    """The service failed a request for good (after retries, or with a status not worth retrying)."""

    def __init__(self, cause: BaseException, attempts: int) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause
        self.attempts = attempts


class MalformedResponse(Exception):
    """A 200 whose body is not a chat-completions response with a message."""


class CutShort(Exception):
    """The service refused the rollout's own content, or cut the answer: the rollout ends unfinished."""

    def __init__(self, ended: str, detail: str, message: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.ended = ended
        self.message = message  # the cut answer, kept in the transcript though it never ran


class RunStopped(Exception):
    """The run cannot go on (bad key, unknown model, wrong address...): one line, cause and fix."""


RETRY_STATUSES = frozenset({408, 409, 429})
CONTENT_STATUSES = frozenset({400, 413, 422})
_TOO_LONG = re.compile(
    r"context[ _-]?(length|window)|maximum context|too many tokens|prompt is too long|too long"
    r"|exceeds? (the )?(model'?s? )?(maximum|max|limit)|reduce the length|input length",
    re.IGNORECASE,
)
_UNKNOWN_MODEL = re.compile(
    r"model.{0,80}(not found|does not exist|not exist|unknown|no such|not available|invalid model)"
    r"|unknown model|model_not_found|invalid model",
    re.IGNORECASE,
)


def retryable(exc: BaseException) -> bool:
    """A transport fault worth asking again: timeouts, lost connections, 408/409/429, 5xx, bad bodies."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRY_STATUSES or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError | MalformedResponse | ValueError)


def _error_text(exc: BaseException) -> str:
    """The server's own words of an error response, once: the JSON error's message and code
    (``The model `x` does not exist. (model_not_found)``), or the client's message when the
    body has none (the client's own text repeats the body, so the two are not joined)."""
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, Mapping) else None
    if isinstance(inner, Mapping) and inner.get("message"):
        code = inner.get("code") or inner.get("type")
        text = str(inner["message"]) + (f" ({code})" if code else "")
    else:
        text = str(getattr(exc, "message", "") or exc)
    return text[:500]


def classify(exc: BaseException, config: RunConfig, first_turn: bool) -> str:
    """What a failed request means: ``retry``, ``stop``, ``context_overflow`` or ``rejected``."""
    import openai

    if isinstance(exc, RunStopped):
        return "stop"
    if not isinstance(exc, openai.APIStatusError):
        return "retry" if retryable(exc) else "stop"
    status, text = exc.status_code, _error_text(exc)
    if status in RETRY_STATUSES or status >= 500:
        return "retry"
    if status in CONTENT_STATUSES and _TOO_LONG.search(text) and not _UNKNOWN_MODEL.search(text):
        return "context_overflow"
    if status == 413:
        return "context_overflow"
    if status in (400, 422) and not first_turn and not _UNKNOWN_MODEL.search(text):
        return "rejected"
    return "stop"


def stop_message(exc: BaseException, config: RunConfig) -> str:
    """One line saying why the run stopped and what to change."""
    import openai

    if isinstance(exc, RunStopped):
        return str(exc)
    where = config.base_url.rstrip("/")
    if isinstance(exc, openai.APIStatusError):
        status, text = exc.status_code, _error_text(exc)
        if status == 401:
            return f"{where} refused the API key (401: {text}); set a valid key in {config.api_key_env}"
        if status == 403:
            return f"{where} does not let this key use it (403: {text}); check the key's access to {config.model!r}"
        if _UNKNOWN_MODEL.search(text) or (status == 404 and "model" in text.lower()):
            return f"{where} does not know the model {config.model!r} ({status}: {text}); check --model ({where}/models lists them)"
        if status == 404:
            return f"nothing answers at {where}/chat/completions (404: {text}); check --base-url (most servers want it to end in /v1)"
        return (
            f"{where} refused the first request ({status}: {text}); check --sampling-args, --header,"
            " --max-tokens and --mode against what the server accepts"
        )
    if isinstance(exc, openai.APIConnectionError):
        return f"cannot reach {where} ({type(exc).__name__}: {exc}); is the server running, and is --base-url right?"
    return f"{where}: {type(exc).__name__}: {exc}"


def unreachable(exc: BaseException) -> bool:
    """No connection could be made at all (a timeout is not that: the server was reached)."""
    import openai

    return isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError)


def retry_after(exc: BaseException) -> float | None:
    """Seconds a 429 (or 503) asked for, from ``retry-after-ms`` or ``Retry-After``."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        if headers.get("retry-after-ms") is not None:
            return float(headers["retry-after-ms"]) / 1000
        if headers.get("retry-after") is not None:
            return float(headers["retry-after"])
    except ValueError:
        return None
    return None


class FirstRequest:
    """The run's first request goes out alone: every other rollout waits until it is answered."""

    def __init__(self) -> None:
        self.answered = asyncio.Event()
        self.taken = False
        self.stopped: RunStopped | None = None  # the first request stopped the run: nobody else asks

    async def wait_turn(self) -> bool:
        """True for the one caller that sends the first request; the others wait for its answer."""
        if not self.taken:
            self.taken = True
            return True
        await self.answered.wait()
        if self.stopped is not None:
            raise self.stopped
        return False


def request_arguments(config: RunConfig, chat: ChatEpisode, rollout: int) -> dict[str, Any]:
    """The keyword arguments of one ``chat.completions.create`` call."""
    arguments: dict[str, Any] = {
        "model": config.model,
        "messages": chat.messages,
        "seed": config.seed + rollout,
    }
    if config.mode == "tools":
        arguments["tools"] = chat.tools
    for name in ("temperature", "top_p", "max_tokens"):
        if getattr(config, name) is not None:
            arguments[name] = getattr(config, name)
    if config.sampling_args:
        arguments["extra_body"] = dict(config.sampling_args)
    if config.stream:
        arguments.update(stream=True, stream_options={"include_usage": True})
    return arguments


async def ask(
    client: Any,
    config: RunConfig,
    chat: ChatEpisode,
    rollout: int,
    tally: dict[str, int],
    first: FirstRequest | None = None,
) -> dict[str, Any]:
    """The model's next assistant message, retried on transport faults.

    Raises :class:`ServiceFailure` when the faults outlast the retries, :class:`CutShort`
    when the rollout must end unfinished, :class:`RunStopped` when the run must.
    """
    first_turn = not any(message.get("role") == "assistant" for message in chat.messages)
    alone = first is not None and await first.wait_turn()
    try:
        attempt = 0
        while True:
            tally["requests"] += 1
            try:
                response = await _create(client, config, request_arguments(config, chat, rollout))
                message, finish = first_choice(response)
            except Exception as exc:
                _unless_retried(exc, config, first_turn, attempt, first if alone else None)
                attempt += 1
                tally["retries"] += 1
                await asyncio.sleep(_delay(config, exc, attempt))
                continue
            usage = getattr(response, "usage", None)
            tally["prompt_tokens"] += int(getattr(usage, "prompt_tokens", 0) or 0)
            tally["completion_tokens"] += int(getattr(usage, "completion_tokens", 0) or 0)
            if finish == "length" and not _complete_calls(message, config.mode):
                raise CutShort(
                    "length", "the answer was cut at max_tokens before a complete tool call", message
                )
            return message
    finally:
        if alone and first is not None:
            first.answered.set()


def _unless_retried(
    exc: Exception, config: RunConfig, first_turn: bool, attempt: int, first: FirstRequest | None
) -> None:
    """Return when a failed request is to be sent again; otherwise raise what its failure means
    (:class:`RunStopped`, :class:`CutShort` or :class:`ServiceFailure`). ``first`` is given for the
    run's first request, sent alone: a run whose server cannot be reached stops there."""
    alone = first is not None
    verdict = classify(exc, config, first_turn)
    if alone and attempt == 0 and config.max_retries and unreachable(exc):  # said now, once
        LOG.warning(_waiting(exc, config))
    if verdict == "stop" or (alone and attempt >= config.max_retries and unreachable(exc)):
        stopped = RunStopped(stop_message(exc, config))
        if first is not None:
            first.stopped = stopped
        raise stopped from exc
    if verdict in ("context_overflow", "rejected"):
        raise CutShort(verdict, _error_text(exc)) from exc
    if attempt >= config.max_retries:
        raise ServiceFailure(exc, attempt + 1) from exc


def _waiting(exc: BaseException, config: RunConfig) -> str:
    """The line said when the first request finds no server: how long the run will keep trying."""
    wait = sum(min(config.backoff * 2**attempt, config.max_backoff) for attempt in range(config.max_retries))
    return (
        f"cannot reach {config.base_url.rstrip('/')} ({type(exc).__name__});"
        f" trying {config.max_retries} more times over {wait:g} s (--max-retries, --backoff)"
    )


def _delay(config: RunConfig, exc: BaseException, attempt: int) -> float:
    delay = float(min(config.backoff * 2 ** (attempt - 1), config.max_backoff))
    asked = retry_after(exc)
    return delay if asked is None else max(delay, min(asked, config.max_backoff))


async def _create(client: Any, config: RunConfig, arguments: dict[str, Any]) -> Any:
    """One request; with ``stream`` the server-sent events assembled by the ``openai`` library."""
    if not config.stream:
        return await client.chat.completions.create(**arguments)
    from openai.lib.streaming.chat import ChatCompletionStreamState

    state = ChatCompletionStreamState()
    chunks = 0
    stream = await client.chat.completions.create(**arguments)
    async for chunk in stream:
        chunks += 1
        state.handle_chunk(chunk)
    if not chunks:
        raise RunStopped(
            f"{config.base_url.rstrip('/')} sent no server-sent events for a streamed request"
            " (a server that does not stream?); run without --stream"
        )
    return state.get_final_completion()


def _complete_calls(message: Mapping[str, Any], mode: str) -> bool:
    """The message holds at least one tool call, every one with arguments that parse as JSON."""
    calls = message.get("tool_calls") or []
    if mode == "text" or not calls:
        return False
    try:
        for call in calls:
            json.loads(call["function"]["arguments"] or "{}")
    except (ValueError, TypeError, KeyError):
        return False
    return True


def assistant_message(response: Any) -> dict[str, Any]:
    """The first choice's message as a plain dict (see :func:`first_choice`)."""
    return first_choice(response)[0]


def first_choice(response: Any) -> tuple[dict[str, Any], str | None]:
    """The first choice's message as a plain dict, and its finish reason.

    :class:`MalformedResponse` if there is none; :class:`RunStopped` for a body that
    is an HTML page or server-sent events (a wrong address, or a server that streams).
    """
    if isinstance(response, str | bytes):
        text = response.decode(errors="replace") if isinstance(response, bytes) else response
        head = text.lstrip()[:200].lower()
        if head.startswith(("<!doctype html", "<html")) or "<html" in head:
            raise RunStopped(
                "the server answered with an HTML page, not a chat completion; check --base-url"
                " (the API's address, which most servers end in /v1)"
            )
        if head.startswith(("data:", "event:")):
            raise RunStopped("the server answers with server-sent events (it streams); add --stream")
        raise MalformedResponse(f"the body is not a chat completion: {text[:120]!r}")
    choices = getattr(response, "choices", None)
    if not choices:
        raise MalformedResponse(f"no choices in the response ({type(response).__name__})")
    choice = choices[0]
    message = getattr(choice, "message", None)
    if message is None:
        raise MalformedResponse("the first choice has no message")
    out: dict[str, Any] = {"role": "assistant", "content": getattr(message, "content", None)}
    calls = getattr(message, "tool_calls", None) or []
    try:
        if calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function.name, "arguments": call.function.arguments},
                }
                for call in calls
            ]
    except AttributeError as exc:
        raise MalformedResponse(f"a tool call without a function: {exc}") from exc
    return out, getattr(choice, "finish_reason", None)


__all__ = [
    "CONTENT_STATUSES",
    "RETRY_STATUSES",
    "CutShort",
    "FirstRequest",
    "MalformedResponse",
    "RunStopped",
    "ServiceFailure",
    "ask",
    "assistant_message",
    "classify",
    "first_choice",
    "request_arguments",
    "retry_after",
    "retryable",
    "stop_message",
    "unreachable",
]
