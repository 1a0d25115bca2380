"""A desk as an OpenEnv environment server, on the ``openenv`` package's own ``create_app``.

Each WebSocket connection to ``/ws`` is one OpenEnv session with its own
:class:`DeskEnvironment` (one world, one log, one grader), created by the
server's session machinery and destroyed when the connection closes, when it has
been idle longer than ``idle_timeout`` or when the server stops. At the cap
(``max_sessions``) a new connection is refused with OpenEnv's
``CAPACITY_REACHED`` error. Session ids are OpenEnv's random UUIDs and are never
sent to a WebSocket client: a session belongs to its connection.

The wire format (OpenEnv's): ``reset`` takes ``seed``, ``case_id``,
``case_index``, ``split`` and ``episode_id`` and returns the task text with the
desk's tool schemas; ``step`` takes a :class:`DeskAction`, either ``action`` (a
text action exactly as the Gymnasium environment takes it: the desk's call
syntax or a JSON list of calls) or ``tool`` with ``arguments`` (one call); its
:class:`DeskObservation` carries ``reward`` (0 until the episode ends, then the
desk's score) and ``done`` as OpenEnv defines them, and the step's ``info``.
``state`` is a :class:`DeskState`: the episode id and turn and, once the
episode has ended, the score terms, the log head and the exported log, and the
whole ``result`` with its provenance. A server given a signing key
(``serve-env --sign-key``) signs each ended episode: the last step's ``info`` and
the state's ``result`` carry its ``certificate`` (:mod:`.certificates`).

The server runs in OpenEnv's "production" mode: the stateless ``/reset`` and
``/step`` HTTP routes, which would build and drop a world per request, are not
offered; ``/ws``, ``/health``, ``/schema`` and ``/metadata`` are, and
``/sessions`` counts the live sessions. :class:`DeskEnvClient` is an OpenEnv
``EnvClient`` for these servers.
"""

from __future__ import annotations

import functools
from typing import Any

from openenv.core.client_types import StepResult as ClientStepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import (
    Action,
    ConcurrencyConfig,
    EnvironmentMetadata,
    Observation,
    ServerMode,
    State,
)
from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from batchgate_gym.desks import registry

from .episodes import DeskCatalog, ResetRequest, SessionEpisode, SessionRequestError

CLOSED = "closed by the server: idle past its timeout, or the server stopping"


class DeskAction(Action):
    """A step: a text action (``action``), one tool call (``tool`` and ``arguments``), or
    ``end``: end the episode now, unfinished, sealed with that reason and scored as the
    turn limit scores it (a trainer's rollout over before its episode is)."""

    action: str | None = Field(
        default=None,
        description="a text action as the Gymnasium environment takes it: the desk's call syntax or a"
        " JSON list of calls",
    )
    tool: str | None = Field(default=None, description="one tool call's name (instead of action)")
    arguments: dict[str, Any] = Field(default_factory=dict, description="the tool call's arguments")
    end: str | None = Field(
        default=None,
        description="end the episode unfinished, with this reason (instead of action or tool)",
    )

    @model_validator(mode="after")
    def _one_form(self) -> DeskAction:
        # PydanticCustomError, not ValueError: OpenEnv sends a validation error's details to
        # the client as JSON, and a ValueError inside them cannot be serialized.
        if [self.action, self.tool, self.end].count(None) != 2:
            raise PydanticCustomError(
                "action_form",
                "give one of action (a text action), tool (with arguments) or end (a reason)",
            )
        if self.tool is None and self.arguments:
            raise PydanticCustomError("action_form", "arguments go with tool, not with a text action or end")
        return self

    def text(self) -> str:
        """The text action the environment steps with."""
        if self.action is not None:
            return self.action
        import json

        return json.dumps([{"name": self.tool, "arguments": self.arguments}])


class DeskObservation(Observation):
    """What a reset or a step returns; ``reward`` and ``done`` are OpenEnv's own fields."""

    text: str = Field(description="the observation text (the task text after a reset)")
    turn: int = Field(default=0, description="turns played")
    terminated: bool = False
    truncated: bool = False
    tools: list[dict[str, Any]] = Field(
        default_factory=list, description="the desk's tools as JSON schemas (after a reset)"
    )
    info: dict[str, Any] = Field(default_factory=dict, description="the step's info, the score at the end")


class DeskState(State):
    """The session's episode: its id and turn, and at the end its score and exported log."""

    desk: str = ""
    case_id: str | None = None
    done: bool = False
    reward: float | None = None
    score: dict[str, Any] | None = None
    log_head: str | None = None
    log: list[dict[str, Any]] | None = None
    result: dict[str, Any] | None = Field(
        default=None,
        description="once the episode has ended: its whole result, provenance and (on a server with"
        " --sign-key) certificate included",
    )


class DeskEnvironment(Environment[DeskAction, DeskObservation, DeskState]):
    """One OpenEnv session: a :class:`SessionEpisode` of the server's desk."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    # Every session's calls run on one worker thread the server shares, not on a thread of
    # the session's own (OpenEnv's default): a step holds the interpreter lock throughout
    # anyway, so a thread per session buys no concurrency and costs each live session its
    # stack, a malloc arena's share and the desk's per-thread caches, plus a hand-off
    # between threads on every call. One thread also keeps every world on the thread that
    # built it.
    REQUIRES_SINGLE_THREAD_EXECUTOR = True

    def __init__(self, catalog: DeskCatalog) -> None:
        super().__init__()
        self.catalog = catalog
        self._session: SessionEpisode | None = None

    @property
    def session(self) -> SessionEpisode:
        """The session's episode, opened on first use: OpenEnv also builds environments it
        only asks for metadata, which open no session and count as none."""
        if self._session is None:
            self._session = self.catalog.open()
        return self._session

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **options: Any
    ) -> DeskObservation:
        request = ResetRequest.of({"seed": seed, **options} if seed is not None else options)
        text = self.session.reset(request)
        if episode_id is not None:
            self.session.episode_id = str(episode_id)
        return DeskObservation(text=text, tools=self.catalog.tool_schemas, reward=None, done=False)

    def step(self, action: DeskAction, timeout_s: float | None = None, **kwargs: Any) -> DeskObservation:
        if timeout_s is not None or kwargs:
            raise SessionRequestError("a step takes the action alone")
        session = self.session
        result = session.step(action.text()) if action.end is None else session.end_unfinished(action.end)
        info = result.info
        if result.done and self.catalog.signer is not None:
            info = {**info, "certificate": session.certificate()}
        return DeskObservation(
            text=result.observation,
            turn=result.info["turn"],
            terminated=result.terminated,
            truncated=result.truncated,
            info=info,
            reward=result.reward,
            done=result.done,
        )

    @property
    def state(self) -> DeskState:
        session = self.session
        ended = session.result() if session.done else None
        return DeskState(
            episode_id=session.episode_id,
            step_count=session.turn,
            desk=self.catalog.desk_name,
            case_id=session.case_id,
            done=ended is not None,
            reward=None if ended is None else ended["reward"],
            score=None if ended is None else ended["score"],
            log_head=None if ended is None else ended["log_head"],
            log=None if ended is None else ended["log"],
            result=ended,
        )

    def get_metadata(self) -> EnvironmentMetadata:
        desk = self.catalog.desk
        return EnvironmentMetadata(
            name=f"batchgate-{desk.name}", description=registry.descriptions()[desk.name], version="0.1.0"
        )

    def close(self) -> None:
        if self._session is not None:
            self._session.close(CLOSED)


def build_app(catalog: DeskCatalog, *, max_sessions: int, idle_timeout: float | None) -> Any:
    """The FastAPI application serving ``catalog``'s desk (see the module text)."""
    app = create_app(
        functools.partial(DeskEnvironment, catalog),
        DeskAction,
        DeskObservation,
        env_name=f"batchgate-{catalog.desk_name}",
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=idle_timeout),
        state_cls=DeskState,
        mode=ServerMode.PRODUCTION,
    )

    @app.get("/sessions", tags=["Health"])
    def sessions() -> dict[str, Any]:
        """Live sessions, sessions opened since the start, and the cap."""
        count = catalog.count
        return {"live": count.live, "opened": count.opened, "max_sessions": max_sessions}

    return app


class DeskEnvClient(EnvClient[DeskAction, DeskObservation, DeskState]):
    """OpenEnv's WebSocket client, typed for a desk server: ``reset(seed=..., case_id=...)``,
    ``step(DeskAction(...))``, ``state()``."""

    def _step_payload(self, action: DeskAction) -> dict[str, Any]:
        return dict(action.model_dump(exclude_none=True))

    def _parse_result(self, payload: dict[str, Any]) -> ClientStepResult[DeskObservation]:
        fields = dict(payload.get("observation", {}))
        observation = DeskObservation(**fields, reward=payload.get("reward"), done=payload.get("done", False))
        return ClientStepResult(observation=observation, reward=payload.get("reward"), done=observation.done)

    def _parse_state(self, payload: dict[str, Any]) -> DeskState:
        return DeskState(**payload)


__all__ = [
    "DeskAction",
    "DeskEnvClient",
    "DeskEnvironment",
    "DeskObservation",
    "DeskState",
    "SessionRequestError",
    "build_app",
]
