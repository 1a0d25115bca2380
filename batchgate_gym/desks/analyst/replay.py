"""Scoring a finished episode: live, or from an exported log pinned by its head or key.

``score_live`` grades the world's own log, re-running the cited evidence on the
world's stores. ``replay`` needs only the case and an exported log: through the
kernel's replay driver it checks the chain against the head (or key), that entry 0
names this case, rebuilds the desk (fresh stores of the same snapshot) and grades it
with the same :func:`~.grader.grade`; anything else raises
:class:`~batchgate_gym.kernel.ledger.LogIntegrityError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from batchgate_gym.kernel.ledger import LogIntegrityError
from batchgate_gym.kernel.replay import replay_log

from .cases import AnalystCase
from .grader import AnalystScore, grade
from .world import AnalystWorld


def score_live(world: AnalystWorld) -> AnalystScore:
    return graded(world, world.ledger.entries)


def graded(world: AnalystWorld, entries: Sequence[Any]) -> AnalystScore:
    """The score of ``world``'s episode from ``entries``: the cited evidence re-run as one
    action of its own (its queries share one action's budget), live and in a replay alike."""
    world.begin_action()
    return grade(world.case, entries, world.store)


def fresh_world(case: AnalystCase, settings: Mapping[str, Any]) -> AnalystWorld:
    if dict(settings) != {}:
        raise LogIntegrityError("entry 0: the settings are not those of an analyst desk")
    world = AnalystWorld()
    world.reset(case)
    return world


def replay(
    case: AnalystCase,
    log: Sequence[Mapping[str, Any]],
    *,
    head: str | None = None,
    key: bytes | None = None,
    nonce: str | None = None,
) -> AnalystScore:
    """Recompute the score from the case and the exported log alone (``head`` or ``key`` required)."""
    worlds: list[AnalystWorld] = []

    def make(settings: Mapping[str, Any]) -> AnalystWorld:
        worlds.append(fresh_world(case, settings))
        return worlds[-1]

    try:
        return replay_log(
            log,
            case.digest,
            make_world=make,
            grade=graded,
            head=head,
            key=key,
            nonce=nonce,
        )
    finally:
        for world in worlds:
            world.close()


__all__ = ["fresh_world", "replay", "score_live"]
