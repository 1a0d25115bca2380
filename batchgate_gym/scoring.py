"""Scoring a finished episode, live or from its log alone.

``score_live`` reads the world's own log and warehouse. ``replay`` needs nothing
but the case and an exported log: it checks the hash chain and seal, rebuilds the
warehouse by re-running every executed load on a fresh world (checking each
logged orphan count on the way), and grades that. The two must agree; a log that
was edited, cut short or invented fails the check instead of scoring.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .cases import Case
from .grader import Score, grade, read_facts
from .kernel.ledger import LogIntegrityError, verify_chain
from .kernel.sqlguard import SqlRefused
from .world import GateWorld


def score_live(world: GateWorld) -> Score:
    case = world.case
    facts = read_facts(case, world.ledger.entries)
    return grade(case, facts, world.mart_usd(), world.prepared.reference_mart)


def replay(
    case: Case, entries: Sequence[Mapping[str, Any]], *, require_seal: bool = True, head: str | None = None
) -> Score:
    """Recompute the score from the case and the exported log alone.

    ``head`` is the ``log_head`` the episode reported: without it a log edited and
    then re-hashed from the edit on still verifies, with it nothing does.
    """
    world = rebuild(case, entries, require_seal=require_seal, head=head)
    try:
        facts = read_facts(case, entries)
        return grade(case, facts, world.mart_usd(), world.prepared.reference_mart)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise LogIntegrityError(f"an entry's arguments are malformed ({exc!r})") from exc


def rebuild(
    case: Case, entries: Sequence[Mapping[str, Any]], *, require_seal: bool = True, head: str | None = None
) -> GateWorld:
    """Check the log's chain, then re-run its executed loads on a fresh world."""
    verify_chain(entries, require_seal=require_seal, head=head)
    world = GateWorld()
    world.reset(case)
    for entry in entries:
        if entry.get("action") == "run_sql" and entry.get("executed") is True:
            _check_tables_read(world, entry)
        if entry.get("action") != "load_batch" or entry.get("executed") is not True:
            continue
        batch = case.batch(str(entry["args"].get("batch_id")))
        if batch is None:
            raise LogIntegrityError(f"entry {entry['seq']}: loads a batch the case does not have")
        if world.orphans_now(batch) != entry["args"].get("orphan_rows"):
            raise LogIntegrityError(f"entry {entry['seq']}: orphan count disagrees with the warehouse")
        world.insert(batch)
    return world


def _check_tables_read(world: GateWorld, entry: Mapping[str, Any]) -> None:
    """A logged ``tables_read`` must be what the query really reads (it earns ``inspected``)."""
    query, logged = entry["args"].get("query"), entry["args"].get("tables_read")
    try:
        real = world.guard.tables_read(query) if isinstance(query, str) else None
    except SqlRefused:
        real = None  # a query that cannot run was not executed
    if real is None or not isinstance(logged, list) or real != tuple(logged):
        raise LogIntegrityError(f"entry {entry['seq']}: tables_read disagrees with the query")
