"""One PettingZoo team environment for every desk: text actions in, text observations out.

A desk's team game (several agents at one shared world and one hash-chained log)
supplies its domain through a :class:`TeamAdapter`: its game, its agents, where
cases come from and which reset options pick one, how a case is dealt out to the
agents, the case's and each agent's fields of the last ``info``, and the text an
agent that is done sees. :class:`TeamTextEnv` owns everything the team games share:
the ``{"text": ...}`` observation and text action spaces, seeding and dealing on
reset, cutting the opening texts, the ``"ansi"`` transcript, the team's last
``info`` and closing the game. :class:`TeamAECEnv` and :class:`TeamParallelEnv` are
its two PettingZoo forms, as :class:`~.text_env.TextDeskEnv` with a
:class:`~.text_env.DeskAdapter` is every desk's single-agent form.

PettingZoo's conventions: a desk's ``team`` module names its AEC class ``raw_env``;
``env(**kwargs)`` is ``raw_env(**kwargs)`` inside PettingZoo's
``OrderEnforcingWrapper`` (stepping, observing, rendering or iterating agents before
``reset`` raises PettingZoo's error; the wrapper passes every public attribute
through, and ``.unwrapped`` is the raw environment); ``parallel_env(**kwargs)`` is
the parallel form, unwrapped; ``team_v0`` is the module's versioned name. There is
no ``AssertOutOfBoundsWrapper``: any string is a legal move here, and an action
outside the text space (over 65,536 characters, or other characters) is read by the
game like any other text, a malformed one refused as a logged call with an error
observation, instead of failing an assertion.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from batchgate_gym.kernel.codec import MAX_ACTION_CHARS, cut
from batchgate_gym.kernel.episode import StepOutcome
from batchgate_gym.kernel.ledger import EpisodeNonces
from batchgate_gym.kernel.team import GameWorld, TeamGame

from .text_env import CasePicker, LiveScore, ansi_ending, ansi_step, final_info, text_space

TEAM_METADATA: dict[str, Any] = {"render_modes": ["ansi"], "is_parallelizable": True, "render_fps": 1}
"""What every team environment's ``metadata`` holds; each adds its ``name``."""


class TeamResult(Protocol):
    """A graded team game: the team's score (each agent's part is the adapter's to read)."""

    @property
    def score(self) -> LiveScore: ...


GameT = TypeVar("GameT", bound=TeamGame[Any, Any])  # the desk's game; its result a TeamResult


def _leave_open(game: Any) -> None:
    """The default ``close_game``: a game that holds nothing to release."""


@dataclass(frozen=True)
class TeamAdapter(Generic[GameT]):
    """What a desk tells :class:`TeamTextEnv`.

    ``game`` is the team game (built once per environment, started anew on each
    reset) and ``agents`` its agents' names; ``source`` picks the case of each reset
    from the reset options named in ``case_options``; ``deal(rng, case, agents)``
    gives each agent its list (unless the ``lists`` option fixes them);
    ``case_info(case)`` gives the case's fields of the last ``info`` and
    ``contribution(result, agent)`` the agent's part of the graded game;
    ``finished_key`` (if any) names the last ``info``'s field saying whether the agent
    finished its own work rather than running out of turns; ``waiting_text`` is what
    an agent that is done sees while the others play on; ``close_game(game)``
    releases what the game holds.
    """

    game: GameT
    agents: Sequence[str]
    source: CasePicker[Any]
    case_options: frozenset[str]
    deal: Callable[[np.random.Generator, Any, Sequence[str]], Mapping[str, Sequence[Any]]]
    case_info: Callable[[Any], Mapping[str, Any]]
    contribution: Callable[[Any, str], dict[str, Any]]
    waiting_text: str
    finished_key: str | None = None
    close_game: Callable[[GameT], None] = _leave_open


class TeamTextEnv(Generic[GameT]):
    """What both PettingZoo forms share: spaces, seeding, dealing, the transcript, the last info."""

    metadata: dict[str, Any] = TEAM_METADATA

    def __init__(self, adapter: TeamAdapter[GameT], render_mode: str | None = None) -> None:
        self.adapter = adapter
        self.game = adapter.game
        self.render_mode = render_mode
        self.possible_agents = list(adapter.agents)
        self.agents: list[str] = []
        self.source = adapter.source
        chars = adapter.game.limits.max_observation_chars
        self.max_observation_chars = chars
        self.observation_spaces = {
            agent: spaces.Dict({"text": text_space(chars)}) for agent in self.possible_agents
        }
        self.action_spaces = {agent: text_space(MAX_ACTION_CHARS) for agent in self.possible_agents}
        self.np_random: np.random.Generator | None = None
        self._nonces = EpisodeNonces()
        self.texts: dict[str, str] = {}
        self._transcript: list[str] = []

    @property
    def waiting_text(self) -> str:
        return self.adapter.waiting_text

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def _begin(self, seed: int | None, options: Mapping[str, Any] | None) -> None:
        if seed is not None or self.np_random is None:
            self.np_random, _ = seeding.np_random(seed)
        options = dict(options or {})
        picking = {k: v for k, v in options.items() if k in self.adapter.case_options}
        case = self.source.pick(self.np_random, picking)
        lists = options.get("lists") or self.adapter.deal(self.np_random, case, self.possible_agents)
        # The task text can be longer than a low observation limit: cut like any other.
        self.texts = {
            agent: cut(text, self.max_observation_chars)
            for agent, text in self.game.start(case, lists, self._nonces.next(self.np_random)).items()
        }
        self.agents = list(self.possible_agents)
        self._transcript = [f"[{agent}]\n{text}" for agent, text in self.texts.items()]

    def _act(self, agent: str, action: object) -> StepOutcome:
        outcome = self.game.act(agent, action)
        self.texts[agent] = outcome.observation
        if self.render_mode == "ansi":
            game, ledger = self.game, self.game.world.ledger
            turn = game.episodes[agent].turn
            self._transcript.append(
                ansi_step(turn, game.limits.max_turns, action, outcome.observation, ledger, agent)
            )
            if game.result is not None:
                self._transcript.append(ansi_ending(game.result.score.as_dict(), ledger))
        return outcome

    def _step_info(self, agent: str, outcome: StepOutcome) -> dict[str, Any]:
        return {"turn": self.game.episodes[agent].turn, "calls": outcome.calls}

    def _final(self, agent: str) -> tuple[float, bool, bool, dict[str, Any]]:
        """Reward, terminated, truncated and info of ``agent`` once the team is done
        (truncated, reward 0 and ``infra_error`` instead of a score if the machine stopped it)."""
        turns = self.game.turns
        case_fields = self.adapter.case_info(self.game.case)
        ledger = self.game.world.ledger
        if turns is not None and turns.infra_error:
            info = final_info(case_fields, {}, ledger, infra_error=turns.infra_error)
            del info["score"]
            info["turn"] = self.game.episodes[agent].turn
            return 0.0, False, True, self._finished(info, False)
        result = self.game.result
        if result is None:
            raise RuntimeError("the team is not done yet")
        contribution = self.adapter.contribution(result, agent)
        info = final_info(case_fields, result.score.as_dict(), ledger, contribution=contribution)
        info["turn"] = self.game.episodes[agent].turn
        finished = self.game.finished_for(agent)
        return info["score"]["reward"], finished, not finished, self._finished(info, finished)

    def _finished(self, info: dict[str, Any], finished: bool) -> dict[str, Any]:
        if self.adapter.finished_key is not None:
            info[self.adapter.finished_key] = finished
        return info

    def export_log(self) -> list[dict[str, Any]]:
        """The shared hash-chained log as plain dicts."""
        world: GameWorld = self.game.world
        return world.ledger.export()

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return "\n\n".join(self._transcript)
        return None

    def close(self) -> None:
        self.adapter.close_game(self.game)


class TeamAECEnv(TeamTextEnv[GameT], AECEnv):
    """The AEC form: one agent acts at a time, in agent order, skipping agents that are done."""

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._begin(seed, options)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {"turn": 0, "calls": 0} for agent in self.agents}
        self.agent_selection = self.agents[0]

    def observe(self, agent: str) -> dict[str, str]:
        return {"text": self.texts[agent]}

    def step(self, action: object) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        outcome = self._act(agent, action)
        self.infos[agent] = self._step_info(agent, outcome)
        if self.game.over:
            for each in self.agents:
                self.rewards[each], self.terminations[each], self.truncations[each], self.infos[each] = (
                    self._final(each)
                )
            self._deads_step_first()
        else:
            self.agent_selection = self._next_live(agent)
        self._accumulate_rewards()

    def _next_live(self, agent: str) -> str:
        start = self.agents.index(agent)
        for offset in range(1, len(self.agents) + 1):
            candidate = self.agents[(start + offset) % len(self.agents)]
            if not self.game.done(candidate):
                return candidate
        raise RuntimeError("no agent left to act while the game is not over")


class TeamParallelEnv(TeamTextEnv[GameT], ParallelEnv):
    """The parallel form: all agents act each step, applied in a seeded random order."""

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, Any]]]:
        self._begin(seed, options)
        observations = {agent: {"text": self.texts[agent]} for agent in self.agents}
        return observations, {agent: {"turn": 0, "calls": 0} for agent in self.agents}

    def step(self, actions: Mapping[str, object]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents or self.np_random is None:  # a reset seeds np_random, then deals agents
            raise RuntimeError("the episode is over; reset before stepping again")
        live = [agent for agent in self.agents if not self.game.done(agent)]
        infos: dict[str, dict[str, Any]] = {}
        for position, index in enumerate(self.np_random.permutation(len(live))):
            agent = live[index]
            if self.game.done(agent):  # the machine stopped the game during this step
                continue
            # An agent that sends nothing this step waits.
            outcome = self._act(agent, actions.get(agent, "wait()"))
            infos[agent] = {**self._step_info(agent, outcome), "position": position}
        for agent in self.agents:
            if agent not in infos:
                self.texts[agent] = self.waiting_text
                infos[agent] = {"turn": self.game.episodes[agent].turn, "calls": 0}
        rewards = dict.fromkeys(self.agents, 0.0)
        terminations = dict.fromkeys(self.agents, False)
        truncations = dict.fromkeys(self.agents, False)
        if self.game.over:
            for agent in self.agents:
                rewards[agent], terminations[agent], truncations[agent], infos[agent] = self._final(agent)
        observations = {agent: {"text": self.texts[agent]} for agent in self.agents}
        if self.game.over:
            self.agents = []
        return observations, rewards, terminations, truncations, infos


def order_enforced(raw: AECEnv) -> OrderEnforcingWrapper:
    """``raw`` inside PettingZoo's ``OrderEnforcingWrapper``: what a team module's ``env()`` returns."""
    return OrderEnforcingWrapper(raw)


__all__ = [
    "TEAM_METADATA",
    "TeamAECEnv",
    "TeamAdapter",
    "TeamParallelEnv",
    "TeamResult",
    "TeamTextEnv",
    "order_enforced",
]
