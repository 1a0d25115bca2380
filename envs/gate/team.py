"""BadBatchGate for a team of gate agents, as PettingZoo environments.

The module follows PettingZoo's conventions (and :mod:`.team_v0` is its versioned
name, as PettingZoo's own environments have): ``raw_env`` is the AEC environment
class, ``env(**kwargs)`` wraps it in PettingZoo's ``OrderEnforcingWrapper``,
``parallel_env(**kwargs)`` is the parallel form. Both are the shared team
environment (:mod:`batchgate_gym.envs.team_env`) with the gate's
:func:`gate_team_adapter`; this module adds the gate's arguments and their checks.

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
``max_calls_per_step`` (32); ``max_observation_chars`` (65,536) (each ``None`` for its default); ``sql_budget``;
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
:class:`~batchgate_gym.envs.gate.text.BatchGateEnv`, as reset options too.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from numbers import Real
from typing import Any

import numpy as np
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from batchgate_gym.desks.gate.generator.build import MAX_BATCHES, MIN_BATCHES
from batchgate_gym.desks.gate.sources import case_source
from batchgate_gym.desks.gate.team import GateTeamGame, TeamScore, agent_names, deal_lists
from batchgate_gym.kernel.episode import EpisodeLimits
from batchgate_gym.kernel.plain import check_int
from batchgate_gym.kernel.sqlguard import SqlBudget

from ..team_env import TEAM_METADATA, TeamAdapter, TeamAECEnv, TeamParallelEnv, TeamTextEnv, order_enforced
from ..text_env import CasePicker, checked_settings
from .text import GATE_LIMITS, gate_case_info

CASE_OPTIONS = frozenset(
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
MAX_AGENTS = 12


def _is_probability(value: object) -> bool:
    """A real number (not a bool) in [0, 1]; NaN is not."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return False
    return value <= 1 and not value < 0  # numbers.Real declares only < and <=


def _deal(overlap: float, rng: np.random.Generator, case: Any, agents: Sequence[str]) -> dict[str, Any]:
    """Each agent's list of batch ids, dealt with the environment's generator."""
    return deal_lists(rng, [b.batch_id for b in case.batches], agents, overlap)


def _contribution(result: TeamScore, agent: str) -> dict[str, Any]:
    return result.agents[agent].as_dict()


def _close_game(game: GateTeamGame) -> None:
    game.world.conn.close()


def gate_team_adapter(
    agents: Sequence[str],
    limits: EpisodeLimits,
    source: CasePicker[Any],
    overlap: float,
    sql_budget: SqlBudget | None = None,
    log_key: bytes | None = None,
) -> TeamAdapter[GateTeamGame]:
    """The gate's team game as a team desk: its game, deal, final info and wording."""
    return TeamAdapter(
        game=GateTeamGame(agents, limits, sql_budget, log_key),
        agents=agents,
        source=source,
        case_options=CASE_OPTIONS,
        deal=functools.partial(_deal, overlap),
        case_info=gate_case_info,
        contribution=_contribution,
        waiting_text="You have reported; waiting for the other agents to finish.",
        close_game=_close_game,
    )


class GateTeamSetup(TeamTextEnv[GateTeamGame]):
    """The gate team's arguments, checked, in both PettingZoo forms."""

    def __init__(
        self,
        n_agents: int = 2,
        cases: Any = None,
        *,
        batches_per_agent: int = 2,
        overlap: float = 0.25,
        max_turns: int | None = None,
        max_calls_per_step: int | None = None,
        max_observation_chars: int | None = None,
        sql_budget: SqlBudget | None = None,
        log_key: bytes | None = None,
        render_mode: str | None = None,
    ) -> None:
        # Every argument is checked before anything is built or read.
        limits = checked_settings(
            render_mode,
            TEAM_METADATA["render_modes"],
            GATE_LIMITS,
            max_turns,
            max_calls_per_step,
            max_observation_chars,
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
        self.overlap = overlap
        source = case_source(cases, **knobs)
        adapter = gate_team_adapter(agent_names(n_agents), limits, source, overlap, sql_budget, log_key)
        super().__init__(adapter, render_mode)


class GateTeamEnv(GateTeamSetup, TeamAECEnv[GateTeamGame]):
    """The AEC form: one agent acts at a time, in agent order, skipping agents that are done."""

    metadata = {**TEAM_METADATA, "name": "batchgate_team_v0"}


class GateTeamParallelEnv(GateTeamSetup, TeamParallelEnv[GateTeamGame]):
    """The parallel form: all agents act each step, applied in a seeded random order."""

    metadata = {**TEAM_METADATA, "name": "batchgate_team_v0"}


# PettingZoo's name for the unwrapped AEC environment class.
raw_env = GateTeamEnv


def env(**kwargs: Any) -> OrderEnforcingWrapper:
    """The AEC team environment, ``raw_env(**kwargs)`` wrapped in PettingZoo's
    ``OrderEnforcingWrapper``."""
    return order_enforced(raw_env(**kwargs))


def parallel_env(**kwargs: Any) -> GateTeamParallelEnv:
    """The parallel team environment."""
    return GateTeamParallelEnv(**kwargs)


__all__ = [
    "GateTeamEnv",
    "GateTeamParallelEnv",
    "GateTeamSetup",
    "env",
    "gate_team_adapter",
    "parallel_env",
    "raw_env",
]
