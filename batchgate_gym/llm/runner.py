"""Rollouts of a desk played by a model behind a chat-completions API.

:func:`run_rollouts` plays ``rollouts`` episodes of each of the first ``n`` cases
of a split (or case file) through :class:`~.chat.ChatEpisode`, asking the model
with the official ``openai`` client (``AsyncOpenAI``) at ``base_url``. At most
``concurrency`` rollouts are in flight (an ``asyncio.Semaphore``). The client's own
retries are off: this module retries, and counts, each failed request with
exponential backoff (``backoff * 2**k`` seconds, at most ``max_backoff``; a 429's
``retry-after-ms`` or ``Retry-After`` when it asks for longer) after a 429, a 5xx,
a 408 or 409, a timeout, a lost connection, or a body that is not a valid
chat-completions response. After ``max_retries`` retries the rollout ends there.

Each rollout is one JSONL row, appended (and flushed) as soon as it finishes, in
any order (see :data:`ROW_FIELDS`). A rollout that ended because the service
failed is written with ``"error": {"kind": "infra", ...}`` and no score: it says
nothing about the model and is never scored 0. A model's own mistakes (an
unknown tool, arguments that are not JSON, prose instead of a call) reach the
environment, which refuses and logs them like any bad action: those rollouts are
scored. ``timing`` (wall-clock latency) is the only field that is not a function
of the conversation; reports never read it.

Resumable: a run first reads its out file and skips every (case, rollout) it
already holds for this desk and model; a last line cut short by a killed run is
dropped before anything is appended. ``retry_infra=True`` also plays again the
rollouts whose only rows are infra errors.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .chat import ChatEpisode, ChatSettings
from .results import desk_tools, read_rows, trim_partial_line

ROW_FIELDS = (
    "desk",  # the desk played
    "source",  # the split name or case file the case came from
    "case_index",  # its place there
    "case_id",
    "family",
    "rollout",  # 0 .. rollouts-1; also the request's seed
    "model",
    "mode",  # tools or text
    "messages",  # the whole conversation
    "score",  # the environment's final score (reward, terms, metrics), or None
    "info_metrics",  # metrics the desk reads from the final info rather than the score
    "log",  # the exported log
    "head",  # its pinned head (the final info's log_head)
    "turns",  # assistant messages sent
    "usage",  # prompt, completion and total tokens, summed over the rollout
    "requests",  # requests sent, retries included
    "retries",
    "timing",  # wall-clock seconds: never used for scores
    "error",  # None, or {"kind": "infra", "class", "message", "attempts"}
)


@dataclass(frozen=True)
class RunConfig:
    """What ``batchgate run-model`` plays, against what, and how hard it tries."""

    model: str
    base_url: str
    api_key: str
    out: Path
    desk: str = "gate"
    split: str | None = None
    cases: str | None = None
    n: int | None = None
    rollouts: int = 1
    concurrency: int = 8
    mode: str = "tools"
    timeout: float = 60.0
    max_retries: int = 5
    backoff: float = 0.5
    max_backoff: float = 30.0
    retry_infra: bool = False
    limit: int | None = None  # play at most this many rollouts this run (the rest on a rerun)
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)  # the desk's options (rules=...)

    def __post_init__(self) -> None:
        if self.mode not in ("tools", "text"):
            raise ValueError(f"mode is 'tools' or 'text', not {self.mode!r}")
        for name in ("rollouts", "concurrency"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} is at least 1")
        for name in ("n", "limit"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"{name} is at least 1 when given")
        address = urlsplit(self.base_url)
        if address.scheme not in ("http", "https") or not address.netloc:
            # Checked here: a malformed address would otherwise fail every request, and each
            # rollout would be written down as an infra error.
            raise ValueError(
                f"base_url is an http(s) address such as http://127.0.0.1:8000/v1, not {self.base_url!r}"
            )
        if self.max_retries < 0 or self.timeout <= 0 or self.backoff < 0:
            raise ValueError("max_retries >= 0, timeout > 0 and backoff >= 0")


@dataclass
class RunSummary:
    """What a run did: rollouts played (scored or infra errors) and skipped as already done."""

    planned: int = 0
    skipped: int = 0
    scored: int = 0
    infra_errors: int = 0
    requests: int = 0
    retries: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)


class InfraError(Exception):
    """The service failed a request for good (after retries, or with a status not worth retrying)."""

    def __init__(self, cause: BaseException, attempts: int) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause
        self.attempts = attempts


class MalformedResponse(Exception):
    """A 200 whose body is not a chat-completions response with a message."""


RETRY_STATUSES = frozenset({408, 409, 429})


def retryable(exc: BaseException) -> bool:
    """A failure worth asking again: timeouts, lost connections, 429, 5xx, bodies that are not JSON."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRY_STATUSES or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError | MalformedResponse | ValueError)


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


def plan(config: RunConfig) -> tuple[list[Any], str]:
    """The cases played (the first ``n``) and the name of where they came from."""
    from batchgate_gym.app import desks

    desk = desks.get(config.desk)
    cases = desk.fixed_cases(config.cases, config.split)
    source = config.cases or config.split or desk.default_split or ""
    return (cases if config.n is None else cases[: config.n]), source


def done_pairs(rows: Sequence[Mapping[str, Any]], config: RunConfig) -> set[tuple[str, int]]:
    """(case_id, rollout) already in the out file for this desk and model."""
    done = set()
    for row in rows:
        if row.get("desk") != config.desk or row.get("model") != config.model:
            continue
        if config.retry_infra and row.get("error") is not None:
            continue
        done.add((row["case_id"], int(row["rollout"])))
    return done


async def run_rollouts(
    config: RunConfig, on_row: Callable[[dict[str, Any]], None] | None = None
) -> RunSummary:
    """Play every (case, rollout) not yet in ``config.out``, appending one row each as it ends."""
    from openai import AsyncOpenAI

    cases, source = plan(config)
    config.out.parent.mkdir(parents=True, exist_ok=True)
    trim_partial_line(config.out)
    done = done_pairs([row for _line, row in read_rows(config.out)], config) if config.out.exists() else set()
    pairs = [
        (index, case, rollout)
        for index, case in enumerate(cases)
        for rollout in range(config.rollouts)
        if (case.case_id, rollout) not in done
    ]
    summary = RunSummary(planned=len(cases) * config.rollouts)
    summary.skipped = summary.planned - len(pairs)
    if config.limit is not None:
        pairs = pairs[: config.limit]
    client = AsyncOpenAI(
        base_url=config.base_url, api_key=config.api_key, max_retries=0, timeout=config.timeout
    )
    gate = asyncio.Semaphore(config.concurrency)
    with config.out.open("a", encoding="utf-8") as out:

        async def one(index: int, rollout: int) -> None:
            async with gate:
                row = await play_rollout(client, config, cases, source, index, rollout)
            out.write(json.dumps(row, sort_keys=True, separators=(",", ":")) + "\n")
            out.flush()
            summary.rows.append(row)
            summary.requests += row["requests"]
            summary.retries += row["retries"]
            if row["error"] is None:
                summary.scored += 1
            else:
                summary.infra_errors += 1
            if on_row is not None:
                on_row(row)

        try:
            await asyncio.gather(*(one(index, rollout) for index, _case, rollout in pairs))
        finally:
            await client.close()
    return summary


def info_metrics(desk: Any, info: Mapping[str, Any]) -> dict[str, Any]:
    """The metrics a desk reads from an episode's final info rather than its score: a row
    keeps them, since re-grading rebuilds the score alone."""
    return {m.name: m.read(info) for m in desk.metrics if m.source == "info"}


async def play_rollout(
    client: Any, config: RunConfig, cases: list[Any], source: str, index: int, rollout: int
) -> dict[str, Any]:
    """One episode of ``cases[index]``, as a result row (scored, or an infra error)."""
    from batchgate_gym.app import desks

    desk = desks.get(config.desk)
    tools = desk_tools(config.desk)
    env = desk.make_env(cases=cases, **config.env_kwargs)
    started = time.perf_counter()
    tally = {"requests": 0, "retries": 0, "prompt_tokens": 0, "completion_tokens": 0}
    chat = ChatEpisode(env, tools, ChatSettings(mode=config.mode, no_tool_call=desk.chat_no_tool_call))
    case = cases[index]
    row: dict[str, Any] = {
        "desk": config.desk,
        "source": source,
        "case_index": index,
        "case_id": case.case_id,
        "family": getattr(case, "family", ""),
        "rollout": rollout,
        "model": config.model,
        "mode": config.mode,
    }
    error: dict[str, Any] | None = None
    info: dict[str, Any] = {}
    try:
        chat.reset(seed=index, options={"case_index": index})
        while True:
            message = await ask(client, config, chat.messages, tools, rollout, tally)
            step = chat.step(message)
            if step.done:
                info = step.info
                break
    except InfraError as exc:
        error = {
            "kind": "infra",
            "class": type(exc.cause).__name__,
            "message": str(exc.cause)[:500],
            "attempts": exc.attempts,
        }
    finally:
        log = env.unwrapped.export_log()
        env.close()
    scored = error is None and "score" in info
    row.update(
        messages=chat.messages,
        score=info["score"] if scored else None,
        info_metrics=info_metrics(desk, info) if scored else {},
        log=log if scored else None,
        head=info.get("log_head") if scored else None,
        turns=sum(1 for m in chat.messages if m.get("role") == "assistant"),
        usage={
            "prompt_tokens": tally["prompt_tokens"],
            "completion_tokens": tally["completion_tokens"],
            "total_tokens": tally["prompt_tokens"] + tally["completion_tokens"],
        },
        requests=tally["requests"],
        retries=tally["retries"],
        timing={"latency_s": round(time.perf_counter() - started, 3)},
        error=error,
    )
    return row


async def ask(
    client: Any,
    config: RunConfig,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    rollout: int,
    tally: dict[str, int],
) -> dict[str, Any]:
    """The model's next assistant message, retried on transient failures; :class:`InfraError` if none."""
    extra: dict[str, Any] = {"tools": tools} if config.mode == "tools" else {}
    attempt = 0
    while True:
        tally["requests"] += 1
        try:
            response = await client.chat.completions.create(
                model=config.model, messages=messages, seed=rollout, **extra
            )
            message = assistant_message(response)
        except Exception as exc:
            if not retryable(exc) or attempt >= config.max_retries:
                raise InfraError(exc, attempt + 1) from exc
            delay = min(config.backoff * 2**attempt, config.max_backoff)
            asked = retry_after(exc)
            if asked is not None:
                delay = max(delay, min(asked, config.max_backoff))
            attempt += 1
            tally["retries"] += 1
            await asyncio.sleep(delay)
            continue
        usage = getattr(response, "usage", None)
        tally["prompt_tokens"] += int(getattr(usage, "prompt_tokens", 0) or 0)
        tally["completion_tokens"] += int(getattr(usage, "completion_tokens", 0) or 0)
        return message


def assistant_message(response: Any) -> dict[str, Any]:
    """The first choice's message as a plain dict; :class:`MalformedResponse` if there is none."""
    choices = getattr(response, "choices", None)
    if not choices:
        raise MalformedResponse(f"no choices in the response ({type(response).__name__})")
    message = getattr(choices[0], "message", None)
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
    return out


__all__ = [
    "ROW_FIELDS",
    "InfraError",
    "MalformedResponse",
    "RunConfig",
    "RunSummary",
    "assistant_message",
    "done_pairs",
    "plan",
    "retryable",
    "run_rollouts",
]
