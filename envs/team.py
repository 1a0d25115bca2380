"""BadBatchGate for a team of gate agents, as PettingZoo environments.

The module follows PettingZoo's conventions (and :mod:`batchgate_gym.envs.team_v0`
is its versioned name, as PettingZoo's own environments have): ``raw_env`` is the
AEC environment class; ``env(**kwargs)`` is ``raw_env(**kwargs)`` inside
PettingZoo's ``OrderEnforcingWrapper`` (stepping, observing, rendering or
iterating agents before ``reset`` raises PettingZoo's error; the wrapper passes
every public attribute through, and ``.unwrapped`` is the raw environment);
``parallel_env(**kwargs)`` is the parallel form, unwrapped. There is no
``AssertOutOfBoundsWrapper``: any string is a legal move here, and an action
outside the text space (over 65,536 characters, or other characters) is read by
the game like any other text, a malformed one refused as a logged call with an
error observation, instead of failing an assertion.

In the AEC form agents take turns in agent order, and each call lands before the
next agent moves. In the parallel form every agent acts each step, and the
agents' actions of one step are applied one after another in an order drawn from
the environment's seeded generator, so two loads of the same batch in one step
really both happen.

Agents ``gate_0`` ... ``gate_{N-1}`` share one warehouse, one staging area and one
hash-chained log. Observations are ``{"text": str}`` (a ``Dict`` holding an ASCII
``Text``), actions are text exactly as in the single-agent environment, with two
more tools: ``claim_batch(batch_id)`` and ``wait()``. An agent that has reported
is done: it is skipped in AEC turns, and in the parallel form its actions are not
run (a live agent missing from a parallel step's actions waits). When every agent
has reported (or at the turn limit) every agent receives the same team reward at once, and its ``info`` carries the team score and its own
contribution. The per-step info of an acting agent is ``{"turn", "calls"}`` (plus
``"position"`` in the parallel form: where its action fell in the step's order).

Arguments: ``n_agents`` (2); ``cases`` (``None``: a fresh generated case per reset
with ``batches_per_agent * n_agents`` batches; or a JSONL path, a split name or a
list of cases); ``batches_per_agent`` (2); ``overlap`` (0.25: the chance that a
batch is also dealt to a second agent's list); ``max_turns`` (30, per agent);
``max_calls_per_step`` (32); ``max_observation_chars`` (65,536); ``sql_budget``;
``log_key`` (bytes: chain the shared log with HMAC-SHA256, for ``replay_team(..., key=)``);
``render_mode`` (``"ansi"``). Reset options: ``case_seed``, ``case_id``,
``case_index`` and the generator's scale knobs pick the case; ``lists``
(``{agent: [batch ids]}``) fixes the lists instead of dealing them. Other option
keys are ignored.

Bounds, checked before anything is built (a ``ValueError`` names the argument and
its bound): ``n_agents`` 1 to 12; ``batches_per_agent`` 1 to 12, and for generated
cases ``batches_per_agent * n_agents`` 2 to 12; ``overlap`` a number in [0, 1];
``max_turns`` 1 to 10,000; ``max_calls_per_step`` 1 to 1,000;
``max_observation_chars`` 256 to 1,048,576 (every observation, the reset one
included, is cut to it with a marker); the scale knobs and ``case_seed`` as for
:class:`~batchgate_gym.envs.gate.BatchGateEnv`, as reset options too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Real
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from batchgate_gym.desks.gate.generator.build import MAX_BATCHES, MIN_BATCHES
from batchgate_gym.desks.gate.sources import case_source
from batchgate_gym.desks.gate.team import TeamGame, agent_names, deal_lists
from batchgate_gym.kernel.codec import MAX_ACTION_CHARS, cut
from batchgate_gym.kernel.episode import EpisodeLimits, StepOutcome
from batchgate_gym.kernel.ledger import EpisodeNonces
from batchgate_gym.kernel.plain import check_int
from batchgate_gym.kernel.sqlguard import SqlBudget

from .gate import gate_case_info
from .text_env import ansi_ending, ansi_step, checked_settings, final_info, text_space

_CASE_OPTIONS = frozenset(
    {
        "case_seed",
        "case_id",
        "case_index",
        "family",
        "variant",
        "rows_per_batch",
        "batches",
        "defects_per_batch",
    }
)
_METADATA: dict[str, Any] = {"render_modes": ["ansi"], "is_parallelizable": True, "render_fps": 1}
MAX_AGENTS = 12


def _is_probability(value: object) -> bool:
    """A real number (not a bool) in [0, 1]; NaN is not."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return False
    return value <= 1 and not value < 0  # numbers.Real declares only < and <=


class TeamSetup:
    """What both interfaces share: arguments, spaces, seeding, dealing, transcript.

    Public so that another desk's team game (the refund workers') can take the same
    turn logic: it overrides the arguments, ``_deal``, ``case_options`` and the final
    info's ``_case_fields`` and ``_contribution``."""

    waiting_text = "You have reported; waiting for the other agents to finish."

    def __init__(
        self,
        n_agents: int = 2,
        cases: Any = None,
        *,
        batches_per_agent: int = 2,
        overlap: float = 0.25,
        max_turns: int = 30,
        max_calls_per_step: int = 32,
        max_observation_chars: int = 65_536,
        sql_budget: SqlBudget | None = None,
        log_key: bytes | None = None,
        render_mode: str | None = None,
    ) -> None:
        # Every argument is checked before anything is built or read.
        limits = checked_settings(
            render_mode, _METADATA["render_modes"], max_turns, max_calls_per_step, max_observation_chars
        )
        n_agents = check_int("n_agents", n_agents, 1, MAX_AGENTS)
        batches_per_agent = check_int("batches_per_agent", batches_per_agent, 1, MAX_BATCHES)
        if not _is_probability(overlap):
            raise ValueError(f"overlap is a probability: a number in [0, 1], not {overlap!r}")
        knobs: dict[str, int] = {}
        if cases is None:
            knobs["batches"] = batches_per_agent * n_agents
            if not MIN_BATCHES <= knobs["batches"] <= MAX_BATCHES:
                raise ValueError(
                    f"batches_per_agent * n_agents is the number of batches of a generated case and"
                    f" must be in {MIN_BATCHES}..{MAX_BATCHES}, not {batches_per_agent} * {n_agents}"
                )
        self._seat(agent_names(n_agents), limits, render_mode, case_source(cases, **knobs))
        self.overlap = overlap
        self.game = TeamGame(self.possible_agents, limits, sql_budget, log_key)

    def _seat(
        self, agents: Sequence[str], limits: EpisodeLimits, render_mode: str | None, source: Any
    ) -> None:
        """What every team game sets up alike: agents, spaces, the case source, no episode yet."""
        self.render_mode = render_mode
        self.possible_agents = list(agents)
        self.agents: list[str] = []
        self.source = source
        self.max_observation_chars = limits.max_observation_chars
        self.observation_spaces = {
            agent: spaces.Dict({"text": text_space(limits.max_observation_chars)})
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: text_space(MAX_ACTION_CHARS) for agent in self.possible_agents}
        self.np_random: np.random.Generator | None = None
        self._nonces = EpisodeNonces()
        self.texts: dict[str, str] = {}
        self._transcript: list[str] = []

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    case_options = _CASE_OPTIONS  # the reset options that pick the case

    def _begin(self, seed: int | None, options: Mapping[str, Any] | None) -> None:
        if seed is not None or self.np_random is None:
            self.np_random, _ = seeding.np_random(seed)
        options = dict(options or {})
        case = self.source.pick(self.np_random, {k: v for k, v in options.items() if k in self.case_options})
        lists = options.get("lists") or self._deal(case)
        # The task text can be longer than a low observation limit: cut like any other.
        self.texts = {
            agent: cut(text, self.max_observation_chars)
            for agent, text in self.game.start(case, lists, self._nonces.next(self.np_random)).items()
        }
        self.agents = list(self.possible_agents)
        self._transcript = [f"[{agent}]\n{text}" for agent, text in self.texts.items()]

    def _deal(self, case: Any) -> Mapping[str, Sequence[Any]]:
        """Each agent's list, dealt with the environment's generator."""
        assert self.np_random is not None  # _begin seeds it first
        return deal_lists(
            self.np_random, [b.batch_id for b in case.batches], self.possible_agents, self.overlap
        )

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
        if turns is not None and turns.infra_error:
            info = final_info(self._case_fields(), {}, self.game.world.ledger, infra_error=turns.infra_error)
            del info["score"]
            info["turn"] = self.game.episodes[agent].turn
            return 0.0, False, True, info
        result = self.game.result
        if result is None:
            raise RuntimeError("the team is not done yet")
        info = final_info(
            self._case_fields(),
            result.score.as_dict(),
            self.game.world.ledger,
            contribution=self._contribution(agent),
        )
        info["turn"] = self.game.episodes[agent].turn
        reported = self.game.reported(agent)
        return info["score"]["reward"], reported, not reported, info

    def _case_fields(self) -> Mapping[str, Any]:
        return gate_case_info(self.game.case)

    def _contribution(self, agent: str) -> dict[str, Any]:
        result = self.game.result
        assert result is not None  # only called once the team is done
        return result.agents[agent].as_dict()

    def export_log(self) -> list[dict[str, Any]]:
        """The shared hash-chained log as plain dicts."""
        return self.game.world.ledger.export()

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return "\n\n".join(self._transcript)
        return None

    def close(self) -> None:
        self.game.world.conn.close()


class TeamGateEnv(TeamSetup, AECEnv):
    """The AEC form: one agent acts at a time, in agent order, skipping agents that are done."""

    metadata = {**_METADATA, "name": "batchgate_team_v0"}

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


class TeamGateParallelEnv(TeamSetup, ParallelEnv):
    """The parallel form: all agents act each step, applied in a seeded random order."""

    metadata = {**_METADATA, "name": "batchgate_team_v0"}

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


# PettingZoo's name for the unwrapped AEC environment class.
raw_env = TeamGateEnv


def env(**kwargs: Any) -> OrderEnforcingWrapper:
    """The AEC team environment, ``raw_env(**kwargs)`` wrapped in PettingZoo's
    ``OrderEnforcingWrapper``."""
    return OrderEnforcingWrapper(raw_env(**kwargs))


def parallel_env(**kwargs: Any) -> TeamGateParallelEnv:
    """The parallel team environment."""
    return TeamGateParallelEnv(**kwargs)


__all__ = ["TeamGateEnv", "TeamGateParallelEnv", "TeamSetup", "env", "parallel_env", "raw_env"]
