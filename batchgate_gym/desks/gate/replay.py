"""Scoring a finished episode, live or from its log alone.

``score_live`` reads the world's own log and warehouse. ``replay`` needs nothing
but the case and an exported log: it checks the hash chain and seal against the
head the episode reported (or the log key), checks that the log begins by naming
this case, rebuilds the warehouse by re-running every executed load on a fresh
world with the settings the log recorded (checking each logged orphan count and
each query's tables read on the way), and grades that. The two must agree; a log
that was edited, cut short, invented or written for another case fails with
:class:`LogIntegrityError` instead of scoring.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from batchgate_gym.kernel.replay import reapply_all, replay_log
from batchgate_gym.kernel.sqlguard import SqlBudget

from .cases import Case
from .grader import Score, grade, read_facts
from .world import GateWorld


def score_live(world: GateWorld) -> Score:
    return _grade(world.case, world, world.ledger.entries)


def _grade(case: Case, world: GateWorld, entries: Sequence[Any]) -> Score:
    return grade(case, read_facts(case, entries), world.mart_usd(), world.prepared_case.reference_mart)


def replay(
    case: Case,
    entries: Sequence[Mapping[str, Any]],
    *,
    head: str | None = None,
    key: bytes | None = None,
    nonce: str | None = None,
    require_seal: bool = True,
) -> Score:
    """Recompute the score from the case and the exported log alone.

    ``head`` is the ``log_head`` the episode reported and ``key`` the ``log_key``
    the environment was given; one of them is required. Raises
    :class:`LogIntegrityError`, and nothing else, for any log that is not the
    untouched log of an episode played on ``case``.
    """
    return replay_log(
        entries,
        case.digest,
        make_world=lambda settings: fresh_world(case, settings),
        grade=lambda world, log: _grade(case, world, log),
        head=head,
        key=key,
        nonce=nonce,
        require_seal=require_seal,
    )


def fresh_world(case: Case, settings: Mapping[str, Any]) -> GateWorld:
    """A world reset to ``case`` under the settings a log's entry 0 recorded."""
    world = GateWorld(SqlBudget(**settings["sql_budget"]))
    world.reset(case)
    return world


def rebuild(case: Case, entries: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]) -> GateWorld:
    """Re-apply a verified log's entries to a fresh world with the log's settings."""
    return reapply_all(fresh_world(case, settings), entries)
