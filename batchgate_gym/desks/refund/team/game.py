"""One team episode of the refund desk, independent of how turns are scheduled.

Both PettingZoo interfaces drive the same game: the shared
:class:`~.world.RefundTeamWorld` and, per worker, the kernel's episode (parsing,
call cap, turn limit, observation limits) at that worker's seat. A worker's
episode ends with its reply to its last ticket or at its turn limit; when every
worker's has, the shared log is sealed and the team graded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from batchgate_gym.kernel.episode import Episode, EpisodeLimits, StepOutcome
from batchgate_gym.kernel.team import TeamTurns

from ..cases import RefundCase
from ..tools import REFUND_ENDING
from .grader import TeamRefundScore, grade_team
from .prompt import team_task_text
from .world import RefundTeamWorld


class RefundTeamGame:
    """The shared refund desk and one kernel episode per worker."""

    def __init__(
        self,
        workers: Sequence[str],
        limits: EpisodeLimits,
        log_key: bytes | None = None,
        recovery: bool = False,
    ) -> None:
        self.agents = tuple(workers)
        self.limits = limits
        self.recovery = recovery
        self.world = RefundTeamWorld(self.agents, log_key=log_key, recovery=recovery)
        self.turns: TeamTurns | None = None
        self.result: TeamRefundScore | None = None

    def start(
        self, case: RefundCase, lists: Mapping[str, Sequence[int]], nonce: str | None = None
    ) -> dict[str, str]:
        """Reset the world (``nonce`` the episode's) and every worker's episode; return
        each worker's first observation."""
        self.world.reset(case, lists, nonce)
        self.turns = TeamTurns(self.world, self.agents, self.limits, REFUND_ENDING, "every worker replied")
        self.result = None
        n = len(self.agents)
        return {
            worker: team_task_text(
                case, worker, n, self.world.lists[worker], self.limits.max_turns, self.recovery
            )
            for worker in self.agents
        }

    @property
    def case(self) -> RefundCase:
        return self.world.case

    @property
    def episodes(self) -> dict[str, Episode]:
        return self.turns.episodes if self.turns is not None else {}

    def done(self, worker: str) -> bool:
        return self.episodes[worker].over

    @property
    def over(self) -> bool:
        return all(episode.over for episode in self.episodes.values())

    def act(self, worker: str, action: object) -> StepOutcome:
        """Run one turn of ``worker``; once every worker is done, the log is sealed and graded."""
        if self.turns is None:
            raise RuntimeError("start the game with a case first")
        outcome, ended = self.turns.step(worker, action)
        if ended:
            ledger = self.world.ledger
            self.result = grade_team(
                self.case, ledger.entries, self.world.rules, self.world.lists, verified=ledger.linked()
            )
        return outcome

    def reported(self, worker: str) -> bool:
        """Whether the worker replied to its last ticket (rather than running out of turns)."""
        return self.world.finished_for(worker)


__all__ = ["RefundTeamGame"]
