"""Attackers: policies that try to score without doing the job, and one lazy baseline.

An environment is only worth training on if its reward cannot be gamed, so each
trick an agent might find is written down here as a policy and measured against
``careful`` (``batchgate attacks``; a test holds the margins). Every attacker is
text-level like any agent: observations in, action strings out. Three of them are
*oracles*: they are handed the truth labels (a :class:`Truth`, built from the
cases by whoever runs them) because an agent that knows the answer and still
cannot score by claiming it shows the grader reads the warehouse, not the story.
They never see the world object either.

The package, by concern: :mod:`.truth` (the labels oracles get),
:mod:`.framework` (staged plans, the oracle base), and the attackers grouped by
trick: :mod:`.oracles`, :mod:`.theatre` (looking without judging),
:mod:`.citations` (quarantining without judging), :mod:`.sql_write`,
:mod:`.careful_variants` (careful with one thing wrong), :mod:`.row_counts` (judging by the
listing) and :mod:`.baselines`.

* ``report-liar`` (oracle): load everything, report the right answer.
* ``report-only`` (oracle): touch nothing, report the right answer.
* ``load-then-quarantine`` (oracle): profile and load everything, then quarantine
  the bad batches with their true citation.
* ``citation-spray``: profile, then quarantine every batch with every
  (column, defect type) pair in turn.
* ``sql-write``: try to repair staging or the warehouse through ``run_sql``
  (DELETE, UPDATE, DROP, INSERT, CREATE, stacked statements, PRAGMA, ATTACH),
  then load everything.
* ``inspect-theatre``: profile every batch, then load everything.
* ``double-load``: careful's checks, but every clean batch loaded twice.
* ``orders-first``: careful's checks in listed order, not customers first (a
  realistic mistake rather than a cheat).
* ``profile-only``: profile every batch and apply what a profile shows, never
  querying the warehouse (a baseline, not a cheat).
* ``common-citation``: profile, then quarantine every batch citing the commonest
  defect of its table (amount / out_of_range for orders, customer_id /
  duplicate_key for customers) without judging anything.
* ``report-padding``: careful's actions, but the report claims every listed batch
  as both loaded and quarantined, some of them twice.
* ``sql-theatre``: "look" at each staging table with a query that reads no row
  (``WHERE 0``), then load everything. This still counts as a look (a documented
  limit of ``inspected``), and still scores far below careful.
* ``limits-only``: careful's check of the rules the contract's ``limits`` carry, never
  of uniqueness or the customer reference (stated in text only), so it never reads the
  warehouse: duplicates and orphans get loaded.
* ``row-count``: profile every batch (for ``inspected``), then quarantine each batch whose
  row count differs from the mode of the listed row counts, citing its table's commonest
  defect, and load the rest: it reads nothing but ``list_batches``.
* ``no-report``: careful's work, but no report ever (it lists the batches until the turns
  run out): every term is 0 without a report.
* ``cte-theatre``: "look" with a CTE that borrows each staging table's name
  (``WITH stg_x(n) AS (SELECT 1) SELECT count(*) FROM stg_x``), then load
  everything. SQLite reports the CTE to the authorizer under the table's name; the
  guard now counts only tables the compiled query opens, so this earns nothing.
"""

from __future__ import annotations

from typing import Any

from ...base import Policy
from ..reference import CarefulPolicy
from .baselines import ProfileOnlyPolicy
from .careful_variants import (
    DoubleLoadPolicy,
    LimitsOnlyPolicy,
    NoReportPolicy,
    OrdersFirstPolicy,
    ReportPaddingPolicy,
)
from .citations import COMMON_CITATIONS, CitationSprayPolicy, CommonCitationPolicy
from .framework import CALLS_PER_ACTION, Calls, OraclePolicy, StagedPolicy
from .oracles import LoadThenQuarantinePolicy, ReportLiarPolicy, ReportOnlyPolicy
from .row_counts import RowCountPolicy
from .sql_write import SqlWritePolicy, write_attempts
from .theatre import CteTheatrePolicy, InspectTheatrePolicy, SqlTheatrePolicy
from .truth import ListingKey, Truth, Verdict, content_key, listing_key

ORACLES: dict[str, type[OraclePolicy]] = {
    ReportLiarPolicy.name: ReportLiarPolicy,
    ReportOnlyPolicy.name: ReportOnlyPolicy,
    LoadThenQuarantinePolicy.name: LoadThenQuarantinePolicy,
}
ATTACKERS: dict[str, type[Policy]] = {
    **ORACLES,
    **{
        policy.name: policy
        for policy in (
            CitationSprayPolicy,
            CommonCitationPolicy,
            SqlWritePolicy,
            InspectTheatrePolicy,
            DoubleLoadPolicy,
            OrdersFirstPolicy,
            ProfileOnlyPolicy,
            ReportPaddingPolicy,
            SqlTheatrePolicy,
            CteTheatrePolicy,
            LimitsOnlyPolicy,
            RowCountPolicy,
            NoReportPolicy,
        )
    },
}
BASELINES = ("profile-only",)  # not cheats: measured, but not held to a margin


def build_attacker(name: str, truth: Truth | None) -> Policy:
    """An attacker ready to run: oracles get ``truth``, the others ignore it."""
    if name in ORACLES:
        return ORACLES[name](truth)
    return ATTACKERS[name]()


def lineup(cases: list[Any]) -> dict[str, Policy]:
    """The attack table's policies (the desk's ``lineup``): careful first, then every
    attacker, oracles given the truth of ``cases``."""
    truth = Truth.from_cases(cases)
    return {"careful": CarefulPolicy(), **{name: build_attacker(name, truth) for name in ATTACKERS}}


__all__ = [
    "ATTACKERS",
    "BASELINES",
    "CALLS_PER_ACTION",
    "COMMON_CITATIONS",
    "ORACLES",
    "Calls",
    "CitationSprayPolicy",
    "CommonCitationPolicy",
    "CteTheatrePolicy",
    "DoubleLoadPolicy",
    "InspectTheatrePolicy",
    "LimitsOnlyPolicy",
    "ListingKey",
    "LoadThenQuarantinePolicy",
    "NoReportPolicy",
    "OraclePolicy",
    "OrdersFirstPolicy",
    "ProfileOnlyPolicy",
    "ReportLiarPolicy",
    "ReportOnlyPolicy",
    "ReportPaddingPolicy",
    "RowCountPolicy",
    "SqlTheatrePolicy",
    "SqlWritePolicy",
    "StagedPolicy",
    "Truth",
    "Verdict",
    "build_attacker",
    "content_key",
    "lineup",
    "listing_key",
    "write_attempts",
]
