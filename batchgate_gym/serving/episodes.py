"""One desk episode behind a network session: the part every protocol shares.

A server holds one :class:`DeskCatalog` (the desk, the cases it was started with,
its environment options, its tool schemas); each session holds one
:class:`SessionEpisode`, which is the desk's own text environment (the
``TextDeskEnv`` that ``gymnasium.make`` builds) and nothing else: a reset picks a
case exactly as ``env.reset(seed=..., options=...)`` does, a step is ``env.step``
with the text action, and a tool call is a step with that single JSON call (as the
TRL adapter sends it). So the same actions give the same observations, reward,
score terms and log in any protocol, and the exported log replays under its head.

Requests that cannot be served (an unknown reset option, a case id the cases
lack, a step before any reset, a session the idle timeout has closed) raise
:class:`SessionRequestError`, a ``ValueError`` whose text says what to do; the
protocol layers turn it into their own error message. Nothing here imports a
network library.
"""

from __future__ import annotations

import inspect
import json
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.kernel.case_sources import FixedCases
from batchgate_gym.kernel.certificate import Signer, source_digest
from batchgate_gym.kernel.sqlguard import encodable

from .certificates import served_facts

SESSION_ID_BYTES = 24  # 192 random bits: an episode id no client can guess


class SessionRequestError(ValueError):
    """A request a session cannot serve; the message says why and what to send instead."""


@dataclass(frozen=True)
class ResetRequest:
    """How a session's episode is chosen: a seed, and optionally a fixed case by id or index
    (from the server's cases, or from ``split``)."""

    seed: int | None = None
    case_id: str | None = None
    case_index: int | None = None
    split: str | None = None

    @classmethod
    def of(cls, fields: Mapping[str, Any]) -> ResetRequest:
        """A request from untrusted fields (a WebSocket message, a URL query): unknown names
        and values of the wrong type are refused with the reason."""
        unknown = sorted(set(fields) - {"seed", "case_id", "case_index", "split"})
        if unknown:
            raise SessionRequestError(
                f"unknown reset option {unknown[0]!r}; a reset takes seed, case_id, case_index and split"
            )
        seed, index = (_whole(fields.get(name), name) for name in ("seed", "case_index"))
        case_id, split = (_text(fields.get(name), name) for name in ("case_id", "split"))
        if case_id is not None and index is not None:
            raise SessionRequestError("give case_id or case_index, not both")
        return cls(seed, case_id, index, split)

    def options(self) -> dict[str, Any]:
        """The ``options`` of ``env.reset`` this request stands for."""
        if self.case_id is not None:
            return {"case_id": self.case_id}
        if self.case_index is not None:
            return {"case_index": self.case_index}
        return {}


def _whole(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, str) and value.isdigit():  # a URL query carries text
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise SessionRequestError(f"{name} must be a whole number from 0 to 2**63-1, not {value!r}")
    return value


def _text(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > 256 or not encodable(value):
        raise SessionRequestError(f"{name} must be a non-empty string of at most 256 characters (UTF-8 text)")
    return value


@dataclass(frozen=True)
class StepResult:
    """One step of the environment, as Gymnasium returns it."""

    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


@dataclass
class SessionCount:
    """Live sessions of one server (the ``--max-sessions`` cap is the protocol layer's)."""

    live: int = 0
    opened: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def opening(self) -> None:
        with self._lock:
            self.live += 1
            self.opened += 1

    def closing(self) -> None:
        with self._lock:
            self.live -= 1


@dataclass(frozen=True)
class DeskCatalog:
    """What a server serves: a desk, its fixed cases (``cases``: a split name or a case file;
    None for procedural cases drawn from each reset's seed) and its environment options."""

    desk_name: str
    cases: str | None = None
    env_options: Mapping[str, Any] = field(default_factory=dict)
    count: SessionCount = field(default_factory=SessionCount, compare=False)
    signer: Signer | None = field(default=None, compare=False)  # signs each ended episode's result
    protocol: str = ""  # named in the certificates: openenv, mcp

    @cached_property
    def desk(self) -> registry.DeskSpec:
        return registry.get(self.desk_name)

    def fixed_cases(self, split: str | None) -> list[Any] | None:
        """The cases a reset plays from: ``split``'s, the server's, or None (procedural). A
        reset's ``split`` comes from the network: it names one of the desk's splits, never a
        file of the server's disk."""
        if split is not None and split not in self.desk.cases.splits:
            try:
                self.desk.fixed_cases(split=split)  # the desk's own refusal, naming its splits
            except registry.CaseSourceError as exc:
                raise SessionRequestError(str(exc)) from None
        source = split or self.cases
        if source is None:
            return None
        return _cases_of(self.desk_name, source)

    @cached_property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The desk's tools in OpenAI function format, for the options the server plays with."""
        import importlib

        make = importlib.import_module(f"batchgate_gym.desks.{self.desk_name}.tools").tool_schemas
        accepted = inspect.signature(make).parameters
        return list(make(**{k: v for k, v in self.env_options.items() if k in accepted}))

    def open(self) -> SessionEpisode:
        return SessionEpisode(self)

    def check(self, request: ResetRequest) -> list[Any] | None:
        """The fixed cases ``request`` plays from (None: procedural), once it is known that they
        hold the case it names: a split, case id or case index they lack is refused with the
        reason (:class:`SessionRequestError`), before a session opens or an environment is built."""
        cases = self.fixed_cases(request.split)
        if request.case_id is None and request.case_index is None:
            return cases
        if cases is None:
            raise SessionRequestError(
                "this server draws procedural cases from the seed; a case by id or index needs fixed "
                "cases (reset with split=..., or start the server with --split or --cases)"
            )
        try:
            FixedCases(cases).named(request.options())
        except ValueError as exc:  # the kernel's own words: no such case_id, case_index out of range
            raise SessionRequestError(str(exc)) from None
        return cases

    def source_digest(self, source: str | None) -> str | None:
        """The digest of the fixed cases ``source`` names (None: procedural cases)."""
        cases = self.fixed_cases(source)
        if cases is None:
            return None
        key = (self.desk_name, source or self.cases or "")
        with _CASES_LOCK:
            if key not in _DIGESTS:
                _DIGESTS[key] = source_digest(cases)
            return _DIGESTS[key]


_CASES_LOCK = threading.Lock()
_CASES: dict[tuple[str, str], list[Any]] = {}
_DIGESTS: dict[tuple[str, str], str] = {}


def _cases_of(desk_name: str, source: str) -> list[Any]:
    """A desk's fixed cases, read once per process (sessions share them; nobody edits a case)."""
    with _CASES_LOCK:
        key = (desk_name, source)
        if key not in _CASES:
            try:
                _CASES[key] = registry.get(desk_name).fixed_cases(source)
            except registry.CaseSourceError as exc:
                raise SessionRequestError(str(exc)) from None
        return _CASES[key]


class SessionEpisode:
    """One session's episodes: the desk's text environment, reset and stepped on request."""

    def __init__(self, catalog: DeskCatalog) -> None:
        self.catalog = catalog
        self.episode_id = secrets.token_urlsafe(SESSION_ID_BYTES)
        self.env: Any = None
        self._split: str | None = None
        self.opening_text = ""
        self.turn = 0
        self.case_id: str | None = None
        self.last: StepResult | None = None
        self.log: list[dict[str, Any]] | None = None
        self.seed: int | None = None
        self._certificate: dict[str, str] | None = None
        self.closed_because: str | None = None
        catalog.count.opening()

    # --- the episode -------------------------------------------------------------------------------------

    def reset(self, request: ResetRequest) -> str:
        """Start an episode; its opening observation (the task text)."""
        self._check_open()
        cases = self.catalog.check(request)
        if self.env is None or request.split != self._split:
            self._close_env()
            self.env = self.catalog.desk.make_env(cases, **self.catalog.env_options)
            self._split = request.split
        try:
            observation, _info = self.env.reset(seed=request.seed, options=request.options())
        except ValueError as exc:  # a case id or index the cases lack
            raise SessionRequestError(str(exc)) from None
        self.opening_text = observation
        self.turn, self.last, self.log = 0, None, None
        self.case_id = self.env.unwrapped.case.case_id
        self.seed = request.seed
        self._certificate = None
        return str(observation)

    def step(self, action: str) -> StepResult:
        """``env.step(action)``: the text action as the Gymnasium environment takes it."""
        self._check_open()
        if self.env is None or self.case_id is None:
            raise SessionRequestError("no episode yet: reset first")
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.turn = int(info["turn"])
        self.last = StepResult(str(observation), float(reward), bool(terminated), bool(truncated), info)
        if self.last.done:
            self.log = self.env.unwrapped.export_log()
        return self.last

    def end_unfinished(self, reason: str) -> StepResult:
        """End the running episode now, unfinished, and score it as the turn limit would
        (:meth:`~batchgate_gym.envs.text_env.TextDeskEnv.end_unfinished`, the log sealed with
        ``reason``): what a trainer asks when a rollout is over before its episode is."""
        self._check_open()
        if self.env is None or self.case_id is None:
            raise SessionRequestError("no episode yet: reset first")
        if self.done:
            raise SessionRequestError("the episode has already ended")
        # The info of a last step: its turn (no turn is played), then what the ending says.
        info = {"turn": self.turn, **self.env.unwrapped.end_unfinished(_text(reason, "end") or "")}
        self.last = StepResult("", float(info["score"]["reward"]), False, True, info)
        self.log = self.env.unwrapped.export_log()
        return self.last

    def call(self, name: str, arguments: Any) -> StepResult:
        """One step with a single JSON call, as the TRL adapter sends a tool call."""
        return self.step(json.dumps([{"name": name, "arguments": arguments}]))

    @property
    def done(self) -> bool:
        return self.last is not None and self.last.done

    def result(self) -> dict[str, Any]:
        """The ended episode: case, reward, score terms, log head and the exported log."""
        if self.last is None or not self.last.done or self.log is None:
            raise SessionRequestError("the episode has not ended: its score and log come at its end")
        info = self.last.info
        result = {
            "episode_id": self.episode_id,
            "desk": self.catalog.desk_name,
            "case_id": info["case_id"],
            "reward": self.last.reward,
            "score": info["score"],
            "terminated": self.last.terminated,
            "truncated": self.last.truncated,
            "turn": self.turn,
            "log_intact": info["log_intact"],
            "log_entries": info["log_entries"],
            "log_head": info["log_head"],
            "log": self.log,
            **self._provenance(),
        }
        if self.catalog.signer is not None:
            if self._certificate is None:  # signed once: the result of an ended episode never changes
                self._certificate = self.catalog.signer.sign(served_facts(result))
            result["certificate"] = self._certificate
        return result

    def certificate(self) -> dict[str, str] | None:
        """The ended episode's certificate (None on a server without a key)."""
        if self.catalog.signer is None:
            return None
        certificate: dict[str, str] = self.result()["certificate"]
        return certificate

    def _provenance(self) -> dict[str, Any]:
        """Where the ended episode came from (see :mod:`.certificates`)."""
        import batchgate_gym

        source = self._split or self.catalog.cases
        log = self.log or [{}]
        return {
            "version": batchgate_gym.__version__,
            "protocol": self.catalog.protocol,
            "source": source,
            "source_digest": self.catalog.source_digest(source),
            "case_digest": self.env.unwrapped.case.digest,
            "seed": self.seed,
            "nonce": log[0].get("args", {}).get("nonce"),
            "settings": {key: self.catalog.env_options[key] for key in sorted(self.catalog.env_options)},
        }

    # --- the session ---------------------------------------------------------------------------------------

    def close(self, because: str = "closed") -> None:
        """Release the world (idempotent); later requests are refused with ``because``."""
        if self.closed_because is None:
            self.closed_because = because
            self._close_env()
            self.catalog.count.closing()

    def _close_env(self) -> None:
        if self.env is not None:
            self.env.close()
            self.env = None

    def _check_open(self) -> None:
        if self.closed_because is not None:
            raise SessionRequestError(f"this session is over ({self.closed_because}); open a new one")


__all__ = [
    "DeskCatalog",
    "ResetRequest",
    "SessionCount",
    "SessionEpisode",
    "SessionRequestError",
    "StepResult",
]
