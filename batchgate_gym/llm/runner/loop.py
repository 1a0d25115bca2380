"""The run: every (case, rollout) still to play, played concurrently, each written as one row
as it ends (:func:`run_rollouts`, :func:`play_here`, :func:`play_rollout`)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from batchgate_gym.desks import registry
from batchgate_gym.kernel.certificate import Signer
from batchgate_gym.kernel.infra import INFRA_SEAL

from .. import certified
from ..chat import ChatEpisode, ChatSettings
from ..results import read_rows, trim_partial_line
from .asking import CutShort, FirstRequest, ServiceFailure, ask
from .config import CUT_SHORT, RunConfig, RunSummary
from .resume import (
    check_resumable,
    done_pairs,
    earlier_runs,
    manifest_of,
    now_text,
    plan,
    run_settings,
    settings_key,
    system_prompt_digest,
    write_meta,
)


async def run_rollouts(
    config: RunConfig,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    player: Player | None = None,
) -> RunSummary:
    """Play every selected (case, rollout) not yet in ``config.out``, appending one row each as it ends.

    ``on_start(n)`` is told how many rollouts this run will play, ``on_row(row)`` each
    row as it is written. ``player`` plays the rollouts (:func:`play_here` by default,
    in this process; ``run-model --backend ray`` passes one that plays them as Ray tasks).

    Raises :class:`SettingsMismatch` before any request for an out file of other
    settings, and :class:`RunStopped` when the run cannot go on (the rows already
    written are kept).
    """
    started_wall, started = now_text(), time.perf_counter()
    cases, chosen, source = plan(config)
    settings = run_settings(config)
    signer = Signer.load(config.sign_key) if config.sign_key is not None else None
    manifest = manifest_of(config, cases, chosen, source, settings)
    provenance = RowProvenance.of(config, manifest, signer)
    config.out.parent.mkdir(parents=True, exist_ok=True)
    trim_partial_line(config.out)
    existing = [row for _line, row in read_rows(config.out)] if config.out.exists() else []
    check_resumable(config, settings, existing, manifest, signer)
    pairs, summary = _still_to_play(config, cases, chosen, existing)
    if on_start is not None:
        on_start(len(pairs))
    runs = earlier_runs(config) if existing else []
    this_run: dict[str, Any] = {"started": started_wall, "ended": None, "counts": {}}
    write_meta(config, settings, [*runs, this_run], manifest, signer)
    key = settings_key(settings)
    try:
        with config.out.open("a", encoding="utf-8") as out:
            write = _row_writer(out, key, provenance, summary, on_row)
            if player is not None:
                await player(config, pairs, provenance, write)
            else:
                await play_here(config, pairs, provenance, write, planned=(cases, source))
    finally:
        summary.elapsed_s = time.perf_counter() - started
        this_run.update(ended=now_text(), counts=_counts(summary))
        write_meta(config, settings, [*runs, this_run], manifest, signer)
    return summary


def _still_to_play(
    config: RunConfig, cases: Sequence[Any], chosen: Sequence[int], existing: Sequence[Mapping[str, Any]]
) -> tuple[list[tuple[int, int]], RunSummary]:
    """The (case index, rollout) pairs this run plays (those not in the out file yet, at most
    ``config.limit``), and a summary that counts what was planned and skipped."""
    done = done_pairs(existing, config)
    pairs = [
        (index, rollout)
        for index in chosen
        for rollout in range(config.rollouts)
        if (cases[index].case_id, rollout) not in done
    ]
    summary = RunSummary(planned=len(chosen) * config.rollouts)
    summary.skipped = summary.planned - len(pairs)
    if config.limit is not None:
        pairs = pairs[: config.limit]
    return pairs, summary


def _row_writer(
    out: IO[str],
    key: str,
    provenance: RowProvenance,
    summary: RunSummary,
    on_row: Callable[[dict[str, Any]], None] | None,
) -> Callable[[dict[str, Any]], None]:
    """What writes a finished rollout's row: its settings key and certificate added, appended and
    flushed at once, counted, and handed on."""

    def write(row: dict[str, Any]) -> None:
        row["settings_key"] = key
        provenance.sign(row)
        out.write(json.dumps(row, sort_keys=True, separators=(",", ":")) + "\n")
        out.flush()
        _count(summary, row)
        if on_row is not None:
            on_row(row)

    return write


Player = Callable[
    [RunConfig, Sequence[tuple[int, int]], "RowProvenance", Callable[[dict[str, Any]], None]], Awaitable[None]
]
"""What plays a run's (case index, rollout) pairs: ``player(config, pairs, provenance, write)``
hands each row to ``write`` as its rollout ends."""


def client_of(config: RunConfig) -> Any:
    """The official ``AsyncOpenAI`` client, its own retries off (:func:`ask` retries and counts)."""
    from openai import AsyncOpenAI

    return AsyncOpenAI(
        base_url=config.base_url,
        api_key=config.api_key,
        max_retries=0,
        timeout=config.timeout,
        default_headers=dict(config.headers),
    )


async def play_here(
    config: RunConfig,
    pairs: Sequence[tuple[int, int]],
    provenance: RowProvenance | None,
    write: Callable[[dict[str, Any]], None],
    first: FirstRequest | None = None,
    planned: tuple[list[Any], str] | None = None,
) -> None:
    """Play ``pairs`` (case index, rollout) in this process, at most ``config.concurrency`` at
    once, handing each row to ``write`` as it ends; the first request goes out alone.
    ``planned`` is the cases and source's name, when already read."""
    if planned is None:
        cases, _chosen, source = plan(config)
    else:
        cases, source = planned
    client = client_of(config)
    gate = asyncio.Semaphore(config.concurrency)
    first = FirstRequest() if first is None else first

    async def one(index: int, rollout: int) -> None:
        async with gate:
            row = await play_rollout(client, config, cases, source, index, rollout, first, provenance)
        write(row)

    tasks = [asyncio.ensure_future(one(index, rollout)) for index, rollout in pairs]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await client.close()


@dataclass(frozen=True)
class RowProvenance:
    """What every row of a run records of where it came from (:data:`.certified.ROW_CERTIFIED`),
    and the key that signs it."""

    version: str
    source_digest: str
    run: str  # the manifest's digest
    sampling: Mapping[str, Any]
    signer: Signer | None = None

    @classmethod
    def of(cls, config: RunConfig, manifest: Mapping[str, Any], signer: Signer | None) -> RowProvenance:
        sampling = {
            "temperature": config.temperature,
            "top_p": config.top_p,
            "max_tokens": config.max_tokens,
            "seed": config.seed,
            "sampling_args": dict(sorted(config.sampling_args.items())),
        }
        return cls(
            str(manifest["version"]),
            str(manifest["source_digest"]),
            certified.manifest_digest(manifest),
            sampling,
            signer,
        )

    def fields(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "source_digest": self.source_digest,
            "run": self.run,
            "sampling": dict(self.sampling),
        }

    def sign(self, row: dict[str, Any]) -> None:
        """Add the row's certificate (with a key; without, nothing)."""
        if self.signer is not None:
            row["certificate"] = self.signer.sign(certified.row_facts(row))


def info_metrics(desk: Any, info: Mapping[str, Any]) -> dict[str, Any]:
    """The metrics a desk reads from an episode's final info rather than its score: a row
    keeps them, since re-grading rebuilds the score alone."""
    return {m.name: m.read(info) for m in desk.scoring.metrics if m.source == "info"}


def _count(summary: RunSummary, row: Mapping[str, Any]) -> None:
    summary.rows.append(dict(row))
    summary.requests += row["requests"]
    summary.retries += row["retries"]
    if row["error"] is None:
        summary.scored += 1
        summary.truncated += row["ended"] in CUT_SHORT
    else:
        summary.infra_errors += 1


def _counts(summary: RunSummary) -> dict[str, Any]:
    return {
        "planned": summary.planned,
        "skipped": summary.skipped,
        "scored": summary.scored,
        "cut_short": summary.truncated,
        "infra_errors": summary.infra_errors,
        "requests": summary.requests,
        "retries": summary.retries,
        "elapsed_s": round(summary.elapsed_s, 3),
    }


async def play_rollout(
    client: Any,
    config: RunConfig,
    cases: list[Any],
    source: str,
    index: int,
    rollout: int,
    first: FirstRequest | None = None,
    provenance: RowProvenance | None = None,
) -> dict[str, Any]:
    """One episode of ``cases[index]``, as a result row (scored, or an infra error).

    An infra error keeps its evidence: the log up to the failure, sealed as an
    infrastructure error, and its head."""
    desk = registry.get(config.desk)
    env = desk.make_env(cases=cases, **config.env_kwargs)
    started = time.perf_counter()
    tally = {"requests": 0, "retries": 0, "prompt_tokens": 0, "completion_tokens": 0}
    chat_settings = ChatSettings(
        mode=config.mode, no_tool_call=desk.chat_no_tool_call, system_prompt=config.system_prompt
    )
    chat = ChatEpisode(env, None, chat_settings)
    row = _row_of(config, cases[index], source, index, rollout, provenance)
    error: dict[str, Any] | None = None
    info: dict[str, Any] = {}
    ended = "infra"
    try:
        chat.reset(seed=row["seed"], options={"case_index": index})
        info, ended = await _converse(client, config, chat, rollout, tally, first)
    except ServiceFailure as exc:
        error = _infra_error(type(exc.cause).__name__, str(exc.cause), exc.attempts)
        # The evidence: the log as far as it went, sealed as the machine's failure, not the model's.
        info = env.unwrapped.end_unfinished(f"{INFRA_SEAL}the model's service failed: {error['class']}")
    finally:
        log = env.unwrapped.export_log()
        env.close()
    if error is None and "infra_error" in info:  # the machine stopped the episode itself
        error = _infra_error("InfraFailure", str(info["infra_error"]), 1)
    row.update(_outcome(desk, chat, info, ended, error, log, tally))
    row["timing"] = {"latency_s": round(time.perf_counter() - started, 3)}
    return row


def _row_of(
    config: RunConfig, case: Any, source: str, index: int, rollout: int, provenance: RowProvenance | None
) -> dict[str, Any]:
    """A row's fields known before the episode: what is played, by which model, from where."""
    return {
        "desk": config.desk,
        "source": source,
        "case_index": index,
        "case_id": case.case_id,
        "family": getattr(case, "family", ""),
        "rollout": rollout,
        "model": config.model,
        "mode": config.mode,
        "system_prompt": system_prompt_digest(config.system_prompt),
        "case_digest": case.digest,
        "seed": certified.rollout_seed(index, rollout),
        **(provenance.fields() if provenance is not None else {}),
    }


async def _converse(
    client: Any,
    config: RunConfig,
    chat: ChatEpisode,
    rollout: int,
    tally: dict[str, int],
    first: FirstRequest | None,
) -> tuple[dict[str, Any], str]:
    """The model and the environment in turn until the episode ends: its final info, and how it
    ended (``finished``, ``turn_limit``, or the service's reason for cutting it short)."""
    while True:
        try:
            message = await ask(client, config, chat, rollout, tally, first)
        except CutShort as cut:
            if cut.message is not None:
                chat.messages.append(cut.message)
            return chat.end_unfinished(cut.ended), cut.ended
        step = chat.step(message)
        if step.done:
            return step.info, "finished" if step.terminated else "turn_limit"


def _infra_error(kind: str, message: str, attempts: int) -> dict[str, Any]:
    """A row's ``error``: the infrastructure failed the rollout, which has no score."""
    return {"kind": "infra", "class": kind, "message": message[:500], "attempts": attempts}


def _outcome(
    desk: Any,
    chat: ChatEpisode,
    info: Mapping[str, Any],
    ended: str,
    error: dict[str, Any] | None,
    log: list[dict[str, Any]],
    tally: Mapping[str, int],
) -> dict[str, Any]:
    """A row's fields known once the episode is over: the conversation, score, log and counts."""
    scored = error is None and "score" in info
    return {
        "messages": chat.messages,
        "ended": ended if scored else "infra",
        "score": info["score"] if scored else None,
        "info_metrics": info_metrics(desk, info) if scored else {},
        "log": log,
        "head": info.get("log_head") or (log[-1]["hash"] if log else None),
        "nonce": info.get("log_nonce") or (log[0]["args"].get("nonce") if log else None),
        "turns": sum(1 for m in chat.messages if m.get("role") == "assistant"),
        "usage": {
            "prompt_tokens": tally["prompt_tokens"],
            "completion_tokens": tally["completion_tokens"],
            "total_tokens": tally["prompt_tokens"] + tally["completion_tokens"],
        },
        "requests": tally["requests"],
        "retries": tally["retries"],
        "error": error,
    }


__all__ = [
    "Player",
    "RowProvenance",
    "client_of",
    "info_metrics",
    "play_here",
    "play_rollout",
    "run_rollouts",
]
