"""Rollouts of a desk played by a model behind a chat-completions API.

:func:`run_rollouts` plays ``rollouts`` episodes of each selected case of a split
(or case file) through :class:`~.chat.ChatEpisode`, asking the model with the
official ``openai`` client (``AsyncOpenAI``) at ``base_url``. At most
``concurrency`` rollouts are in flight (an ``asyncio.Semaphore``).

How a request can fail, and what that does to the rollout (:func:`classify`):

* **Transport faults** (a lost connection, a timeout, 408, 409, 429, a 5xx, a 200
  whose body is not a chat completion) are the service's, not the model's. The
  client's own retries are off: this module retries, and counts, each such request
  with exponential backoff (``backoff * 2**k`` seconds, at most ``max_backoff``; a
  429's ``retry-after-ms`` or ``Retry-After`` when it asks for longer). After
  ``max_retries`` retries the rollout is written with ``"error": {"kind": "infra",
  ...}`` and no score: it says nothing about the model and is never scored 0.
* **A refusal of the rollout's own content** (a 400, 413 or 422 saying the prompt
  or context is too long; a later turn's 400 of any other kind) and an answer cut
  at ``max_tokens`` (``finish_reason: "length"``) with no complete tool call end
  the rollout there, unfinished: the environment scores it as the turn limit would
  (what the desk pays an unfinished episode), and the row says why in ``ended``
  (``"context_overflow"``, ``"length"``, ``"rejected"``). Such a rollout is scored
  and counted in every mean: dropping it would flatter a model that rambles past
  its context.
* **A run that cannot work** (401, 403, 404, a model the server does not know, the
  first turn's request refused, an HTML page or a server-sent-event body where a
  JSON completion was asked for, a server that cannot be reached at all) stops the
  whole run at once with :class:`RunStopped`, one line naming the cause and the
  fix. The run's very first request goes out alone, before any other rollout
  starts, so a run doomed from the start writes no row.
* A model's own mistakes (an unknown tool, arguments that are not JSON, prose
  instead of a call) reach the environment, which refuses and logs them like any
  bad action: those rollouts are scored.

Each rollout is one JSONL row, appended (and flushed) as soon as it finishes, in
any order (see :data:`ROW_FIELDS`). ``timing`` (wall-clock latency) is the only
field that is not a function of the conversation; reports summarise it apart and
never score it.

Resumable, and only under the same settings: every setting that changes an
episode or a request (:func:`run_settings`: desk, mode, desk options, model, the
server's host, sampling, system prompt, header names) is hashed into the rows'
``settings_key`` and written, with versions, times and counts, to
``OUT.meta.json`` beside the results. A run first reads its out file and skips
every (case, rollout) it already holds under the same key; a file written under
other settings is refused (:class:`SettingsMismatch`, naming what differs). A last
line cut short by a killed run is dropped before anything is appended.
``retry_infra=True`` also plays again the rollouts whose only rows are infra errors.

The package, by reason to change: :mod:`.config` (what a run is told and what its rows
hold), :mod:`.asking` (one request: failures classified, retried, or the run stopped),
:mod:`.resume` (the cases and settings of a run, its manifest and ``OUT.meta.json``)
and :mod:`.loop` (the run itself).
"""

from __future__ import annotations

from .asking import (
    CutShort,
    MalformedResponse,
    RunStopped,
    ServiceFailure,
    ask,
    assistant_message,
    classify,
    first_choice,
    request_arguments,
    retry_after,
    retryable,
    stop_message,
    unreachable,
)
from .config import CUT_SHORT, ENDINGS, REQUEST_FIELDS, ROW_FIELDS, RunConfig, RunSummary
from .loop import Player, RowProvenance, client_of, info_metrics, play_here, play_rollout, run_rollouts
from .resume import (
    SettingsMismatch,
    check_resumable,
    differences,
    done_pairs,
    manifest_of,
    plan,
    run_settings,
    select,
    settings_key,
    source_kind,
    system_prompt_digest,
    write_meta,
)

__all__ = [
    "CUT_SHORT",
    "ENDINGS",
    "REQUEST_FIELDS",
    "ROW_FIELDS",
    "CutShort",
    "MalformedResponse",
    "Player",
    "RowProvenance",
    "RunConfig",
    "RunStopped",
    "RunSummary",
    "ServiceFailure",
    "SettingsMismatch",
    "ask",
    "assistant_message",
    "check_resumable",
    "classify",
    "client_of",
    "differences",
    "done_pairs",
    "first_choice",
    "info_metrics",
    "manifest_of",
    "plan",
    "play_here",
    "play_rollout",
    "request_arguments",
    "retry_after",
    "retryable",
    "run_rollouts",
    "run_settings",
    "select",
    "settings_key",
    "source_kind",
    "stop_message",
    "system_prompt_digest",
    "unreachable",
    "write_meta",
]
