"""The truth labels oracles are handed, looked up by what the oracle itself observed."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from batchgate_gym.desks.gate.cases import Case, load_cases
from batchgate_gym.desks.gate.world import prepare

ListingKey = tuple[tuple[str, str, int, str], ...]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the grader knows about one batch: defective or not, and a citation that counts."""

    defective: bool
    citation: tuple[str, str] | None = None


def listing_key(batches: Iterable[Mapping[str, Any]]) -> ListingKey:
    """What ``list_batches`` shows of a case, as a hashable key."""
    return tuple((b["batch_id"], b["table"], int(b["rows"]), b["source"]) for b in batches)


def content_key(listed: Iterable[Mapping[str, Any]], profiles: Mapping[str, Any]) -> str:
    """The listing and every batch's profile, as one digest."""
    listed = list(listed)
    shown = [listing_key(listed), [profiles[b["batch_id"]] for b in listed]]
    return hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()


class Truth:
    """Truth labels for oracles, looked up by what the oracle itself observed.

    Batch ids repeat across cases (the original fixture reuses ``B-0930-15-1`` in
    three cases, and procedural cases repeat whole listings), so verdicts are
    keyed by the listing plus every batch's profile, exactly as ``list_batches``
    and ``profile_batch`` return them. Oracles profile at a point where it earns
    them nothing (after acting, or when they act on nothing).
    """

    def __init__(self, by_content: Mapping[str, Mapping[str, Verdict]]) -> None:
        self._by_content = dict(by_content)

    def __len__(self) -> int:
        return len(self._by_content)

    @classmethod
    def from_cases(cls, cases: Iterable[Case | Mapping[str, Any]]) -> Truth:
        """Build from cases (or case dicts); two cases that look alike must agree."""
        table: dict[str, dict[str, Verdict]] = {}
        for case in (c if isinstance(c, Case) else load_cases([c])[0] for c in cases):
            prepared = prepare(case)
            listed = prepared.listing["batches"]
            # Through JSON, as an agent receives them.
            profiles = json.loads(json.dumps({b.batch_id: prepared.profile(b) for b in case.batches}))
            verdicts = {b.batch_id: verdict_of(b.truth) for b in case.batches}
            key = content_key(listed, profiles)
            if table.setdefault(key, verdicts) != verdicts:
                raise ValueError(f"two cases look alike but differ in truth ({case.case_id})")
        return cls(table)

    def verdicts(
        self, listed: Iterable[Mapping[str, Any]], profiles: Mapping[str, Any]
    ) -> dict[str, Verdict]:
        key = content_key(listed, profiles)
        if key not in self._by_content:
            raise KeyError("no truth for this case; build the Truth from the cases being played")
        return dict(self._by_content[key])


def verdict_of(truth: Any) -> Verdict:
    """A batch's verdict; its citation is the first defect the grader counts (else the
    smallest accepted citation)."""
    if not truth.defective:
        return Verdict(False)
    counted = [d for d in truth.defects if d in truth.citations]
    cited = counted[0] if counted else min(truth.citations, key=lambda c: (c.column, c.defect_type))
    return Verdict(True, (cited.column, cited.defect_type))


__all__ = ["ListingKey", "Truth", "Verdict", "content_key", "listing_key", "verdict_of"]
