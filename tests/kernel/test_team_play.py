"""Team games in the kernel: a log that names who acted, one seat per agent, one seal for all."""

from __future__ import annotations

from typing import Any

import pytest

from batchgate_gym.kernel.codec import Param, ToolCall, ToolSpec
from batchgate_gym.kernel.episode import EndingText, EpisodeLimits
from batchgate_gym.kernel.team import AGENT_DONE_ACTION, AttributedLedger, Seat, TeamTurns

_TOOLS = {
    spec.name: spec
    for spec in (
        ToolSpec("note", "Write a word.", (Param("word", str, "a word"),)),
        ToolSpec("done", "Stop."),
    )
}


class Shared:
    """A tiny shared world: agents write words; each is finished once it says done."""

    tools = _TOOLS

    def __init__(self, agents: tuple[str, ...]) -> None:
        self.agents = agents
        self.ledger = AttributedLedger()
        self.stopped: set[str] = set()

    @property
    def finished(self) -> bool:
        return self.stopped == set(self.agents)

    def finished_for(self, agent: str) -> bool:
        return agent in self.stopped

    def call_as(self, agent: str, call: ToolCall) -> dict[str, Any]:
        with self.ledger.acting(agent):
            self.ledger.append(call.name, dict(call.args), True)
        if call.name == "done":
            self.stopped.add(agent)
        return {"ok": True}


def test_entries_name_the_acting_agent_and_nobody_outside_acting():
    ledger = AttributedLedger()
    ledger.append("setup", {}, True)
    with ledger.acting("a"):
        ledger.append("x", {"k": 1}, True)
        with ledger.acting("b"):
            ledger.append("y", {}, False, "no")
        ledger.append("z", {}, True)
    ledger.seal("end")
    assert [entry.args.get("agent") for entry in ledger.entries] == [None, "a", "b", "a", None]
    assert ledger.agent is None and ledger.intact()


def test_acting_restores_on_an_error_and_the_seal_is_never_an_agents():
    ledger = AttributedLedger()
    with pytest.raises(RuntimeError), ledger.acting("a"):
        raise RuntimeError
    assert ledger.agent is None
    ledger.agent = "a"
    assert "agent" not in ledger.seal("end").args


def test_a_seat_calls_as_its_agent_and_ends_with_its_own_entry_not_a_seal():
    world = Shared(("a", "b"))
    seat = Seat(world, "b")
    assert seat.tools is _TOOLS and not seat.finished
    seat.call(ToolCall("note", {"word": "hi"}))
    seat.ledger.append("refused", {}, False, "why")
    entry = seat.ledger.seal("finished")
    assert entry.action == AGENT_DONE_ACTION and entry.args == {"reason": "finished", "agent": "b"}
    assert not world.ledger.sealed
    assert [(e.action, e.args["agent"]) for e in world.ledger.entries] == [
        ("note", "b"),
        ("refused", "b"),
        (AGENT_DONE_ACTION, "b"),
    ]


def test_a_seat_writes_to_the_worlds_current_ledger():
    world = Shared(("a",))
    seat = Seat(world, "a")
    world.ledger = AttributedLedger()  # a reset
    seat.ledger.append("x", {}, True)
    assert len(world.ledger) == 1


def _turns(world: Shared, max_turns: int = 3) -> TeamTurns:
    return TeamTurns(world, world.agents, EpisodeLimits(max_turns=max_turns), EndingText(), "all done")


def test_the_log_is_sealed_once_when_every_agent_has_finished():
    world = Shared(("a", "b"))
    turns = _turns(world)
    outcome, ended = turns.step("a", 'note("x"); done()')
    assert outcome.terminated and turns.done("a") and not ended and not turns.over
    _outcome, ended = turns.step("b", "done()")
    assert ended and turns.over and world.ledger.sealed
    assert world.ledger.entries[-1].args == {"entries": len(world.ledger) - 1, "reason": "all done"}
    assert [e.action for e in world.ledger.entries].count(AGENT_DONE_ACTION) == 2
    with pytest.raises(RuntimeError, match="over"):
        turns.step("a", "done()")


def test_out_of_turns_seals_with_its_own_reason():
    world = Shared(("a", "b"))
    turns = _turns(world, max_turns=1)
    assert turns.step("a", "done()")[1] is False
    outcome, ended = turns.step("b", 'note("x")')
    assert outcome.truncated and ended and not world.finished
    assert world.ledger.entries[-1].args["reason"] == "turn limit reached"
