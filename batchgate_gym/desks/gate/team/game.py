"""One team episode, independent of how turns are scheduled.

Both PettingZoo interfaces (turn by turn, and all agents at once) drive the same
game: one shared :class:`TeamWorld` and, per agent, the kernel's
:class:`Episode` (parsing, call cap, turn limit, observation charset and length),
whose desk is that agent's seat at the world. An agent's episode ends when it
reports or runs out of turns; the game ends when every agent's has, and only then
is the shared log sealed and the team graded.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from batchgate_gym.kernel.episode import EpisodeLimits
from batchgate_gym.kernel.sqlguard import SqlBudget
from batchgate_gym.kernel.team import TeamGame

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


class GateTeamGame(TeamGame[TeamWorld, TeamScore]):
    """The shared warehouse and one kernel episode per agent."""

    ending = GATE_ENDING
    all_finished = "every agent reported"

    def __init__(
        self,
        agents: Sequence[str],
        limits: EpisodeLimits,
        budget: SqlBudget | None = None,
        log_key: bytes | None = None,
    ) -> None:
        super().__init__(agents, limits, TeamWorld(tuple(agents), budget, log_key))

    @property
    def case(self) -> Case:
        return self.world.case

    def opening(self, agent: str) -> str:
        return team_task_text(self.case, agent, len(self.agents), self.limits.max_turns)

    def grade(self) -> TeamScore:
        return grade_team(
            self.case,
            self.world.ledger.entries,
            self.agents,
            self.world.mart_usd(),
            self.world.prepared_case.reference_mart,
        )


__all__ = ["GateTeamGame", "deal_lists"]
