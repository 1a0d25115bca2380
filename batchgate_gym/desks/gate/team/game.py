"""One team episode, independent of how turns are scheduled.

Both PettingZoo interfaces (turn by turn, and all agents at once) drive the same
game: one shared :class:`TeamWorld` and, per agent, the kernel's
:class:`Episode` (parsing, call cap, turn limit, observation charset and length),
whose desk is that agent's seat at the world. An agent's episode ends when it
reports or runs out of turns; the game ends when every agent's has, and only then
is the shared log sealed and the team graded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from batchgate_gym.kernel.episode import Episode, EpisodeLimits, StepOutcome
from batchgate_gym.kernel.sqlguard import SqlBudget
from batchgate_gym.kernel.team import TeamTurns

from ..cases import Case
from ..tools import GATE_ENDING
from .grader import TeamScore, grade_team
from .prompt import team_task_text
from .world import TeamWorld


def deal_lists(
    rng: np.random.Generator, batch_ids: Sequence[str], agents: Sequence[str], overlap: float
) -> dict[str, tuple[str, ...]]:
    """Each batch to one agent, dealt round-robin after a shuffle; with chance ``overlap``
    also to a second agent (the same file handed to two workers); each list shuffled."""
    lists: dict[str, list[str]] = {agent: [] for agent in agents}
    for position, index in enumerate(rng.permutation(len(batch_ids))):
        owner = position % len(agents)
        lists[agents[owner]].append(batch_ids[index])
        if len(agents) > 1 and rng.random() < overlap:
            second = (owner + 1 + int(rng.integers(len(agents) - 1))) % len(agents)
            lists[agents[second]].append(batch_ids[index])
    return {agent: tuple(ids[i] for i in rng.permutation(len(ids))) for agent, ids in lists.items()}


class GateTeamGame:
    """The shared world and one kernel episode per agent."""

    def __init__(
        self,
        agents: Sequence[str],
        limits: EpisodeLimits,
        budget: SqlBudget | None = None,
        log_key: bytes | None = None,
    ) -> None:
        self.agents = tuple(agents)
        self.limits = limits
        self.world = TeamWorld(self.agents, budget, log_key)
        self.turns: TeamTurns | None = None
        self.result: TeamScore | None = None

    def start(
        self, case: Case, lists: Mapping[str, Sequence[str]], nonce: str | None = None
    ) -> dict[str, str]:
        """Reset the world (``nonce`` the episode's) and every agent's episode; return each
        agent's first observation."""
        self.world.reset(case, lists, nonce)
        self.turns = TeamTurns(self.world, self.agents, self.limits, GATE_ENDING, "every agent reported")
        self.result = None
        n = len(self.agents)
        return {agent: team_task_text(case, agent, n, self.limits.max_turns) for agent in self.agents}

    @property
    def case(self) -> Case:
        return self.world.case

    @property
    def episodes(self) -> dict[str, Episode]:
        """Each agent's kernel episode (none before :meth:`start`)."""
        return self.turns.episodes if self.turns is not None else {}

    def done(self, agent: str) -> bool:
        return self.episodes[agent].over

    @property
    def over(self) -> bool:
        return all(episode.over for episode in self.episodes.values())

    def act(self, agent: str, action: object) -> StepOutcome:
        """Run one turn of ``agent``; once every agent is done, the log is sealed and the team graded."""
        if self.turns is None:
            raise RuntimeError("start the game with a case first")
        outcome, ended = self.turns.step(agent, action)
        if ended and not self.turns.infra_error:  # a game the machine stopped has no score
            self.result = grade_team(
                self.case,
                self.world.ledger.entries,
                self.agents,
                self.world.mart_usd(),
                self.world.prepared_case.reference_mart,
            )
        return outcome

    def reported(self, agent: str) -> bool:
        return agent in self.world.reports


__all__ = ["GateTeamGame", "deal_lists"]
