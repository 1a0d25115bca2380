"""One team episode of the refund desk, independent of how turns are scheduled.

Both PettingZoo interfaces drive the same game: the shared
:class:`~.world.RefundTeamWorld` and, per worker, the kernel's episode (parsing,
call cap, turn limit, observation limits) at that worker's seat. A worker's
episode ends with its reply to its last ticket or at its turn limit; when every
worker's has, the shared log is sealed and the team graded.
"""

from __future__ import annotations

from collections.abc import Sequence

from batchgate_gym.kernel.episode import EpisodeLimits
from batchgate_gym.kernel.team import TeamGame

from ..cases import RefundCase
from ..tools import REFUND_ENDING
from .grader import TeamScore, grade_team
from .prompt import team_task_text
from .world import RefundTeamWorld


class RefundTeamGame(TeamGame[RefundTeamWorld, TeamScore]):
    """The shared refund desk and one kernel episode per worker."""

    ending = REFUND_ENDING
    all_finished = "every worker replied"

    def __init__(
        self,
        agents: Sequence[str],
        limits: EpisodeLimits,
        log_key: bytes | None = None,
        recovery: bool = False,
    ) -> None:
        super().__init__(agents, limits, RefundTeamWorld(agents, log_key=log_key, recovery=recovery))
        self.recovery = recovery

    @property
    def case(self) -> RefundCase:
        return self.world.case

    def opening(self, agent: str) -> str:
        tickets = self.world.lists[agent]
        return team_task_text(
            self.case, agent, len(self.agents), tickets, self.limits.max_turns, self.recovery
        )

    def grade(self) -> TeamScore:
        ledger = self.world.ledger
        return grade_team(
            self.case, ledger.entries, self.world.rules, self.world.lists, verified=ledger.linked()
        )


__all__ = ["RefundTeamGame"]
