"""What a results file vouches for: its run's manifest, each row's provenance, their certificates.

A run of ``batchgate run-model`` writes, in ``OUT.meta.json``, a **manifest**: what
it was asked to play (the desk, the source of the cases and its digest, how the
cases were picked and which, the rollouts per case, the settings and their key,
the package version). Its digest (:func:`manifest_digest`) is in every row
(``run``), so a row says which run it belongs to, and ``batchgate report
--results`` holds the rows to it: every planned (case, rollout) is there, and no
row is outside it.

Each row carries its **provenance** (:data:`ROW_CERTIFIED`): the package version,
desk, source and its digest, case and its digest, reset seed, the log's nonce,
settings key, model, sampling arguments and mode, with what the episode ended in
(its head, score, ending, error). Given a key (``run-model --sign-key``), the run
signs the manifest and each row's provenance (:mod:`batchgate_gym.kernel.certificate`):
the process that ran the world vouches for it, which no replay can do.

The **source digest** of a list of cases is the SHA-256 of their digests, one per
line in order (:func:`source_digest`): a shipped split's is fixed by the package
that ships it, and a case file's changes with any edit to any case.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from typing import Any

from batchgate_gym.kernel.certificate import (
    CertificateError,
    TrustedKey,
    canonical_json,
    check_facts,
    source_digest,
)

EPISODE_KIND = "batchgate-episode/1"
RUN_KIND = "batchgate-run/1"

ROW_CERTIFIED = (
    "desk",
    "version",
    "source",
    "source_digest",
    "case_index",
    "case_id",
    "case_digest",
    "rollout",
    "seed",
    "nonce",
    "model",
    "mode",
    "settings_key",
    "sampling",
    "system_prompt",
    "run",
    "ended",
    "head",
    "score",
    "error",
)
"""The fields of a ``run-model`` row that its certificate signs, as the row holds them."""

ROLLOUT_SEED_STRIDE = 2**32
"""Rollout r of case i resets with seed ``i + r * ROLLOUT_SEED_STRIDE``: for a case named by
index the seed draws nothing, and gives each rollout an episode nonce of its own."""


def rollout_seed(case_index: int, rollout: int) -> int:
    return case_index + rollout * ROLLOUT_SEED_STRIDE


def selection_of(
    n: int | None, case_ids: Sequence[str], sample: int | None, sample_seed: int
) -> dict[str, Any]:
    """How a run picked its cases, as its manifest records it."""
    if case_ids:
        return {"how": "ids"}
    if sample is not None:
        return {"how": "sample", "n": sample, "seed": sample_seed}
    if n is not None:
        return {"how": "first", "n": n}
    return {"how": "all"}


def selected_indices(selection: Mapping[str, Any], total: int) -> list[int] | None:
    """The case indices a selection picks out of ``total`` cases (None for cases picked by id)."""
    how = selection.get("how")
    if how == "all":
        return list(range(total))
    if how == "first":
        return list(range(min(int(selection["n"]), total)))
    if how == "sample":
        n = int(selection["n"])
        if n > total:
            return None
        return sorted(random.Random(int(selection["seed"])).sample(range(total), n))
    return None


def selection_text(selection: Mapping[str, Any], total: int | None = None) -> str:
    """How a run picked its cases, in words (``total``: the cases its source holds)."""
    how = selection.get("how")
    if how == "first" and total is not None and int(selection.get("n") or 0) >= total:
        return "all"
    if how == "first":
        return f"the first {selection.get('n')}"
    if how == "sample":
        return f"{selection.get('n')} drawn at random, seed {selection.get('seed')}"
    if how == "ids":
        return "picked by id"
    return "all"


def build_manifest(
    *,
    desk: str,
    version: str,
    source: str,
    source_kind: str,
    digest: str,
    total: int,
    selection: Mapping[str, Any],
    case_ids: Sequence[str],
    rollouts: int,
    settings: Mapping[str, Any],
    settings_key: str,
) -> dict[str, Any]:
    """What a run was asked to play (see the module text)."""
    return {
        "kind": RUN_KIND,
        "desk": desk,
        "version": version,
        "source": source,
        "source_kind": source_kind,
        "source_digest": digest,
        "source_cases": total,
        "selection": dict(selection),
        "case_ids": list(case_ids),
        "rollouts": rollouts,
        "settings": dict(settings),
        "settings_key": settings_key,
    }


def manifest_digest(manifest: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(dict(manifest)).encode("ascii")).hexdigest()


def planned_pairs(manifest: Mapping[str, Any]) -> list[tuple[str, int]]:
    """Every (case id, rollout) a manifest asks for, in order."""
    return [(case_id, r) for case_id in manifest["case_ids"] for r in range(int(manifest["rollouts"]))]


def row_facts(row: Mapping[str, Any]) -> dict[str, Any]:
    """What a row's certificate signs: its kind and the row's :data:`ROW_CERTIFIED` fields."""
    return {"kind": EPISODE_KIND, **{name: row.get(name) for name in ROW_CERTIFIED}}


def check_row_certificate(row: Mapping[str, Any], trusted: TrustedKey) -> None:
    """Raise :class:`CertificateError` unless the row's certificate is ``trusted``'s and signs
    exactly the row's provenance and outcome."""
    check_facts(trusted.verify(row.get("certificate")), row_facts(row))


def check_manifest_certificate(meta: Mapping[str, Any], trusted: TrustedKey) -> None:
    """Raise :class:`CertificateError` unless the meta file's manifest is signed by ``trusted``."""
    facts = trusted.verify(meta.get("manifest_certificate"))
    if facts != meta.get("manifest"):
        raise CertificateError("the manifest's certificate signs another manifest")


__all__ = [
    "EPISODE_KIND",
    "ROLLOUT_SEED_STRIDE",
    "ROW_CERTIFIED",
    "RUN_KIND",
    "build_manifest",
    "check_manifest_certificate",
    "check_row_certificate",
    "manifest_digest",
    "planned_pairs",
    "rollout_seed",
    "row_facts",
    "selected_indices",
    "selection_of",
    "selection_text",
    "source_digest",
]
