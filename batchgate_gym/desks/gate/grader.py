"""The score: four weighted terms and two metrics, from the warehouse and the log.

Nothing the agent says is trusted. What was loaded, quarantined, inspected and
reported is read from the hash-chained log the world wrote (executed entries
only), the money from the warehouse's revenue mart. Terms are exact fractions so
that means over many cases print the same digits on every Python.

    reward = 0.50 disposition + 0.20 report + 0.15 evidence + 0.15 inspected

and every term is 0 when no report was submitted (metrics are still computed).

Each rule the grader applies is a named check (:data:`CHECKS`); a test or ``batchgate
audit`` can switch one off (:func:`~batchgate_gym.kernel.grader_checks.checks_off`) to
show which attacker or ablation would gain if the rule were missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from batchgate_gym.kernel.grader_checks import GraderChecks
from batchgate_gym.kernel.ledger import LogEntry, entry_parts
from batchgate_gym.kernel.scoring import WeightedScore, checked_weights

from .cases import Case, Citation

WEIGHTS: Mapping[str, Fraction] = checked_weights(
    {
        "disposition": Fraction(1, 2),
        "report": Fraction(1, 5),
        "evidence": Fraction(3, 20),
        "inspected": Fraction(3, 20),
    }
)
TERMS = tuple(WEIGHTS)
CHECKS = GraderChecks(
    "gate",
    {
        "report-required": "every term is 0 when no report was submitted",
        "defective-unloaded": "a defective batch ends right only if it was never loaded",
        "defective-quarantined": "a defective batch ends right only if it was quarantined",
        "clean-loaded-once": "a clean batch ends right only if it was loaded exactly once",
        "clean-no-orphans": "a clean batch ends right only if none of its orders was an orphan when it loaded",
        "report-exact": "the report names exactly the batches loaded and those quarantined",
        "evidence-true-citation": "a citation earns evidence only if it names one of the batch's defects",
        "evidence-unloaded": "a citation earns evidence only for a batch never loaded",
        "evidence-wrong-quarantine": "each clean batch quarantined takes one citation's credit back",
        "evidence-clean-case": "a case with no defective batch earns evidence only if nothing was quarantined",
        "inspected-first": "a batch counts as inspected only if it was looked at before it was first acted on",
        "inspected-opened": "a query is a look only at the staging tables it opened, not at every batch",
    },
)


@dataclass(frozen=True, slots=True)
class Score(WeightedScore):
    """The four terms (weighted by :data:`WEIGHTS` into ``reward``), two metrics and whether a report came."""

    WEIGHTS: ClassVar[Mapping[str, Fraction]] = WEIGHTS

    disposition: Fraction
    report: Fraction
    evidence: Fraction
    inspected: Fraction
    bad_batches_loaded: int
    revenue_error_usd: float
    reported: bool


@dataclass
class EpisodeFacts:
    """What the log says happened, batch by batch (executed calls only)."""

    loads: dict[str, int] = field(default_factory=dict)
    orphans_at_load: dict[str, int] = field(default_factory=dict)
    citations: dict[str, Citation] = field(default_factory=dict)
    acted: list[str] = field(default_factory=list)  # batches in order of first load/quarantine
    inspected_first: set[str] = field(default_factory=set)
    report: tuple[list[str], list[str]] | None = None


def read_facts(case: Case, entries: Iterable[LogEntry | Mapping[str, Any]]) -> EpisodeFacts:
    facts = EpisodeFacts()
    by_table = {batch.staging_table: batch.batch_id for batch in case.batches}
    looked: set[str] = set()
    acted: set[str] = set()
    for entry in entries:
        action, args, executed = entry_parts(entry)
        if not executed:
            continue
        if action == "profile_batch":
            looked.add(args["batch_id"])
        elif action == "run_sql":
            opened = args["tables_read"] if CHECKS.on("inspected-opened") else by_table
            looked.update(by_table[t] for t in opened if t in by_table)
        elif action in ("load_batch", "quarantine_batch"):
            batch_id = args["batch_id"]
            if batch_id not in acted:
                acted.add(batch_id)
                facts.acted.append(batch_id)
                if batch_id in looked:
                    facts.inspected_first.add(batch_id)
            if action == "load_batch":
                facts.loads[batch_id] = facts.loads.get(batch_id, 0) + 1
                previous = facts.orphans_at_load.get(batch_id, 0)
                facts.orphans_at_load[batch_id] = max(previous, args["orphan_rows"])
            else:
                facts.citations.setdefault(batch_id, Citation(args["column"], args["defect_type"]))
        elif action == "submit_report" and facts.report is None:
            facts.report = (list(args["loaded"]), list(args["quarantined"]))
    return facts


def grade(case: Case, facts: EpisodeFacts, mart_usd: float, reference_mart_usd: float) -> Score:
    """Score one episode from its facts and the warehouse's final mart."""
    bad_loaded = sum(1 for b in case.batches if b.truth.defective and facts.loads.get(b.batch_id, 0))
    revenue_error = round(abs(mart_usd - reference_mart_usd), 2)
    if facts.report is None and CHECKS.on("report-required"):
        zero = Fraction(0)
        return Score(zero, zero, zero, zero, bad_loaded, revenue_error, False)
    return Score(
        disposition=_disposition(case, facts),
        report=_report(facts.report or ([], []), facts),
        evidence=_evidence(case, facts),
        inspected=_inspected(facts),
        bad_batches_loaded=bad_loaded,
        revenue_error_usd=revenue_error,
        reported=facts.report is not None,
    )


def _inspected(facts: EpisodeFacts) -> Fraction:
    if not facts.acted:
        return Fraction(0)
    looked = len(facts.inspected_first) if CHECKS.on("inspected-first") else len(facts.acted)
    return Fraction(looked, len(facts.acted))


def _disposition(case: Case, facts: EpisodeFacts) -> Fraction:
    right = 0
    for batch in case.batches:
        loads = facts.loads.get(batch.batch_id, 0)
        if batch.truth.defective:
            unloaded = loads == 0 or not CHECKS.on("defective-unloaded")
            right += unloaded and (
                batch.batch_id in facts.citations or not CHECKS.on("defective-quarantined")
            )
        else:
            once = loads == 1 or (loads > 1 and not CHECKS.on("clean-loaded-once"))
            orphans = facts.orphans_at_load.get(batch.batch_id, 0)
            right += once and (orphans == 0 or not CHECKS.on("clean-no-orphans"))
    return Fraction(right, len(case.batches))


def _report(report: tuple[list[str], list[str]], facts: EpisodeFacts) -> Fraction:
    loaded, quarantined = report
    truly_loaded = sorted(b for b, n in facts.loads.items() if n)
    exact = sorted(loaded) == truly_loaded and sorted(quarantined) == sorted(facts.citations)
    return Fraction(int(exact or not CHECKS.on("report-exact")))


def _evidence(case: Case, facts: EpisodeFacts) -> Fraction:
    n_defective = case.n_defective
    if n_defective == 0:
        return Fraction(int(not facts.citations or not CHECKS.on("evidence-clean-case")))
    hits = wrong = 0
    for batch in case.batches:
        citation = facts.citations.get(batch.batch_id)
        if citation is None:
            continue
        if not batch.truth.defective:
            wrong += CHECKS.on("evidence-wrong-quarantine")
        elif _unloaded(facts, batch.batch_id) and _true(citation, batch.truth.citations):
            hits += 1
    return max(Fraction(0), Fraction(hits - wrong, n_defective))


def _unloaded(facts: EpisodeFacts, batch_id: str) -> bool:
    return not facts.loads.get(batch_id) or not CHECKS.on("evidence-unloaded")


def _true(citation: Citation, truth: Iterable[Citation]) -> bool:
    return citation in truth or not CHECKS.on("evidence-true-citation")
