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
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import DEFAULT_DESK
from batchgate_gym.kernel.certificate import Signer
from batchgate_gym.kernel.infra import INFRA_SEAL

from . import certified
from .chat import DEFAULT_MODE, MODES, ChatEpisode, ChatSettings
from .results import read_rows, trim_partial_line

LOG = logging.getLogger(__name__)  # unconfigured, its warnings reach stderr as bare lines

ROW_FIELDS = (
    "desk",  # the desk played
    "source",  # the split name or case file the case came from
    "case_index",  # its place there
    "case_id",
    "family",
    "rollout",  # 0 .. rollouts-1; the request's seed is --seed plus this
    "model",
    "mode",  # tools or text
    "settings_key",  # the hash of the run's settings (see OUT.meta.json)
    "system_prompt",  # None, or the sha256 of the system message that replaced the brief
    "messages",  # the whole conversation
    "ended",  # finished, turn_limit, context_overflow, length, rejected, or infra
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
    # Provenance (certified.ROW_CERTIFIED): what the row was played with, comparable without the files
    "version",  # the package's version
    "source_digest",  # certified.source_digest of the source's cases
    "case_digest",  # the case's digest (the log's entry 0 names it too)
    "seed",  # the reset seed (certified.rollout_seed)
    "nonce",  # the log's nonce
    "sampling",  # temperature, top_p, max_tokens, seed and sampling_args of the requests
    "run",  # the digest of the run's manifest (OUT.meta.json)
    "certificate",  # with --sign-key: the signed provenance and outcome (kernel.certificate)
)

# How a scored rollout ended: by the episode itself, or cut short by the model's service.
ENDINGS = ("finished", "turn_limit", "context_overflow", "length", "rejected")
CUT_SHORT = frozenset({"context_overflow", "length", "rejected"})


@dataclass(frozen=True)
class RunConfig:
    """What ``batchgate run-model`` plays, against what, and how hard it tries."""

    model: str
    base_url: str
    api_key: str
    out: Path
    desk: str = DEFAULT_DESK
    split: str | None = None
    cases: str | None = None
    n: int | None = None
    case_ids: tuple[str, ...] = ()  # exactly these cases, in this order
    sample: int | None = None  # a random subset of this many cases, drawn with sample_seed
    sample_seed: int = 0
    rollouts: int = 1
    concurrency: int = 8
    mode: str = DEFAULT_MODE
    timeout: float = 60.0
    max_retries: int = 5
    backoff: float = 0.5
    max_backoff: float = 30.0
    retry_infra: bool = False
    limit: int | None = None  # play at most this many rollouts this run (the rest on a rerun)
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)  # the desk's options (rules=...)
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int = 0  # the request seed of rollout r is seed + r
    sampling_args: Mapping[str, Any] = field(default_factory=dict)  # merged into each request body
    headers: Mapping[str, str] = field(default_factory=dict)  # sent with each request
    system_prompt: str | None = None  # replaces the system message (the brief)
    stream: bool = False  # read each answer as server-sent events
    api_key_env: str = "the API key's variable"  # named in the message of a refused key
    sign_key: Path | None = None  # an Ed25519 private key (PEM) that signs the manifest and every row

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode is 'tools' or 'text', not {self.mode!r}")
        for name in ("rollouts", "concurrency"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} is at least 1")
        for name in ("n", "limit", "sample", "max_tokens"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"{name} is at least 1 when given")
        if self.case_ids and (self.n is not None or self.sample is not None):
            raise ValueError("case_ids picks the cases itself: give it without n or sample")
        if self.n is not None and self.sample is not None:
            raise ValueError("give n (the first N cases) or sample (N drawn at random), not both")
        address = urlsplit(self.base_url)
        if address.scheme not in ("http", "https") or not address.netloc:
            # Checked here: a malformed address would otherwise fail every request, and each
            # rollout would be written down as an infra error.
            raise ValueError(
                f"base_url is an http(s) address such as http://127.0.0.1:8000/v1, not {self.base_url!r}"
            )
        if self.max_retries < 0 or self.timeout <= 0 or self.backoff < 0:
            raise ValueError("max_retries >= 0, timeout > 0 and backoff >= 0")
        reserved = sorted(set(self.sampling_args) & REQUEST_FIELDS)
        if reserved:
            raise ValueError(
                f"sampling_args may not set {', '.join(reserved)}: the runner sets them"
                " (use temperature, top_p, max_tokens, seed or stream instead)"
            )

    @property
    def meta_path(self) -> Path:
        """``OUT.meta.json``: the run's settings, versions, times and counts."""
        return Path(f"{self.out}.meta.json")


# Request fields the runner owns; --sampling-args may add any other.
REQUEST_FIELDS = frozenset(
    {"model", "messages", "tools", "seed", "stream", "temperature", "top_p", "max_tokens", "n"}
)


@dataclass
class RunSummary:
    """What a run did: rollouts played (scored, of which cut short, or infra errors) and skipped."""

    planned: int = 0
    skipped: int = 0
    scored: int = 0
    truncated: int = 0  # scored rollouts cut short by the service (context, length, rejected)
    infra_errors: int = 0
    requests: int = 0
    retries: int = 0
    elapsed_s: float = 0.0
    rows: list[dict[str, Any]] = field(default_factory=list)

    def line(self, out: Path) -> str:
        """The one-line summary ``batchgate run-model`` ends with; when nothing was scored, with
        the first infra error's class and message, so that a slow or lying server is named."""
        errors = [row["error"] for row in self.rows if isinstance(row.get("error"), Mapping)]
        first = f"; the first: {errors[0].get('class')}: {errors[0].get('message')}" if errors else ""
        return (
            f"{out}: {self.scored} scored ({self.truncated} cut short), {self.infra_errors} infra errors,"
            f" {self.skipped} already done of {self.planned}; {self.requests} requests"
            f" ({self.retries} retries); {self.elapsed_s:.1f} s" + (first if not self.scored else "")
        )


class InfraError(Exception):
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


class SettingsMismatch(ValueError):
    """The out file holds a run under other settings; resuming it would mix two experiments."""


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


# -- what is played, and under which settings -----------------------------------------


def plan(config: RunConfig) -> tuple[list[Any], list[int], str]:
    """The cases of the source, the indices of those played (in order), and the source's name."""
    desk = registry.get(config.desk)
    cases = desk.fixed_cases(config.cases, config.split)
    source = config.cases or config.split or desk.cases.default_split or ""
    return cases, select(cases, config), source


def source_kind(config: RunConfig) -> str:
    """``split`` for a split the package ships, ``file`` for a case file."""
    splits = registry.get(config.desk).cases.splits
    return "file" if config.cases is not None and config.cases not in splits else "split"


def manifest_of(
    config: RunConfig, cases: Sequence[Any], chosen: Sequence[int], source: str, settings: Mapping[str, Any]
) -> dict[str, Any]:
    """The run's manifest (:func:`.certified.build_manifest`)."""
    import batchgate_gym

    return certified.build_manifest(
        desk=config.desk,
        version=batchgate_gym.__version__,
        source=source,
        source_kind=source_kind(config),
        digest=certified.source_digest(cases),
        total=len(cases),
        selection=certified.selection_of(config.n, config.case_ids, config.sample, config.sample_seed),
        case_ids=[cases[index].case_id for index in chosen],
        rollouts=config.rollouts,
        settings=settings,
        settings_key=settings_key(settings),
    )


def select(cases: Sequence[Any], config: RunConfig) -> list[int]:
    """Indices of the cases played: ``case_ids``, a seeded ``sample``, the first ``n``, or all."""
    if config.case_ids:
        where = {case.case_id: index for index, case in enumerate(cases)}
        unknown = [case_id for case_id in config.case_ids if case_id not in where]
        if unknown:
            shown = ", ".join(case.case_id for case in cases[:3])
            raise ValueError(
                f"no case {', '.join(map(repr, unknown))} in this source; its ids look like {shown}, ..."
            )
        return list(dict.fromkeys(where[case_id] for case_id in config.case_ids))
    if config.sample is not None:
        if config.sample > len(cases):
            raise ValueError(f"sample {config.sample} is more than the {len(cases)} cases there are")
        return sorted(random.Random(config.sample_seed).sample(range(len(cases)), config.sample))
    return list(range(len(cases) if config.n is None else min(config.n, len(cases))))


def system_prompt_digest(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode()).hexdigest()


def run_settings(config: RunConfig) -> dict[str, Any]:
    """Every setting that changes an episode or a request: what a resumed run must share."""
    address = urlsplit(config.base_url)
    options = {o.name: o.parse(o.default) for o in registry.get(config.desk).options if not o.draws}
    options.update(config.env_kwargs)
    return {
        "desk": config.desk,
        "mode": config.mode,
        "desk_options": dict(sorted(options.items())),
        "model": config.model,
        "host": address.netloc,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "max_tokens": config.max_tokens,
        "seed": config.seed,
        "sampling_args": dict(sorted(config.sampling_args.items())),
        "system_prompt_sha256": system_prompt_digest(config.system_prompt),
        "header_names": sorted(name.lower() for name in config.headers),
    }


def settings_key(settings: Mapping[str, Any]) -> str:
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def differences(before: Mapping[str, Any], now: Mapping[str, Any], prefix: str = "") -> list[str]:
    """``name: before -> now`` for each setting that differs (``desk_options.recovery: ...`` inside)."""
    found = []
    for name in sorted(set(before) | set(now)):
        old, new = before.get(name), now.get(name)
        if old == new:
            continue
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            found += differences(old, new, f"{prefix}{name}.")
        else:
            found.append(f"{prefix}{name}: {json.dumps(old, default=str)} -> {json.dumps(new, default=str)}")
    return found


def check_resumable(
    config: RunConfig,
    settings: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    manifest: Mapping[str, Any] | None = None,
    signer: Signer | None = None,
) -> None:
    """Refuse to add to an out file written under other settings, for other cases or
    rollouts (another manifest), or signed otherwise (:class:`SettingsMismatch`).

    An out file without rows (a run stopped before its first row) binds nothing: the
    settings may be changed to fix what stopped it.
    """
    if not rows:
        return
    key = settings_key(settings)
    meta: Mapping[str, Any] = {}
    if config.meta_path.exists():
        try:
            meta = json.loads(config.meta_path.read_text(encoding="utf-8"))
            recorded: Mapping[str, Any] | None = meta.get("settings")
        except (ValueError, AttributeError) as exc:
            raise SettingsMismatch(
                f"{config.meta_path} is not a run's settings ({exc}); move it away"
            ) from exc
    else:
        recorded = None
    if recorded is not None and settings_key(recorded) != key:
        raise SettingsMismatch(
            f"{config.out} holds a run under other settings ({'; '.join(differences(recorded, settings))});"
            " use another --out, or the same settings to resume it"
        )
    foreign = sorted({str(row.get("settings_key")) for row in rows if row.get("settings_key") != key})
    if foreign:
        raise SettingsMismatch(
            f"{config.out} holds rows written under other settings (key {', '.join(foreign)}, this run's is"
            f" {key}); use another --out"
        )
    if manifest is not None:
        _check_same_run(config, meta, manifest, signer)


def _check_same_run(
    config: RunConfig, meta: Mapping[str, Any], manifest: Mapping[str, Any], signer: Signer | None
) -> None:
    """A resumed run plays the cases and rollouts its out file was begun with, signed by the same key."""
    before = meta.get("manifest")
    if not isinstance(before, Mapping):
        raise SettingsMismatch(
            f"{config.out} was written without a run manifest (by an older version, or by hand);"
            " use another --out"
        )
    if certified.manifest_digest(before) != certified.manifest_digest(manifest):
        changed = [
            name for name in sorted(set(before) | set(manifest)) if before.get(name) != manifest.get(name)
        ]
        raise SettingsMismatch(
            f"{config.out} holds a run of other cases or rollouts ({', '.join(changed)} differ); use the"
            " same -n/--case/--sample/-r to resume it, or another --out"
        )
    signed_by = (meta.get("manifest_certificate") or {}).get("key")
    if signed_by != (signer.key if signer is not None else None):
        was = f"key {signed_by[:16]}..." if signed_by else "no key"
        now = f"key {signer.key[:16]}..." if signer is not None else "no key"
        raise SettingsMismatch(
            f"{config.out} was signed with {was}, this run with {now}: one run's rows are signed alike;"
            " use the same --sign-key, or another --out"
        )


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


def write_meta(
    config: RunConfig,
    settings: Mapping[str, Any],
    runs: list[dict[str, Any]],
    manifest: Mapping[str, Any] | None = None,
    signer: Signer | None = None,
) -> None:
    """``OUT.meta.json``: settings and their key, the run's manifest (signed with ``signer``),
    versions, and each run's times and counts."""
    import platform

    import openai

    import batchgate_gym

    meta = {
        "settings": dict(settings),
        "settings_key": settings_key(settings),
        "versions": {
            "batchgate_gym": batchgate_gym.__version__,
            "desk_env": registry.get(config.desk).env_id,
            "openai": openai.__version__,
            "python": platform.python_version(),
        },
        "runs": runs,
    }
    if manifest is not None:
        meta["manifest"] = dict(manifest)
        meta["manifest_digest"] = certified.manifest_digest(manifest)
        if signer is not None:
            meta["manifest_certificate"] = signer.sign(manifest)
    config.meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _earlier_runs(config: RunConfig) -> list[dict[str, Any]]:
    if not config.meta_path.exists():
        return []
    runs = json.loads(config.meta_path.read_text(encoding="utf-8")).get("runs")
    return list(runs) if isinstance(runs, list) else []


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


# -- the run ---------------------------------------------------------------------------


class _FirstRequest:
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
    started_wall, started = _now(), time.perf_counter()
    cases, chosen, source = plan(config)
    settings = run_settings(config)
    signer = Signer.load(config.sign_key) if config.sign_key is not None else None
    manifest = manifest_of(config, cases, chosen, source, settings)
    provenance = RowProvenance.of(config, manifest, signer)
    config.out.parent.mkdir(parents=True, exist_ok=True)
    trim_partial_line(config.out)
    existing = [row for _line, row in read_rows(config.out)] if config.out.exists() else []
    check_resumable(config, settings, existing, manifest, signer)
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
    if on_start is not None:
        on_start(len(pairs))
    runs = _earlier_runs(config) if existing else []
    this_run: dict[str, Any] = {"started": started_wall, "ended": None, "counts": {}}
    write_meta(config, settings, [*runs, this_run], manifest, signer)
    key = settings_key(settings)
    try:
        with config.out.open("a", encoding="utf-8") as out:

            def write(row: dict[str, Any]) -> None:
                row["settings_key"] = key
                provenance.sign(row)
                out.write(json.dumps(row, sort_keys=True, separators=(",", ":")) + "\n")
                out.flush()
                _count(summary, row)
                if on_row is not None:
                    on_row(row)

            if player is not None:
                await player(config, pairs, provenance, write)
            else:
                await play_here(config, pairs, provenance, write, planned=(cases, source))
    finally:
        summary.elapsed_s = time.perf_counter() - started
        this_run.update(ended=_now(), counts=_counts(summary))
        write_meta(config, settings, [*runs, this_run], manifest, signer)
    return summary


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
    first: _FirstRequest | None = None,
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
    first = _FirstRequest() if first is None else first

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
    first: _FirstRequest | None = None,
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
        "system_prompt": system_prompt_digest(config.system_prompt),
        "case_digest": case.digest,
        "seed": certified.rollout_seed(index, rollout),
        **(provenance.fields() if provenance is not None else {}),
    }
    error: dict[str, Any] | None = None
    info: dict[str, Any] = {}
    ended = "infra"
    try:
        chat.reset(seed=row["seed"], options={"case_index": index})
        while True:
            try:
                message = await ask(client, config, chat, rollout, tally, first)
            except CutShort as cut:
                if cut.message is not None:
                    chat.messages.append(cut.message)
                info, ended = chat.end_unfinished(cut.ended), cut.ended
                break
            step = chat.step(message)
            if step.done:
                info, ended = step.info, "finished" if step.terminated else "turn_limit"
                break
    except InfraError as exc:
        error = {
            "kind": "infra",
            "class": type(exc.cause).__name__,
            "message": str(exc.cause)[:500],
            "attempts": exc.attempts,
        }
        # The evidence: the log as far as it went, sealed as the machine's failure, not the model's.
        info = env.unwrapped.end_unfinished(f"{INFRA_SEAL}the model's service failed: {error['class']}")
    finally:
        log = env.unwrapped.export_log()
        env.close()
    if error is None and "infra_error" in info:  # the machine stopped the episode itself
        error = {
            "kind": "infra",
            "class": "InfraFailure",
            "message": str(info["infra_error"])[:500],
            "attempts": 1,
        }
    scored = error is None and "score" in info
    row.update(
        messages=chat.messages,
        ended=ended if scored else "infra",
        score=info["score"] if scored else None,
        info_metrics=info_metrics(desk, info) if scored else {},
        log=log,
        head=info.get("log_head") or (log[-1]["hash"] if log else None),
        nonce=info.get("log_nonce") or (log[0]["args"].get("nonce") if log else None),
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
    first: _FirstRequest | None = None,
) -> dict[str, Any]:
    """The model's next assistant message, retried on transport faults.

    Raises :class:`InfraError` when the faults outlast the retries, :class:`CutShort`
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
                verdict = classify(exc, config, first_turn)
                if alone and attempt == 0 and config.max_retries and unreachable(exc):  # said now, once
                    LOG.warning(_waiting(exc, config))
                if verdict == "stop" or (alone and attempt >= config.max_retries and unreachable(exc)):
                    stopped = RunStopped(stop_message(exc, config))
                    if alone and first is not None:
                        first.stopped = stopped
                    raise stopped from exc
                if verdict in ("context_overflow", "rejected"):
                    raise CutShort(verdict, _error_text(exc)) from exc
                if attempt >= config.max_retries:
                    raise InfraError(exc, attempt + 1) from exc
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
    "CUT_SHORT",
    "ENDINGS",
    "ROW_FIELDS",
    "CutShort",
    "InfraError",
    "MalformedResponse",
    "RunConfig",
    "RunStopped",
    "RunSummary",
    "SettingsMismatch",
    "assistant_message",
    "classify",
    "done_pairs",
    "first_choice",
    "plan",
    "retryable",
    "run_rollouts",
    "run_settings",
    "select",
    "settings_key",
]
