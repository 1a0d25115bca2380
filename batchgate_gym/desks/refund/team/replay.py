"""The team's score recomputed from the case and the exported shared log alone.

Entry 0 of a team log records the desk's settings, the workers and the deal; the
kernel's replay driver verifies the chain and the seal against the pinned head (or
the key), rebuilds the team desk from those settings, re-applies every entry as the
worker it names (claims, payments, voids, replies) and grades the result as the
live game does. Any edited, cut, re-chained or foreign log raises
:class:`~batchgate_gym.kernel.ledger.LogIntegrityError` and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from batchgate_gym.kernel.ledger import LogIntegrityError
from batchgate_gym.kernel.replay import replay_log

from ..cases import RefundCase
from .grader import TeamScore, grade_team
from .world import RefundTeamWorld

_SETTINGS = {"rules", "hints", "workers", "lists"}


def _team_world(case: RefundCase, settings: Mapping[str, Any]) -> RefundTeamWorld:
    if set(settings) - {"recovery"} != _SETTINGS or settings.get("recovery", True) is not True:
        raise LogIntegrityError("entry 0: the settings are not those of a refund team")
    if settings["hints"] is not False:
        raise LogIntegrityError("entry 0: a team desk gives no hints")
    try:
        world = RefundTeamWorld(
            settings["workers"], rules=settings["rules"], recovery=settings.get("recovery", False)
        )
        world.reset(case, settings["lists"])
    except (TypeError, ValueError) as exc:
        raise LogIntegrityError(f"entry 0: {exc}") from None
    return world


def replay_team(
    case: RefundCase,
    log: Sequence[Mapping[str, Any]],
    *,
    head: str | None = None,
    key: bytes | None = None,
    nonce: str | None = None,
) -> TeamScore:
    """The team score of ``log`` on ``case``; ``head`` (the reported ``log_head``) or ``key`` required."""
    return replay_log(
        log,
        case.digest,
        make_world=lambda settings: _team_world(case, settings),
        grade=lambda world, entries: grade_team(case, entries, world.rules, world.lists, verified=True),
        head=head,
        key=key,
        nonce=nonce,
    )


__all__ = ["replay_team"]
