"""Certificates of served episodes: what a server started with ``--sign-key`` vouches for.

At the end of each episode the server signs (:mod:`batchgate_gym.kernel.certificate`)
the facts :data:`SERVED_CERTIFIED` of the episode's result (:meth:`.episodes.SessionEpisode.result`):
the desk, the package version, the protocol, the source of the cases and its
digest, the case and its digest, the reset seed, the log's nonce, the desk's
settings, the log's head, the reward, the score and how the episode ended. The
client leaves with the result and its certificate, so a model's owner who played
through an evaluator's server holds rows that anyone with the server's public key
can check (:func:`check_served_result`): the certificate is that key's, it signs
exactly this result, and the result's log replays under its head to its score.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from batchgate_gym.kernel.certificate import CertificateError, TrustedKey, canonical_json

SERVED_KIND = "batchgate-served-episode/1"
SERVED_CERTIFIED = (
    "desk",
    "version",
    "protocol",
    "source",
    "source_digest",
    "case_id",
    "case_digest",
    "seed",
    "nonce",
    "settings",
    "log_head",
    "reward",
    "score",
    "terminated",
    "truncated",
)


def served_facts(result: Mapping[str, Any]) -> dict[str, Any]:
    """What a served episode's certificate signs: its kind and the result's :data:`SERVED_CERTIFIED`."""
    return {"kind": SERVED_KIND, **{name: result.get(name) for name in SERVED_CERTIFIED}}


def check_served_result(result: Mapping[str, Any], trusted: TrustedKey, case: Any, replay: Any) -> None:
    """Raise :class:`CertificateError` unless ``result`` carries ``trusted``'s certificate of
    exactly its facts, is a result of ``case``, and its log replays (``replay(case, log,
    head=...)``, the desk's) under its head to its score."""
    import json

    signed = trusted.verify(result.get("certificate"))
    held = json.loads(canonical_json(served_facts(result)))
    if signed != held:
        differing = sorted(name for name in set(signed) | set(held) if signed.get(name) != held.get(name))
        raise CertificateError(
            f"the certificate is genuine but signs another episode (differing: {', '.join(differing)})"
        )
    if result.get("case_digest") != case.digest:
        raise CertificateError(f"the result is not of case {case.case_id!r} (its case digest differs)")
    try:
        score = replay(case, result.get("log"), head=result.get("log_head"))
    except ValueError as exc:
        raise CertificateError(f"the result's log does not replay under its head: {exc}") from None
    if score.as_dict() != result.get("score"):
        raise CertificateError("the result's score is not what its log replays to")


__all__ = ["SERVED_CERTIFIED", "SERVED_KIND", "check_served_result", "served_facts"]
