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

from batchgate_gym.kernel.ledger import LogIntegrityError
from batchgate_gym.kernel.replay import replay_verified
from batchgate_gym.kernel.sqlguard import SqlBudget, SqlRefused

from .cases import Case
from .grader import Score, grade, read_facts
from .world import GateWorld


def score_live(world: GateWorld) -> Score:
    case = world.case
    facts = read_facts(case, world.ledger.entries)
    return grade(case, facts, world.mart_usd(), world.prepared.reference_mart)


def replay(
    case: Case,
    entries: Sequence[Mapping[str, Any]],
    *,
    head: str | None = None,
    key: bytes | None = None,
    require_seal: bool = True,
) -> Score:
    """Recompute the score from the case and the exported log alone.

    ``head`` is the ``log_head`` the episode reported and ``key`` the ``log_key``
    the environment was given; one of them is required. Raises
    :class:`LogIntegrityError`, and nothing else, for any log that is not the
    untouched log of an episode played on ``case``.
    """

    def rederive(log: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]) -> Score:
        world = rebuild(case, log, settings)
        facts = read_facts(case, log)
        return grade(case, facts, world.mart_usd(), world.prepared.reference_mart)

    return replay_verified(entries, case.digest, rederive, head=head, key=key, require_seal=require_seal)


def rebuild(case: Case, entries: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]) -> GateWorld:
    """Re-run a verified log's executed loads on a fresh world with the log's settings."""
    world = GateWorld(SqlBudget(**settings["sql_budget"]))
    world.reset(case)
    for entry in entries:
        if entry["action"] == "run_sql" and entry["executed"] is True:
            _check_tables_read(world, entry)
        if entry["action"] != "load_batch" or entry["executed"] is not True:
            continue
        batch = case.batch(entry["args"]["batch_id"])
        if batch is None:
            raise LogIntegrityError(f"entry {entry['seq']}: loads a batch the case does not have")
        if world.orphans_now(batch) != entry["args"]["orphan_rows"]:
            raise LogIntegrityError(f"entry {entry['seq']}: orphan count disagrees with the warehouse")
        world.insert(batch)
    return world


def _check_tables_read(world: GateWorld, entry: Mapping[str, Any]) -> None:
    """A logged ``tables_read`` must be what the query reads, by the guard's one definition."""
    query, logged = entry["args"].get("query"), entry["args"].get("tables_read")
    try:
        real = world.guard.tables_read(query)
    except SqlRefused:
        real = None  # a query that cannot be compiled was not executed
    if real is None or not isinstance(logged, list) or real != tuple(logged):
        raise LogIntegrityError(f"entry {entry['seq']}: tables_read disagrees with the query")
