"""The team's score, and each agent's own part in it, read from the one shared log.

The team is graded like one agent over all batches (the single-agent
:func:`read_facts` and :func:`grade` on the whole log): disposition and evidence
unchanged, and inspected counts a batch only if the agent that first acted on it
had looked at it itself. The report term is the share of agents whose report is
exactly true to their own loads and quarantines, judged by the single-agent rule
on that agent's entries alone. Until every agent has reported, nothing counts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from batchgate_gym.kernel.ledger import LogEntry, LogIntegrityError, entry_parts
from batchgate_gym.kernel.replay import replay_log
from batchgate_gym.kernel.team import AGENT_KEY

from ..cases import Case, Citation
from ..grader import EpisodeFacts, Score, grade, read_facts
from ..replay import fresh_world
from ..world import GateWorld
from .world import ASSIGN_ACTION

Entry = LogEntry | Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class AgentContribution:
    """What one agent did, from its own executed entries."""

    agent: str
    reported: bool
    report_true: bool
    loaded: tuple[str, ...]
    quarantined: tuple[str, ...]
    claimed: tuple[str, ...]
    bad_batches_loaded: int  # defective batches this agent loaded
    repeat_loads: int  # loads of a batch that was already in the warehouse
    orphan_loads: int  # orders loads with rows whose customer was not there yet
    wrong_citations: tuple[str, ...]  # defect types of its quarantines that earn no evidence
    refused_calls: int

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        for name in ("loaded", "quarantined", "claimed", "wrong_citations"):
            out[name] = list(out[name])
        return out


@dataclass(frozen=True, slots=True)
class TeamScore:
    score: Score
    agents: dict[str, AgentContribution]


def agent_of(entry: Entry) -> str | None:
    return entry_parts(entry)[1].get(AGENT_KEY)


def grade_team(
    case: Case, entries: Sequence[Entry], agents: Sequence[str], mart_usd: float, reference_mart_usd: float
) -> TeamScore:
    own = {agent: [e for e in entries if agent_of(e) == agent] for agent in agents}
    facts = read_facts(case, entries)
    per_agent = {agent: read_facts(case, own[agent]) for agent in agents}
    facts.inspected_first = _inspected_by_first_actor(facts, per_agent, entries)
    if any(per_agent[agent].report is None for agent in agents):
        facts.report = None  # no credit until every agent has reported
    truthful = {
        agent: per_agent[agent].report is not None
        and grade(case, per_agent[agent], mart_usd, reference_mart_usd).report == 1
        for agent in agents
    }
    score = grade(case, facts, mart_usd, reference_mart_usd)
    if score.reported:
        score = dataclasses.replace(score, report=Fraction(sum(truthful.values()), len(agents)))
    contributions = {
        agent: _contribution(case, agent, own[agent], per_agent[agent], truthful[agent], entries)
        for agent in agents
    }
    return TeamScore(score, contributions)


def replay_team(
    case: Case,
    entries: Sequence[Mapping[str, Any]],
    *,
    head: str | None = None,
    key: bytes | None = None,
    nonce: str | None = None,
) -> TeamScore:
    """The team score from the case and the exported log alone (agents read from the log).

    Verified like a single-agent replay: ``head`` (the ``log_head`` the game reported)
    or ``key`` (its ``log_key``) is required, and any log that is not the untouched
    log of a game played on ``case`` raises :class:`LogIntegrityError`.
    """

    def grade_rebuilt(world: GateWorld, log: Sequence[Mapping[str, Any]]) -> TeamScore:
        if len(log) < 2 or log[1]["action"] != ASSIGN_ACTION:
            raise LogIntegrityError("entry 1: a team log deals the agents their lists first")
        agents = list(log[1]["args"]["lists"])
        return grade_team(case, log, agents, world.mart_usd(), world.prepared_case.reference_mart)

    return replay_log(
        entries,
        case.digest,
        make_world=lambda settings: fresh_world(case, settings),
        grade=grade_rebuilt,
        head=head,
        key=key,
        nonce=nonce,
    )


def _inspected_by_first_actor(
    facts: EpisodeFacts, per_agent: Mapping[str, EpisodeFacts], entries: Iterable[Entry]
) -> set[str]:
    """Batches whose first load or quarantine came from an agent that had looked at them."""
    first_actor: dict[str, str | None] = {}  # None: an entry that names no agent
    for entry in entries:
        action, args, executed = entry_parts(entry)
        if executed and action in ("load_batch", "quarantine_batch"):
            first_actor.setdefault(args["batch_id"], args.get(AGENT_KEY))
    return {
        batch_id
        for batch_id in facts.acted
        if (actor := first_actor[batch_id]) is not None
        and actor in per_agent
        and batch_id in per_agent[actor].inspected_first
    }


def _executed(entries: Iterable[Entry], action: str) -> list[Mapping[str, Any]]:
    """The args of every executed ``action`` entry, in log order."""
    parts = (entry_parts(entry) for entry in entries)
    return [args for name, args, executed in parts if name == action and executed]


def _contribution(
    case: Case,
    agent: str,
    own: Sequence[Entry],
    facts: EpisodeFacts,
    truthful: bool,
    entries: Sequence[Entry],
) -> AgentContribution:
    loaded = sorted(batch_id for batch_id, n in facts.loads.items() if n)
    # A second quarantine of a batch is refused, so an agent's citations are the
    # batches it was first to quarantine.
    quarantined = sorted(facts.citations)
    return AgentContribution(
        agent=agent,
        reported=facts.report is not None,
        report_true=truthful,
        loaded=tuple(loaded),
        quarantined=tuple(quarantined),
        claimed=tuple(args["batch_id"] for args in _executed(own, "claim_batch")),
        bad_batches_loaded=sum(case.batch_index[b].truth.defective for b in loaded),
        repeat_loads=_repeat_loads(agent, entries),
        orphan_loads=sum(1 for args in _executed(own, "load_batch") if args["orphan_rows"]),
        wrong_citations=tuple(
            facts.citations[b].defect_type for b in quarantined if not _counts(case, b, facts.citations[b])
        ),
        refused_calls=sum(1 for entry in own if not entry_parts(entry)[2]),
    )


def _counts(case: Case, batch_id: str, citation: Citation) -> bool:
    """Whether a quarantine cites a real defect the batch's truth accepts."""
    truth = case.batch_index[batch_id].truth
    return truth.defective and citation in truth.citations


def _repeat_loads(agent: str, entries: Iterable[Entry]) -> int:
    """This agent's loads of a batch that some agent had loaded before."""
    seen: set[str] = set()
    repeats = 0
    for args in _executed(entries, "load_batch"):
        repeats += args["batch_id"] in seen and args.get(AGENT_KEY) == agent
        seen.add(args["batch_id"])
    return repeats


__all__ = ["AgentContribution", "TeamScore", "agent_of", "grade_team", "replay_team"]
