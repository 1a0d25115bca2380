"""The turn loop shared by every desk: text action in, text observation out.

A desk's *world* is the domain side: it names its tools, runs a bound call (logging
it in the ledger), and says when the agent has finished. The episode owns everything
that is the same on every desk: parsing the action, refusing malformed ones as
logged calls, the per-step call cap, the turn limit, the observation's charset and
length, and sealing the log when the episode ends.

A call the machine stops (a desk raising :class:`~.infra.InfraFailure`: a safety
net fired) ends the episode there: the call is logged as not run with an
``infra:`` note, the calls after it in the action are not run, and the log is
sealed with a reason starting ``infra error:``. The outcome says so
(``infra_error``); the episode is truncated, neither finished nor failed by the agent.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .codec import (
    ActionError,
    ToolCall,
    ToolSpec,
    bind_calls,
    compact_json,
    cut,
    escape,
    parse_action,
    syntax_help,
)
from .infra import INFRA_NOTE, INFRA_SEAL, InfraFailure
from .ledger import LogEntry
from .plain import as_int, short_repr

INVALID_ACTION = "invalid_action"


class EpisodeLog(Protocol):
    """What the episode writes to a desk's log: refused calls, and the seal at its end."""

    def append(self, action: str, args: dict[str, Any], executed: bool, note: str = "") -> LogEntry: ...

    def seal(self, reason: str) -> LogEntry: ...


class World(Protocol):
    """What the episode needs from a desk's world.

    A world whose budgets one action's calls share (the SQL guard's VM steps) also
    has ``begin_action()``; the episode calls it before each action's calls.
    """

    @property
    def ledger(self) -> EpisodeLog: ...

    @property
    def tools(self) -> Mapping[str, ToolSpec]: ...

    @property
    def finished(self) -> bool: ...

    def call(self, call: ToolCall) -> Mapping[str, Any]: ...


# Bounds of the episode limits, inclusive. An observation shorter than 256 characters
# could not hold a turn header, one call and the cut marker.
MAX_TURNS = 10_000
MAX_CALLS_PER_STEP = 1_000
MIN_OBSERVATION_CHARS = 256
MAX_OBSERVATION_CHARS = 1_048_576


@dataclass(frozen=True, slots=True)
class EpisodeLimits:
    """Per-episode limits, checked on construction: ``max_turns`` 1 to 10,000,
    ``max_calls_per_step`` 1 to 1,000, ``max_observation_chars`` 256 to 1,048,576
    (ints, not bools); anything else raises ``ValueError`` naming the limit.

    The defaults here are every environment's; a desk whose episodes want another
    turn limit holds its own ``EpisodeLimits(max_turns=...)``, and an environment
    applies its arguments to that with :meth:`given`.
    """

    max_turns: int = 30
    max_calls_per_step: int = 32
    max_observation_chars: int = 65_536

    def __post_init__(self) -> None:
        for name, low, high in (
            ("max_turns", 1, MAX_TURNS),
            ("max_calls_per_step", 1, MAX_CALLS_PER_STEP),
            ("max_observation_chars", MIN_OBSERVATION_CHARS, MAX_OBSERVATION_CHARS),
        ):
            value = getattr(self, name)
            number = as_int(value)
            if number is None or not low <= number <= high:
                raise ValueError(f"{name} must be an int in {low:,}..{high:,}, not {short_repr(value)}")
            object.__setattr__(self, name, number)

    def given(
        self,
        max_turns: int | None = None,
        max_calls_per_step: int | None = None,
        max_observation_chars: int | None = None,
    ) -> EpisodeLimits:
        """These limits with each one given (not ``None``) in its place, checked as on
        construction: an environment's arguments over its desk's defaults."""
        given = {
            "max_turns": max_turns,
            "max_calls_per_step": max_calls_per_step,
            "max_observation_chars": max_observation_chars,
        }
        return dataclasses.replace(
            self, **{name: value for name, value in given.items() if value is not None}
        )


@dataclass(frozen=True, slots=True)
class EndingText:
    """How a desk words the end of an episode: the seal's reason and the last observation."""

    finished: str = "task finished"  # the seal's reason when the desk says it is finished
    over: str = "The episode is over."
    out_of_turns: str = "Turn limit reached before the task was finished: the episode is over."
    after_end: str = "not run: the episode already ended"  # calls written after the end


Ran = tuple[tuple[ToolCall, Mapping[str, Any]], ...]  # each call run this step, with its result


@dataclass(frozen=True, slots=True)
class StepOutcome:
    observation: str  # "" from :meth:`Episode.step_calls` unless it was asked for the text
    terminated: bool
    truncated: bool
    calls: int
    infra_error: str = ""  # why the machine stopped the episode, if it did
    results: Ran = ()


class Episode:
    """One episode over one desk's world. ``step`` never raises on agent input.

    Two ways in, one way through: :meth:`step` takes an action's text and parses it;
    :meth:`step_calls` takes the calls of a JSON action already decoded (a program
    choosing moves, that has no need to write text for the episode to read back).
    After the calls are bound both run the same code: the desk's tools, the log, the
    call cap, the turn limit and the seal; only the observation's text is left out
    when :meth:`step_calls` is not asked for it.
    """

    __slots__ = ("_help", "calls", "ending", "limits", "over", "turn", "world")

    def __init__(self, world: World, limits: EpisodeLimits, ending: EndingText = EndingText()) -> None:
        self.world = world
        self.limits = limits
        self.ending = ending
        self.turn = 0
        self.calls = 0
        self.over = False
        self._help: str | None = None

    def step(self, action: object) -> StepOutcome:
        """One turn of the action ``action``, any object (a malformed one is refused)."""
        self._begin_turn()
        try:
            calls = parse_action(action, self.world.tools, self.limits.max_calls_per_step)
        except ActionError as exc:
            return self._refused(action, exc, text=True)
        return self._play(calls, text=True)

    def step_calls(self, items: list[Any], text: bool = False) -> StepOutcome:
        """One turn of the JSON action whose decoded list is ``items``: the same turn,
        log and outcome as ``step(json.dumps(items))`` (:func:`~.codec.bind_calls`),
        with each call's result in ``results`` and, unless ``text``, no observation."""
        self._begin_turn()
        try:
            calls = bind_calls(items, self.world.tools, self.limits.max_calls_per_step)
        except ActionError as exc:
            return self._refused(json.dumps(items), exc, text)
        return self._play(calls, text)

    def step_bound(self, calls: list[ToolCall], text: bool = False) -> StepOutcome:
        """:meth:`step_calls` of calls already bound: ``calls`` is what
        :func:`~.codec.bind_calls` gave for them over this world's tools and this episode's
        call cap (a caller sending the same calls again keeps their binding; a binding
        depends on nothing else). The same turn, log and outcome, without binding again."""
        self._begin_turn()
        return self._play(calls, text)

    def _begin_turn(self) -> None:
        if self.over:
            raise RuntimeError("the episode is over; reset before stepping again")
        self.turn += 1
        begin_action = getattr(self.world, "begin_action", None)
        if begin_action is not None:  # a world whose budgets are shared by one action's calls
            begin_action()

    def _refused(self, action: object, exc: ActionError, text: bool) -> StepOutcome:
        """The turn of an action that binds no calls: logged as refused, answered with the syntax."""
        self._log_invalid(action, str(exc))
        return self._end_turn(f"error: {exc}\n{self._syntax_help()}" if text else "", (), text)

    def _play(self, calls: list[ToolCall], text: bool) -> StepOutcome:
        ran, lines, infra = self._run_all(calls, text)
        body = "\n".join(lines)
        if infra:
            return self._stopped_by_machine(body, ran, infra, text)
        return self._end_turn(body, ran, text)

    def _header(self) -> str:
        return f"turn {self.turn} of {self.limits.max_turns}"

    def _end_turn(self, body: str, ran: Ran, text: bool) -> StepOutcome:
        self.calls += len(ran)
        terminated = self.world.finished
        truncated = not terminated and self.turn >= self.limits.max_turns
        if terminated or truncated:
            self.over = True
            self.world.ledger.seal(self.ending.finished if terminated else "turn limit reached")
            body += "\n" + (self.ending.over if terminated else self.ending.out_of_turns)
        return StepOutcome(self._observation(body, text), terminated, truncated, len(ran), results=ran)

    def _observation(self, body: str, text: bool) -> str:
        if not text:
            return ""
        return cut(escape(f"{self._header()}\n{body}"), self.limits.max_observation_chars)

    def _run_all(self, calls: list[ToolCall], text: bool) -> tuple[Ran, list[str], str]:
        """Each call with its result (and, with ``text``, its lines), up to and including
        one the machine stopped, and why it stopped."""
        ran: list[tuple[ToolCall, Mapping[str, Any]]] = []
        lines = []
        for call in calls:
            try:
                result = self._run(call)
            except InfraFailure as exc:
                reason = str(exc) or "the machine stopped the call"
                self.world.ledger.append(call.name, call.args, False, (INFRA_NOTE + reason)[:500])
                result = {"error": f"infrastructure error (not your action): {reason}"}
                ran.append((call, result))
                if text:
                    lines.append(_line(call, result))
                return tuple(ran), lines, reason
            ran.append((call, result))
            if text:  # written now: a later call may change what a result holds
                lines.append(_line(call, result))
        return tuple(ran), lines, ""

    def _stopped_by_machine(self, body: str, ran: Ran, reason: str, text: bool) -> StepOutcome:
        """End the episode on an infrastructure error: sealed as one, truncated, the agent not at fault."""
        self.calls += len(ran)
        self.over = True
        self.world.ledger.seal((INFRA_SEAL + reason)[:500])
        body += "\nThe machine running this episode failed; the episode ends unscored."
        return StepOutcome(self._observation(body, text), False, True, len(ran), reason, ran)

    def _run(self, call: ToolCall) -> Mapping[str, Any]:
        if self.world.finished:
            # Nothing reaches the world once the agent has finished, not even later
            # calls of the same action; they are logged as refused.
            reason = self.ending.after_end
            self.world.ledger.append(call.name, call.args, False, reason)
            return {"error": reason}
        return self.world.call(call)

    def _log_invalid(self, action: object, error: str) -> None:
        text = action if isinstance(action, str) else repr(type(action))
        self.world.ledger.append(INVALID_ACTION, {"text": escape(text[:200])}, False, error[:500])

    def _syntax_help(self) -> str:
        if self._help is None:
            self._help = syntax_help(self.world.tools)
        return self._help


def _line(call: ToolCall, result: Mapping[str, Any]) -> str:
    """A call and its result as the observation shows them."""
    return f"> {escape(call.render())}\n{compact_json(result)}"
