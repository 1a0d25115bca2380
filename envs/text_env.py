"""One Gymnasium environment for every text desk: text actions in, text observations out.

A desk (the batch gate, and any desk written later) supplies its domain through a
small :class:`DeskAdapter`: how to build its world, where cases come from, the
task text an episode opens with, how a finished episode is scored, how the case
is described in the last ``info`` and how the end of an episode is worded.
:class:`TextDeskEnv` owns everything the desks share: the ASCII ``Text`` spaces,
the turn loop (the kernel's :class:`~batchgate_gym.kernel.episode.Episode`),
picking a case with ``self.np_random`` on reset, cutting every observation to
``max_observation_chars``, the ``"ansi"`` transcript, the terminal ``info``, the
exported log and closing the world.
"""

from __future__ import annotations

import copy
import functools
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding

from batchgate_gym.kernel.codec import MAX_ACTION_CHARS, OBSERVATION_CHARSET, ToolCall, cut
from batchgate_gym.kernel.episode import EndingText, Episode, EpisodeLimits, StepOutcome, World
from batchgate_gym.kernel.infra import InfraFailure
from batchgate_gym.kernel.ledger import EpisodeNonces, Ledger
from batchgate_gym.kernel.text_policy import ToolCallDict
from batchgate_gym.kernel.text_policy import action as action_text

from .spaces import AsciiText

CaseT = TypeVar("CaseT")
CaseT_co = TypeVar("CaseT_co", covariant=True)


class DeskWorld(World, Protocol):
    """A world the environment can set up again for each case, with a full log to export."""

    @property
    def ledger(self) -> Ledger: ...

    def reset(self, case: Any, nonce: str | None = None) -> None: ...


WorldT = TypeVar("WorldT", bound=DeskWorld)


class CasePicker(Protocol[CaseT_co]):
    """Where cases come from: one case per reset, drawn with the environment's generator
    (or chosen by the reset options)."""

    def pick(self, rng: np.random.Generator, options: Mapping[str, Any]) -> CaseT_co: ...


class LiveScore(Protocol):
    """A finished episode's score; ``as_dict()`` holds at least ``"reward"``."""

    def as_dict(self) -> dict[str, Any]: ...


PLAIN_ENDING = EndingText()  # the kernel's default wording


@dataclass(frozen=True)
class JsonCalls:
    """A step taken with :meth:`TextDeskEnv.step_calls`, as the episode keeps it: the
    calls of the JSON action :meth:`text` writes."""

    calls: list[ToolCallDict]

    def text(self) -> str:
        return action_text(*self.calls)


@dataclass(frozen=True)
class _Stopped:
    """An action during which the machine stopped a call (a safety net fired: an
    infrastructure error), kept with where and why, so that the action played again on
    a new world (an unpickled environment) stops at the same call, for the same reason,
    and the log is the one the episode wrote, not the one a calm machine would have."""

    action: Any  # as sent: a text, or :class:`JsonCalls`
    at: int  # the stopped call's place among the action's calls
    reason: str


class _StopsAt:
    """A world whose call number ``at`` (from 0, counted from now) the machine stops with
    ``reason``, as it did when the episode was played; everything else is the world's."""

    def __init__(self, world: Any, at: int, reason: str) -> None:
        self._world = world
        self._left = at
        self._reason = reason

    def __getattr__(self, name: str) -> Any:
        return getattr(self._world, name)

    def call(self, call: Any) -> Any:
        if self._left == 0:
            raise InfraFailure(self._reason)
        self._left -= 1
        return self._world.call(call)


def _play_again(episode: Episode, action: Any) -> None:
    """One kept action played again on a new world (see :meth:`TextDeskEnv.__setstate__`)."""
    if isinstance(action, _Stopped):
        world = episode.world
        episode.world = _StopsAt(world, action.at, action.reason)
        try:
            _play_again(episode, action.action)
        finally:
            episode.world = world
    elif isinstance(action, JsonCalls):
        episode.step_calls(action.calls)
    else:
        episode.step(action)


def _leave_open(world: Any) -> None:
    """The default ``close_world``: a world that holds nothing to release."""


@dataclass(frozen=True)
class DeskAdapter(Generic[WorldT, CaseT]):
    """What a desk tells :class:`TextDeskEnv`.

    ``make_world()`` builds the world once per environment (it is reset to each
    case); ``source`` picks the case of each reset; ``task_text(case, max_turns)``
    is the reset observation before it is cut; ``score(world)`` scores the world
    once the episode has ended; ``case_info(case)`` gives the case's fields of the
    last ``info`` (they come first, before ``score`` and the log's fields);
    ``ending`` words the end of an episode; ``close_world(world)`` releases what
    the world holds.
    """

    make_world: Callable[[], WorldT]
    source: CasePicker[CaseT]
    task_text: Callable[[CaseT, int], str]
    score: Callable[[WorldT], LiveScore]
    case_info: Callable[[CaseT], Mapping[str, Any]]
    ending: EndingText = PLAIN_ENDING
    close_world: Callable[[WorldT], None] = _leave_open


def final_info(
    case_fields: Mapping[str, Any], score: Mapping[str, Any], ledger: Ledger, **extra: Any
) -> dict[str, Any]:
    """What the last ``info`` of an episode carries, on every desk and in the team game.

    The case's fields, then ``score`` (the score as a dict), then any ``extra``
    fields, then the log's: ``log_intact`` (its entries link up, begin first and
    seal last: :meth:`Ledger.linked`; the hashes themselves are recomputed where the
    log leaves the environment, :meth:`TextDeskEnv.export_log`, and on replay),
    ``log_entries``, ``log_head`` (the last hash, to pin the log on replay) and
    ``log_nonce`` (the episode's nonce in entry 0, for a replay by key).
    """
    return {
        **case_fields,
        "score": score,
        **extra,
        "log_intact": ledger.linked(),
        "log_entries": len(ledger),
        "log_head": ledger.head,
        "log_nonce": ledger.nonce,
    }


RESET_CASE_FIELDS = ("case_id", "family")  # of the case's info fields, those a reset names


def reset_case_fields(case_fields: Mapping[str, Any], origin: Mapping[str, Any]) -> dict[str, Any]:
    """What a reset's ``info`` says of the case, beside ``turn`` and ``calls``: its id and
    family, and its split (or case file), or the seed a procedural case was built from.
    Nothing more of the case (the last ``info`` adds its truth: counts of defects, say)."""
    return {**{name: case_fields[name] for name in RESET_CASE_FIELDS if name in case_fields}, **origin}


PLAYER_INFO = ("turn", "calls")  # what a reset's info tells the player under evaluation


def player_info(info: Mapping[str, Any]) -> dict[str, Any]:
    """A reset's ``info`` as a scored player is handed it: its turn and calls only. The case's
    id and family (the family names the trap a case sets) are for the harness's records."""
    return {name: info[name] for name in PLAYER_INFO if name in info}


LOG_HEAD_SHOWN = 16  # hex digits of the running head in each step's header


def ansi_step(
    turn: int, max_turns: int, action: object, observation: str, ledger: Ledger, agent: str = ""
) -> str:
    """One step of the ``"ansi"`` transcript: the turn, the call as sent, its result and
    the log as it stands after it (entries so far and the running head)."""
    shown = action if isinstance(action, str) else repr(action)
    who = f"{agent} " if agent else ""
    header = f"--- {who}turn {turn} of {max_turns} | log: {len(ledger)} entries, head {ledger.head[:LOG_HEAD_SHOWN]} ---"
    return f"{header}\nACTION:\n{shown}\nRESULT:\n{observation}"


def ansi_ending(score: Mapping[str, Any], ledger: Ledger) -> str:
    """The transcript's last block: the score with every term and metric, and the full
    log head to pin (as ``info["log_head"]``)."""
    terms = json.dumps(dict(score), separators=(", ", ": "))
    return f"=== episode over | score {terms} | log: {len(ledger)} entries, head {ledger.head} ==="


def checked_settings(
    render_mode: str | None,
    render_modes: list[str],
    defaults: EpisodeLimits,
    max_turns: int | None,
    max_calls_per_step: int | None,
    max_observation_chars: int | None,
) -> EpisodeLimits:
    """What every environment checks first, before anything is built or read: the render
    mode, then the limits given (``None``: the desk's ``defaults``)."""
    if render_mode is not None and render_mode not in render_modes:
        raise ValueError(f"render_mode must be one of {render_modes}")
    return defaults.given(max_turns, max_calls_per_step, max_observation_chars)


def warn_if_cut_short(spec: Any, steps: int, limit: int | None) -> None:
    """``gymnasium.make`` sets an environment's spec just before it wraps ``TimeLimit`` at
    ``limit`` steps (the ``max_episode_steps`` given to ``make``, or else the id's: the steps
    of an episode under the default arguments). An environment whose episodes may take more
    (a longer ``max_turns``, a refund queue of several tickets) says so then, since
    ``TimeLimit`` would end such an episode before the environment does, unscored."""
    if spec is not None and limit is not None and 0 < limit < steps:
        gym.logger.warn(
            f"{spec.id}: its episodes here may take {steps} steps, more than max_episode_steps={limit};"
            f" TimeLimit ends them at step {limit}, unscored: make it with max_episode_steps={steps}"
            " (or -1, no TimeLimit)"
        )


def _time_limit_of_make() -> int | None:
    """The steps at which the ``gymnasium.make`` now setting a spec will wrap ``TimeLimit``,
    by its own rule: the ``max_episode_steps`` given to it, else its spec's. Read from its
    frame, two up from the setter; None when the caller is not ``make`` (no ``TimeLimit``
    follows)."""
    caller = sys._getframe(2)
    if caller.f_code.co_name != "make" or not caller.f_globals.get("__name__", "").startswith("gymnasium"):
        return None
    given, spec = caller.f_locals.get("max_episode_steps"), caller.f_locals.get("env_spec")
    limit = given if given is not None else getattr(spec, "max_episode_steps", None)
    return limit if isinstance(limit, int) else None


class StepBudgetSpec:
    """Gymnasium's ``spec``, set by ``gymnasium.make``; setting it checks the step budget
    (:func:`warn_if_cut_short`) against :attr:`episode_steps`."""

    _spec: Any = None

    @property
    def episode_steps(self) -> int:
        raise NotImplementedError

    @property
    def spec(self) -> Any:
        return self._spec

    @spec.setter
    def spec(self, value: Any) -> None:
        warn_if_cut_short(value, self.episode_steps, _time_limit_of_make())
        self._spec = value


def text_space(max_length: int) -> AsciiText:
    """A ``Text`` space over the observation charset (printable ASCII, tab, newline).

    A shallow copy of one never-sampled space per length: the character tables (about
    14 KB, two spaces an env) are read-only and shared, while each copy seeds its own
    generator on first use, as a new space would.
    """
    return copy.copy(_space_template(max_length))


@functools.cache
def _space_template(max_length: int) -> AsciiText:
    return AsciiText(max_length, min_length=0, charset=OBSERVATION_CHARSET)


class TextDeskEnv(StepBudgetSpec, gym.Env[str, str], Generic[WorldT, CaseT]):
    """Any desk as a Gymnasium environment with text actions and observations.

    **Action space** ``Text(max_length=MAX_ACTION_CHARS)`` (65,536, the limit the
    action parser enforces) over printable ASCII plus tab and newline. Any ``str``
    is accepted: a malformed action yields an error observation and is logged as a
    refused call.

    **Observation space** ``Text(max_length=max_observation_chars)``, same charset.
    After ``reset``: the desk's task text; after ``step``: ``turn t of T`` and each
    call with its result. Every observation, the reset one included, is cut to
    ``max_observation_chars`` with a marker counting what was dropped.

    **Reward** 0 until the desk says it is finished (termination) or the turn limit
    is reached (truncation); that step pays ``score["reward"]`` of the desk's score.
    An episode the machine stopped (a safety net fired: :mod:`~batchgate_gym.kernel.infra`)
    is truncated with reward 0 and no score: it is an infrastructure error, not the
    agent's failure, and is reported apart.

    **Info** ``turn`` and ``calls`` on every step; reset's adds the case's ``case_id``
    and ``family`` and its ``split`` (or case file, ``cases``; or ``seed``, the case seed
    of a procedural case: :func:`reset_case_fields`); the last step adds the case's
    fields, ``score`` (or, instead, ``infra_error``), ``log_intact``, ``log_entries``
    and ``log_head`` (:func:`final_info`).

    ``reset(seed=..., options=...)`` asks the case source for a case with
    ``self.np_random`` and the options, so one seed gives one case in any process.

    **Pickling** (Ray, multiprocessing with spawn, checkpoints): ``pickle.loads`` of an
    environment pickled mid-episode gives one that *continues the same episode* (a new
    world on which the episode's actions are played again: the same log, to its last
    hash, and the same next observations); pickled before any reset, a fresh one that
    waits for ``reset``. Its generator's state travels with it, so the next reset
    draws what the original's would. A macro environment pickles its text one.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}
    _seed_pending: int | None = None  # a reset's seed whose generator is not made yet

    def __init__(
        self,
        adapter: DeskAdapter[WorldT, CaseT],
        limits: EpisodeLimits | None = None,
        *,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.adapter = adapter
        self.limits = EpisodeLimits() if limits is None else limits
        self.render_mode = render_mode
        self.source = adapter.source
        self.world: WorldT = adapter.make_world()
        self.case: CaseT | None = None
        self.episode: Episode | None = None
        self.action_space = text_space(MAX_ACTION_CHARS)
        self.observation_space = text_space(self.limits.max_observation_chars)
        self._transcript: list[str] = []
        # This episode's actions, as sent: what a pickled env plays again (None once a
        # step raised part-way through, leaving a world no action list can rebuild).
        self._actions: list[Any] | None = []
        self._nonce: str | None = None  # this episode's log nonce, drawn at reset
        self._nonces = EpisodeNonces()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        if type(seed) is int and seed >= 0:
            self._seed_later(seed)
        else:  # no seed (the generator goes on), or one Gymnasium's own seeding checks
            super().reset(seed=seed)
            if seed is not None:  # seeded now: a seed waiting from an earlier reset is gone
                self._seed_pending = None
        case, origin = self._pick(options or {})
        # The episode's nonce, for its log's entry 0 (from the seed itself while its
        # generator is not made).
        self._nonce = self._nonces.next(None if self._seed_pending is not None else self.np_random)
        self._begin(case)
        observation = cut(
            self.adapter.task_text(case, self.limits.max_turns), self.limits.max_observation_chars
        )
        self._transcript = []
        self._show(observation)
        fields = self.adapter.case_info(case)
        return observation, {"turn": 0, "calls": 0, **reset_case_fields(fields, origin)}

    def _pick(self, options: Mapping[str, Any]) -> tuple[CaseT, dict[str, Any]]:
        """The case of a reset and where it came from: ``{"split": NAME}`` or ``{"cases":
        PATH}`` for fixed cases, ``{"seed": CASE_SEED}`` for a procedural one."""
        named = getattr(self.source, "named", None)  # a source whose options may name a case
        case = None if named is None else named(options)
        if case is None:
            seeded = getattr(self.source, "pick_seeded", None)  # a procedural source
            if seeded is not None:
                seed, case = seeded(self.np_random, options)
                return case, {"seed": seed}
            case = self.source.pick(self.np_random, options)
        return case, dict(getattr(self.source, "origin", {}))

    @property
    def episode_steps(self) -> int:
        """The most steps an episode takes: the turn limit."""
        return self.limits.max_turns

    def _seed_later(self, seed: int) -> None:
        """``super().reset(seed=seed)``, the generator made only when first used
        (:attr:`np_random`): a reset whose options name a case draws nothing from it, and
        seeding a generator costs more than the rest of a built reset. It is the generator
        Gymnasium would have made then (``seeding.np_random(seed)``), so every draw, nonce
        and ``np_random_seed`` is the same."""
        self._np_random, self._np_random_seed = None, seed
        self._seed_pending = seed
        self._nonces.seeded(seed)

    @property
    def np_random(self) -> np.random.Generator:
        """Gymnasium's generator (made from the last reset's seed when first used)."""
        seed = self._seed_pending
        if seed is not None:
            self._seed_pending = None
            self._np_random, self._np_random_seed = seeding.np_random(seed)
            self._nonces.adopt(self._np_random)
        return super().np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self._seed_pending = None
        gym.Env.np_random.fset(self, value)  # type: ignore[attr-defined]

    def _begin(self, case: CaseT) -> Episode:
        self.world.reset(case, nonce=self._nonce)
        self.case = case
        self.episode = Episode(self.world, self.limits, self.adapter.ending)
        self._actions = []
        return self.episode

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        outcome, reward, info = self._stepped(action, lambda episode: episode.step(action))
        return outcome.observation, reward, outcome.terminated, outcome.truncated, info

    def step_calls(
        self, calls: list[ToolCallDict], bound: list[ToolCall] | None = None
    ) -> tuple[StepOutcome, float, dict[str, Any]]:
        """A step of the JSON action ``action(*calls)`` without its text: the same step
        (:meth:`Episode.step_calls`: the same log, reward, termination and ``info``),
        with each call's result in the outcome's ``results`` instead of an observation
        to read them from (its ``observation`` is ``""``; with ``render_mode="ansi"``
        the text is written for the transcript, and is the outcome's). ``bound``, if
        given, is what :func:`~batchgate_gym.kernel.codec.bind_calls` gave for ``calls``
        over this environment's tools and call cap (:meth:`Episode.step_bound`)."""
        text = self.render_mode is not None
        if bound is not None:
            return self._stepped(JsonCalls(calls), lambda episode: episode.step_bound(bound, text=text))
        return self._stepped(JsonCalls(calls), lambda episode: episode.step_calls(calls, text=text))

    def _stepped(
        self, action: Any, play: Callable[[Episode], StepOutcome]
    ) -> tuple[StepOutcome, float, dict[str, Any]]:
        """What every step does around the episode's turn ``play``: keep the action for a
        pickle, and make the reward, the ``info`` and the transcript.

        The action is kept once it has been played, with where the machine stopped it if
        it did. A turn that raises is not kept: refused before it began (the episode was
        over), nothing changed; raised part-way (an error in the desk's code, an
        interrupt), the world holds part of an action that cannot be played again, so the
        episode ends there and cannot be pickled (:meth:`__getstate__` says why).
        """
        episode = self.episode
        if episode is None or self.case is None:  # reset sets both
            raise RuntimeError("call reset() before step()")
        turn = episode.turn
        try:
            outcome = play(episode)
        except BaseException:
            if episode.turn != turn:  # the turn began: the world may hold part of it
                episode.over = True
                self._actions = None
            raise
        if self._actions is not None:  # None only once an episode ended part-way through a turn
            stopped = outcome.infra_error and outcome.results
            kept = _Stopped(action, len(outcome.results) - 1, outcome.infra_error) if stopped else action
            self._actions.append(kept)
        info: dict[str, Any] = {"turn": episode.turn, "calls": outcome.calls}
        reward = 0.0
        if outcome.terminated or outcome.truncated:
            ended = self._ending_info(self.case, outcome.infra_error)
            info.update(ended)
            reward = ended["score"]["reward"] if "score" in ended else 0.0  # exact, converted once
        if self.render_mode is not None:
            ledger = self.world.ledger
            turns = self.limits.max_turns
            shown = action.text() if isinstance(action, JsonCalls) else action
            self._show(ansi_step(episode.turn, turns, shown, outcome.observation, ledger))
            if "score" in info:
                self._show(ansi_ending(info["score"], ledger))
        return outcome, reward, info

    def _show(self, block: str) -> None:
        """One block of the transcript: kept for :meth:`render` (``"ansi"``) or printed at
        once (``"human"``, the terminal as the episode goes)."""
        if self.render_mode == "ansi":
            self._transcript.append(block)
        elif self.render_mode == "human":
            print(block, end="\n\n", flush=True)

    def end_unfinished(self, reason: str) -> dict[str, Any]:
        """End the episode now, from outside it, and score it as the turn limit would.

        For a player that can go no further (a model whose context is full): the log
        is sealed with ``reason`` and the desk scores the world as it stands, what it
        pays any unfinished episode. Returns the last ``info`` (case fields, ``score``,
        the log's fields), as a last step would.
        """
        if self.episode is None or self.case is None:
            raise RuntimeError("call reset() before ending an episode")
        if self.episode.over:
            raise RuntimeError("the episode is already over")
        self.episode.over = True
        self.world.ledger.seal(reason)
        score = self.adapter.score(self.world).as_dict()
        return final_info(self.adapter.case_info(self.case), score, self.world.ledger)

    def _ending_info(self, case: CaseT, infra_error: str) -> dict[str, Any]:
        """The last ``info``'s fields: the score, or, if the machine stopped the episode
        (while it ran or while it was graded), ``infra_error`` and no score."""
        case_fields = self.adapter.case_info(case)
        if not infra_error:
            try:
                score = self.adapter.score(self.world).as_dict()
            except InfraFailure as exc:
                infra_error = str(exc) or "the machine stopped the grading"
            else:
                return final_info(case_fields, score, self.world.ledger)
        info = final_info(case_fields, {}, self.world.ledger, infra_error=infra_error)
        del info["score"]
        return info

    def export_log(self) -> list[dict[str, Any]]:
        """The episode's hash-chained log as plain dicts (for replay and audit), its chain
        recomputed on the way out (:meth:`Ledger.export`)."""
        return self.world.ledger.export()

    def render(self) -> Any:  # str or None; Any: Gymnasium's own annotation differs by version
        """With ``render_mode="ansi"``, the episode so far as text: the opening task,
        then for each step the turn, the action, its result and the running log head,
        and once it ends the score and the final head; otherwise ``None`` (``"human"``
        prints each block to standard output as the episode goes)."""
        if self.render_mode == "ansi":
            return "\n\n".join(self._transcript)
        return None

    def close(self) -> None:
        self.adapter.close_world(self.world)
        super().close()

    # -- pickling: the world holds live resources (the gate's SQLite connection, the
    # analyst's engines), so a pickle carries the episode's actions instead of the world.

    def __getstate__(self) -> dict[str, Any]:
        """Everything but the world and the episode loop: the settings, the generator's
        state, the case and the actions of the episode so far."""
        if self._actions is None:
            raise RuntimeError(
                "this episode cannot be pickled: a step raised part-way through it, so its world"
                " holds part of an action that cannot be played again; reset first"
            )
        state = self.__dict__.copy()
        del state["world"], state["episode"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A new world, and the pickled episode played again on it: the same case, the
        same actions, so the same log and the same state, ready for the next step (the
        episode continues). Unpickled before any reset, it waits for ``reset``."""
        self.__dict__.update(state)
        self.world = self.adapter.make_world()
        self.episode = None
        if self.case is not None:
            actions = self._actions
            episode = self._begin(self.case)
            for action in actions or ():
                _play_again(episode, action)
            self._actions = actions


__all__ = [
    "CasePicker",
    "DeskAdapter",
    "DeskWorld",
    "JsonCalls",
    "LiveScore",
    "StepBudgetSpec",
    "TextDeskEnv",
    "ansi_ending",
    "ansi_step",
    "checked_settings",
    "final_info",
    "player_info",
    "reset_case_fields",
    "text_space",
    "warn_if_cut_short",
]
