"""What a run is told (:class:`RunConfig`), what each of its rows holds (:data:`ROW_FIELDS`)
and what it did (:class:`RunSummary`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from batchgate_gym.desks.registry import DEFAULT_DESK

from ..chat import DEFAULT_MODE, MODES

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


__all__ = ["CUT_SHORT", "ENDINGS", "REQUEST_FIELDS", "ROW_FIELDS", "RunConfig", "RunSummary"]
