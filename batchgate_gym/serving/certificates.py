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

from collections.abc import Mapping, Sequence
from typing import Any

from batchgate_gym.kernel.certificate import CertificateError, TrustedKey, check_facts

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
    check_facts(trusted.verify(result.get("certificate")), served_facts(result))
    if result.get("case_digest") != case.digest:
        raise CertificateError(f"the result is not of case {case.case_id!r} (its case digest differs)")
    try:
        score = replay(case, result.get("log"), head=result.get("log_head"))
    except ValueError as exc:
        raise CertificateError(f"the result's log does not replay under its head: {exc}") from None
    if score.as_dict() != result.get("score"):
        raise CertificateError("the result's score is not what its log replays to")


def is_served_result(row: Mapping[str, Any]) -> bool:
    """A row that is a served episode's result (``batchgate verify`` tells them from run-model's)."""
    return "log_head" in row and "rollout" not in row


def served_case(row: Mapping[str, Any]) -> Any:
    """The case a served result was played on: from its source by id, or drawn again from its
    seed under its settings (a procedural case)."""
    from batchgate_gym.desks import registry

    desk = registry.get(str(row.get("desk")))
    source = row.get("source")
    if source:
        found = [case for case in desk.fixed_cases(source) if case.case_id == row.get("case_id")]
        if not found:
            raise CertificateError(f"no case {row.get('case_id')!r} in {source!r}")
        return found[0]
    settings = row.get("settings") or {}
    if not isinstance(row.get("seed"), int) or not isinstance(settings, Mapping):
        raise CertificateError("a procedural result names its seed and settings")
    (case,) = desk.procedural_cases([int(row["seed"])], **settings)
    return case


def verify_served_rows(
    rows: Sequence[tuple[int, Mapping[str, Any]]], trusted: TrustedKey, path: str
) -> list[str]:
    """Each served result's problem, ``PATH:LINE: ...``, checked as :func:`check_served_result`
    does ([] when every row verifies)."""
    import importlib

    problems = []
    for number, row in rows:
        try:
            replay = importlib.import_module(f"batchgate_gym.desks.{row.get('desk')}.replay").replay
            check_served_result(row, trusted, served_case(row), replay)
        except (CertificateError, ValueError, KeyError, TypeError, ImportError) as exc:
            problems.append(f"{path}:{number}: {exc}")
    return problems


__all__ = [
    "SERVED_CERTIFIED",
    "SERVED_KIND",
    "check_served_result",
    "is_served_result",
    "served_case",
    "served_facts",
    "verify_served_rows",
]
