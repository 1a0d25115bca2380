"""Scoring a finished episode: live, from a pinned log, or from an exported log as given.

``score_live`` grades the world's own log and payment record. ``replay`` needs only
the case and an exported log: through the kernel's replay driver it checks the hash
chain and seal against the head the episode reported (or the log key), checks that
the log begins by naming this case, rebuilds the desk from the settings entry 0
recorded by re-applying every entry (each payment must be one the desk would have
made), and grades that; any log that was edited, cut short, re-chained or written
for another case fails with :class:`~batchgate_gym.kernel.ledger.LogIntegrityError`
and nothing else.

``grade_exported`` scores a log as someone hands it in after the episode, edits and
all, the way each rule set would: under ``rules="original"`` verification is only
the hash chain and its links (so an edited log that was re-chained verifies, as it
did for the original grader); under the default rules the log must end with the
seal and verify against the pinned ``head`` (or ``key`` with the episode's
``nonce``), else every term is 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from batchgate_gym.kernel.ledger import LogIntegrityError, verify_chain
from batchgate_gym.kernel.replay import replay_log

from .cases import RefundCase
from .grader import RefundScore, grade
from .world import RULES, Payment, RefundWorld


def score_live(world: RefundWorld) -> RefundScore:
    """The score of the world's episode from its own log and payment record.

    The live log is the desk's own, every entry written by its ledger from a call the
    desk ran, so its chain is not walked again here (it is where a log leaves the
    environment: export, replay, results files); the default rules still ask for the seal.
    """
    ledger = world.ledger
    verified = world.original or ledger.sealed
    return grade(world.case, ledger.entries, world.rules, verified=verified, payments=world.payments)


def fresh_world(case: RefundCase, settings: Mapping[str, Any]) -> RefundWorld:
    """A desk reset to ``case`` under the settings a log's entry 0 recorded."""
    if set(settings) - {"recovery"} != {"rules", "hints"} or settings.get("recovery", True) is not True:
        raise LogIntegrityError("entry 0: the settings are not those of a refund desk")
    try:
        world = RefundWorld(**settings)
    except ValueError as exc:
        raise LogIntegrityError(f"entry 0: {exc}") from None
    world.reset(case)
    return world


def replay(
    case: RefundCase,
    log: Sequence[Mapping[str, Any]],
    *,
    head: str | None = None,
    key: bytes | None = None,
    nonce: str | None = None,
) -> RefundScore:
    """Recompute the score from the case and the exported log alone.

    ``head`` is the ``log_head`` the episode reported, ``key`` the log key the world
    was given and ``nonce`` the ``log_nonce`` the episode reported; ``head``, or
    ``key`` with ``nonce``, is required. Raises ``LogIntegrityError``, and
    nothing else, for any log that is not the untouched, sealed log of an episode
    played on ``case``.
    """
    return replay_log(
        log,
        case.digest,
        make_world=lambda settings: fresh_world(case, settings),
        grade=lambda world, entries: grade(
            case, entries, world.rules, verified=True, payments=world.payments
        ),
        head=head,
        key=key,
        nonce=nonce,
    )


def grade_exported(
    case: RefundCase,
    log: object,
    rules: str,
    *,
    head: str | None = None,
    key: bytes | None = None,
    nonce: str | None = None,
    payments: Sequence[Payment] | None = None,
) -> RefundScore:
    """Grade an exported log as it stands (see the module text for what each rule set checks).

    ``payments`` is the desk's own record (``world.payments``), which the default
    rules report their metrics from when the log fails; without it they come from the
    log's payment entries as the desk wrote them.
    """
    if rules not in RULES:
        raise ValueError(f"rules must be one of {list(RULES)}, not {rules!r}")
    entries = log if isinstance(log, (list, tuple)) else []
    try:
        if rules == "original":
            verify_chain(entries, require_seal=False, key=key)
        else:
            if head is None and (key is None or nonce is None):
                raise LogIntegrityError("no head, nor a key and the episode's nonce, to pin the log to")
            verify_chain(entries, require_seal=True, head=head, key=key, case_digest=case.digest, nonce=nonce)
        verified = isinstance(log, (list, tuple))
    except LogIntegrityError:
        verified = False
    return grade(case, entries, rules, verified=verified, payments=payments)


__all__ = ["fresh_world", "grade_exported", "replay", "score_live"]
