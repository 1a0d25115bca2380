"""Several agents at one shared world: one log that names who acted, one seat per agent.

A team game runs one kernel :class:`~.episode.Episode` per agent over a single
shared world and a single hash-chained log. Every entry an agent's call writes
names that agent (an ``agent`` field in its args, :class:`AttributedLedger`), so a
grader can tell each agent's part from the one log. Each agent's episode sees the
world through its :class:`Seat`, the world of that agent's episode; when the
agent's episode ends it writes an ``agent_done`` entry instead of sealing, and
:class:`TeamTurns` seals the shared log once, when every agent's episode is over.
:class:`TeamGame` is the base of a desk's team game: the shared world, the turns and
the graded result that both PettingZoo forms drive.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from .codec import ToolCall, ToolSpec
from .episode import EndingText, Episode, EpisodeLimits, StepOutcome
from .infra import INFRA_SEAL
from .ledger import Ledger, LogEntry

AGENT_KEY = "agent"  # the args field naming the acting agent
AGENT_DONE_ACTION = "agent_done"  # an agent's episode ended (the shared log goes on)
OUT_OF_TURNS = "turn limit reached"


class AttributedLedger(Ledger):
    """A ledger that writes the acting agent into the args of every entry it appends.

    Outside :meth:`acting` (the world's own entries, the seal) no agent is named.
    """

    __slots__ = ("agent",)

    def __init__(self, key: bytes | None = None) -> None:
        super().__init__(key)
        self.agent: str | None = None

    def append(self, action: str, args: dict[str, Any], executed: bool, note: str = "") -> LogEntry:
        if self.agent is not None:
            args = {**args, AGENT_KEY: self.agent}
        return super().append(action, args, executed, note)

    def seal(self, reason: str) -> LogEntry:
        self.agent = None  # the seal is the environment's, not an agent's
        return super().seal(reason)

    @contextmanager
    def acting(self, agent: str) -> Iterator[None]:
        """Entries appended inside the block name ``agent``."""
        before, self.agent = self.agent, agent
        try:
            yield
        finally:
            self.agent = before


class SharedWorld(Protocol):
    """What a seat needs from the shared world."""

    @property
    def ledger(self) -> AttributedLedger: ...

    @property
    def tools(self) -> Mapping[str, ToolSpec]: ...

    @property
    def finished(self) -> bool:
        """Every agent has finished."""
        ...

    def finished_for(self, agent: str) -> bool: ...

    def call_as(self, agent: str, call: ToolCall) -> Mapping[str, Any]: ...


class SeatLedger:
    """What one agent's episode writes to the shared log: its refused calls, under its
    name, and its end (an ``agent_done`` entry) instead of a seal.

    The world's current ledger is looked up on every write: a reset replaces it.
    """

    __slots__ = ("agent", "world")

    def __init__(self, world: SharedWorld, agent: str) -> None:
        self.world = world
        self.agent = agent

    def append(self, action: str, args: dict[str, Any], executed: bool, note: str = "") -> LogEntry:
        ledger = self.world.ledger
        with ledger.acting(self.agent):
            return ledger.append(action, args, executed, note)

    def seal(self, reason: str) -> LogEntry:
        return self.append(AGENT_DONE_ACTION, {"reason": reason}, True)


class Seat:
    """One agent's seat at the shared world: the world of that agent's episode."""

    __slots__ = ("agent", "ledger", "world")

    def __init__(self, world: SharedWorld, agent: str) -> None:
        self.world = world
        self.agent = agent
        self.ledger = SeatLedger(world, agent)

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        return self.world.tools

    @property
    def finished(self) -> bool:
        return self.world.finished_for(self.agent)

    def call(self, call: ToolCall) -> Mapping[str, Any]:
        return self.world.call_as(self.agent, call)

    def begin_action(self) -> None:
        """The agent's action starts: the world's per-action budgets, if it has any, start again."""
        begin = getattr(self.world, "begin_action", None)
        if begin is not None:
            begin()


class TeamTurns:
    """The turn flow of a team game: one episode per agent, one seal for all.

    An agent's episode ends when it finishes or runs out of turns; once every
    agent's has, the shared log is sealed with ``all_finished`` (when the world says
    every agent finished) or ``out_of_turns``. A call the machine stops ends every
    agent's episode at once: the log is sealed as an infrastructure error
    (``infra_error`` says why) and the game has no score.
    """

    __slots__ = ("all_finished", "episodes", "infra_error", "out_of_turns", "world")

    def __init__(
        self,
        world: SharedWorld,
        agents: Sequence[str],
        limits: EpisodeLimits,
        ending: EndingText,
        all_finished: str,
        out_of_turns: str = OUT_OF_TURNS,
    ) -> None:
        self.world = world
        self.all_finished = all_finished
        self.out_of_turns = out_of_turns
        self.episodes = {agent: Episode(Seat(world, agent), limits, ending) for agent in agents}
        self.infra_error = ""  # why the machine stopped the game, if it did

    def done(self, agent: str) -> bool:
        return self.episodes[agent].over

    @property
    def over(self) -> bool:
        return all(episode.over for episode in self.episodes.values())

    def step(self, agent: str, action: object) -> tuple[StepOutcome, bool]:
        """Run one turn of ``agent``; the flag says this turn ended the game (and sealed the log)."""
        outcome = self.episodes[agent].step(action)
        if outcome.infra_error and not self.world.ledger.sealed:
            # The machine stopped one agent's call: the game ends for every agent, unscored.
            self.infra_error = outcome.infra_error
            for episode in self.episodes.values():
                episode.over = True
            self.world.ledger.seal((INFRA_SEAL + outcome.infra_error)[:500])
            return outcome, True
        ended = self.over and not self.world.ledger.sealed
        if ended:
            self.world.ledger.seal(self.all_finished if self.world.finished else self.out_of_turns)
        return outcome, ended


class GameWorld(SharedWorld, Protocol):
    """A shared world a team game restarts: reset to a case with each agent's list dealt."""

    @property
    def case(self) -> Any: ...

    def reset(
        self, case: Any, lists: Mapping[str, Sequence[Any]] | None = ..., nonce: str | None = ...
    ) -> None: ...


WorldT = TypeVar("WorldT", bound=GameWorld)
ResultT = TypeVar("ResultT")


class TeamGame(Generic[WorldT, ResultT]):
    """One team episode over a shared world, whatever schedules the agents' turns.

    A desk's game gives its world, says how its agents' episodes end (``ending``) and
    the seal's reason when every agent finished (``all_finished``), writes each agent's
    first observation (:meth:`opening`) and grades the shared log (:meth:`grade`) once
    every agent's episode is over, unless the machine stopped the game (it then has no
    score, whatever the desk: ``result`` stays ``None``). ``result`` holds
    that grade, ``turns`` the agents' episodes (none before :meth:`start`).
    """

    ending: ClassVar[EndingText]
    all_finished: ClassVar[str]

    def __init__(self, agents: Sequence[str], limits: EpisodeLimits, world: WorldT) -> None:
        self.agents = tuple(agents)
        self.limits = limits
        self.world = world
        self.turns: TeamTurns | None = None
        self.result: ResultT | None = None

    def opening(self, agent: str) -> str:
        """``agent``'s first observation of the game just started."""
        raise NotImplementedError

    def grade(self) -> ResultT:
        """The graded game, once every agent's episode is over (its log sealed, not by
        the machine)."""
        raise NotImplementedError

    def start(
        self, case: Any, lists: Mapping[str, Sequence[Any]], nonce: str | None = None
    ) -> dict[str, str]:
        """Reset the world (``nonce`` the episode's) and every agent's episode; return each
        agent's first observation."""
        self.world.reset(case, lists, nonce)
        self.turns = TeamTurns(self.world, self.agents, self.limits, self.ending, self.all_finished)
        self.result = None
        return {agent: self.opening(agent) for agent in self.agents}

    @property
    def case(self) -> Any:
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
        """Run one turn of ``agent``; once every agent is done, the log is sealed and the game graded."""
        if self.turns is None:
            raise RuntimeError("start the game with a case first")
        outcome, ended = self.turns.step(agent, action)
        if ended and not self.turns.infra_error:  # a game the machine stopped has no score
            self.result = self.grade()
        return outcome

    def finished_for(self, agent: str) -> bool:
        """Whether ``agent`` finished its own work (rather than running out of turns)."""
        return self.world.finished_for(agent)


__all__ = [
    "AGENT_DONE_ACTION",
    "AGENT_KEY",
    "AttributedLedger",
    "GameWorld",
    "Seat",
    "SeatLedger",
    "SharedWorld",
    "TeamGame",
    "TeamTurns",
]
