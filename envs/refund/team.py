"""RefundDesk for a team of refund workers, as PettingZoo environments.

PettingZoo's conventions, as every desk's team game (and :mod:`.team_v0` is its
versioned name): ``raw_env`` is the AEC class, ``env(**kwargs)`` wraps it in
PettingZoo's ``OrderEnforcingWrapper``, ``parallel_env(**kwargs)`` is the parallel
form. Both are the shared team environment (:mod:`batchgate_gym.envs.team_env`)
with the refund desk's :func:`refund_team_adapter`; this module adds the desk's
arguments and their checks. In the AEC form workers take turns in worker order, each call landing
before the next worker moves; in the parallel form every worker acts each step and
the step's actions are applied one after another in an order drawn from the
environment's seeded generator.

Workers ``refund_0`` ... ``refund_{N-1}`` share one ticket queue (a procedural queue
case of ``tickets_per_agent * n_agents`` tickets, some of them the same request sent
again), one payment provider and one ledger whose history lags a payment as the
single desk's does, and one hash-chained log that names the worker of every entry.
Each worker has its own list of tickets (a request sent again goes to another worker
than its first copy, at the same place in its list, so the two reach the order at
about the same time); its reply to one brings its next. The provider scopes
idempotency keys to the worker, so two workers who read an empty or lagging ledger
and both pay really pay twice. Coordination is ``claim_order(order_id)``: the first
claim holds the order for the episode and the desk refuses (and logs) a payment,
void or escalation on an order another worker holds; ``wait()`` passes a turn.

Observations are ``{"text": str}``, actions text, exactly as in
``batchgate_gym/RefundDesk-v0`` (the same tools, ``void_refund`` with ``recovery``).
When every worker has replied to its last ticket (or run out of turns) every worker
receives the same team reward at once, the refund desk's score of the shared log
(each order of the queue graded on the calls made for its tickets, terms averaged
over the orders), and its ``info`` carries the team score, its own part
(``contribution``: ``payments``, ``paid_cents``, ``duplicate_payments``,
``duplicate_cents``) and whether it replied to its last ticket (``replied``).

Arguments: ``n_agents`` (2, 1 to 8); ``tickets_per_agent`` (2; the queue has
``tickets_per_agent * n_agents`` tickets, 2 to 16, or 1 with one worker);
``cases`` (``None``: a fresh procedural queue per reset; or a list of queue cases);
``recovery`` (``False``); ``max_turns`` (per worker, 12 per ticket of the largest
list when not given); ``max_calls_per_step`` (32); ``max_observation_chars``
(65,536) (each ``None`` for its default); ``log_key``; ``render_mode`` (``"ansi"``). Reset options: ``case_seed``
and the generator's knobs (``family``, ``lines``, ``prior_rows``, ``lag_depth``,
``fault_rate``, ``cap_cents``); ``lists`` (``{worker: [ticket indexes]}``) fixes
the deal. The default rules only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from batchgate_gym.desks.refund.generator.build import MAX_TICKETS
from batchgate_gym.desks.refund.sources import case_source
from batchgate_gym.desks.refund.team import RefundTeamGame, TeamScore, agent_names, deal_tickets
from batchgate_gym.kernel.episode import EpisodeLimits
from batchgate_gym.kernel.plain import check_int

from ..team_env import TEAM_METADATA, TeamAdapter, TeamAECEnv, TeamParallelEnv, TeamTextEnv, order_enforced
from ..text_env import CasePicker, checked_settings
from .text import REFUND_LIMITS, TURNS_PER_TICKET, refund_case_info

MAX_WORKERS = 8
CASE_OPTIONS = frozenset(
    {"case_seed", "case_id", "case_index", "family", "variant", "lines", "prior_rows", "lag_depth"}
    | {"fault_rate", "cap_cents"}
)


def _deal(rng: np.random.Generator, case: Any, workers: Sequence[str]) -> dict[str, Any]:
    return deal_tickets(rng, case, workers)


def _contribution(result: TeamScore, worker: str) -> dict[str, Any]:
    return result.agents[worker].as_dict()


def refund_team_adapter(
    workers: Sequence[str],
    limits: EpisodeLimits,
    source: CasePicker[Any],
    log_key: bytes | None = None,
    recovery: bool = False,
) -> TeamAdapter[RefundTeamGame]:
    """The refund desk's team game as a team desk: its game, deal, final info and wording."""
    return TeamAdapter(
        game=RefundTeamGame(workers, limits, log_key, recovery),
        agents=workers,
        source=source,
        case_options=CASE_OPTIONS,
        deal=_deal,
        case_info=refund_case_info,
        contribution=_contribution,
        waiting_text="You have replied to your last ticket; waiting for the other workers to finish.",
        finished_key="replied",
    )


class RefundTeamSetup(TeamTextEnv[RefundTeamGame]):
    """The refund team's arguments, checked, in both PettingZoo forms."""

    def __init__(
        self,
        n_agents: int = 2,
        cases: Any = None,
        *,
        tickets_per_agent: int = 2,
        recovery: bool = False,
        max_turns: int | None = None,
        max_calls_per_step: int | None = None,
        max_observation_chars: int | None = None,
        log_key: bytes | None = None,
        render_mode: str | None = None,
    ) -> None:
        # Every argument is checked before anything is built or read.
        n_agents = check_int("n_agents", n_agents, 1, MAX_WORKERS)
        per_agent = check_int("tickets_per_agent", tickets_per_agent, 1, MAX_TICKETS)
        tickets = check_int("tickets_per_agent * n_agents", per_agent * n_agents, 1, MAX_TICKETS)
        if not isinstance(recovery, bool):
            raise ValueError(f"recovery must be a bool, not {recovery!r}")
        if max_turns is None:
            max_turns = TURNS_PER_TICKET * (per_agent + 1)  # a worker may be dealt a request sent again
        limits = checked_settings(
            render_mode,
            TEAM_METADATA["render_modes"],
            REFUND_LIMITS,
            max_turns,
            max_calls_per_step,
            max_observation_chars,
        )
        source = case_source(cases, **({"tickets": tickets} if cases is None and tickets > 1 else {}))
        adapter = refund_team_adapter(agent_names(n_agents), limits, source, log_key, recovery)
        super().__init__(adapter, render_mode)


class RefundTeamEnv(RefundTeamSetup, TeamAECEnv[RefundTeamGame]):
    """The AEC form: one worker acts at a time, in worker order, skipping workers that are done."""

    metadata = {**TEAM_METADATA, "name": "refund_team_v0"}


class RefundTeamParallelEnv(RefundTeamSetup, TeamParallelEnv[RefundTeamGame]):
    """The parallel form: all workers act each step, applied in a seeded random order."""

    metadata = {**TEAM_METADATA, "name": "refund_team_v0"}


# PettingZoo's name for the unwrapped AEC environment class.
raw_env = RefundTeamEnv


def env(**kwargs: Any) -> OrderEnforcingWrapper:
    """The AEC refund team environment, ``raw_env(**kwargs)`` in PettingZoo's ``OrderEnforcingWrapper``."""
    return order_enforced(raw_env(**kwargs))


def parallel_env(**kwargs: Any) -> RefundTeamParallelEnv:
    """The parallel refund team environment."""
    return RefundTeamParallelEnv(**kwargs)


__all__ = [
    "RefundTeamEnv",
    "RefundTeamParallelEnv",
    "RefundTeamSetup",
    "env",
    "parallel_env",
    "raw_env",
    "refund_team_adapter",
]
