"""Attackers: policies that try to score without doing the job, and one lazy baseline.

An environment is only worth training on if its reward cannot be gamed, so each
trick an agent might find is written down here as a policy and measured against
``careful`` (``batchgate attacks``; a test holds the margins). Every attacker is
text-level like any agent: observations in, action strings out. Three of them are
*oracles*: they are handed the truth labels (a :class:`Truth`, built from the
cases by whoever runs them) because an agent that knows the answer and still
cannot score by claiming it shows the grader reads the warehouse, not the story.
They never see the world object either.

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
* ``cte-theatre``: "look" with a CTE that borrows each staging table's name
  (``WITH stg_x(n) AS (SELECT 1) SELECT count(*) FROM stg_x``), then load
  everything. SQLite reports the CTE to the authorizer under the table's name; the
  guard now counts only tables the compiled query opens, so this earns nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from batchgate_gym.desks.gate.cases import Case, load_cases
from batchgate_gym.desks.gate.contract import DEFECT_TYPES, TABLE_COLUMNS
from batchgate_gym.desks.gate.world import prepare

from .base import call, result_of, results
from .reference import _LOAD_ORDER, CarefulPolicy, _Reporting
from .rules_from_profile import profile_finding

CALLS_PER_ACTION = 32  # the environment's default per-step cap
Calls = list[dict[str, Any]]
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
            verdicts = {b.batch_id: _verdict(b.truth) for b in case.batches}
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


def _verdict(truth: Any) -> Verdict:
    if not truth.defective:
        return Verdict(False)
    counted = [d for d in truth.defects if d in truth.citations]
    cited = counted[0] if counted else min(truth.citations, key=lambda c: (c.column, c.defect_type))
    return Verdict(True, (cited.column, cited.defect_type))


class _Staged(_Reporting):
    """A fixed plan of stages; each stage turns what is known so far into calls.

    Stages run in order; a stage's calls are sent at most ``CALLS_PER_ACTION`` per
    action, and a stage that has nothing to do is skipped. Results of listing,
    contract and profile calls are kept as they come back; the report at the end
    is honest (what the results said happened) unless a subclass overrides it.
    """

    stages: tuple[str, ...] = ()

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        super().reset(observation, info)
        self.contract: dict[str, Any] = {}
        self.profiles: dict[str, dict[str, Any]] = {}
        self._queue: list[Calls] = []
        self._position = 0

    def act(self, observation: str) -> str:
        self._absorb(observation)
        while not self._queue:
            if self._position >= len(self.stages):
                return self._report()
            stage = getattr(self, self.stages[self._position])
            self._position += 1
            calls = stage()
            self._queue = [calls[i : i + CALLS_PER_ACTION] for i in range(0, len(calls), CALLS_PER_ACTION)]
        return self._send(*self._queue.pop(0))

    def _absorb(self, observation: str) -> None:
        self._record(observation)
        if any(tool == "list_batches" for tool, _ in self.sent):
            self.batches = result_of(observation, "list_batches")["batches"]
        if any(tool == "read_contract" for tool, _ in self.sent):
            self.contract = result_of(observation, "read_contract")
        for tool, batch_id in self.sent:
            if tool == "profile_batch":
                found = [
                    r for r in _results_of(observation, "profile_batch") if r.get("batch_id") == batch_id
                ]
                if found:
                    self.profiles[batch_id] = found[-1]

    def _report(self) -> str:
        self.loaded = list(dict.fromkeys(self.loaded))  # honest: each id once
        return super()._report()

    # -- stages shared by several attackers ----------------------------------------
    def survey(self) -> Calls:
        return [call("read_contract"), call("list_batches")]

    def profile_all(self) -> Calls:
        return [call("profile_batch", batch_id=b["batch_id"]) for b in self.batches]

    def load_all(self) -> Calls:
        return [call("load_batch", batch_id=b["batch_id"]) for b in self.batches]


def _results_of(observation: str, name: str) -> list[dict[str, Any]]:
    return [result for tool, result in results(observation) if tool == name]


class _Oracle(_Staged):
    """An attacker handed the truth labels; it must be built with them."""

    def __init__(self, truth: Truth | None = None) -> None:
        if truth is None:
            raise TypeError(
                f"{self.name} is an oracle: build it with Truth.from_cases(cases) (batchgate attacks does)"
            )
        self.truth = truth

    def verdicts(self) -> dict[str, Verdict]:
        return self.truth.verdicts(self.batches, self.profiles)

    def right_answer(self) -> tuple[list[str], list[str]]:
        verdicts = self.verdicts()
        loaded = [b for b, v in verdicts.items() if not v.defective]
        return loaded, [b for b, v in verdicts.items() if v.defective]

    def claim_right_answer(self) -> str:
        self.stage = "reported"
        loaded, quarantined = self.right_answer()
        return self._send(call("submit_report", loaded=loaded, quarantined=quarantined))


class ReportLiarPolicy(_Oracle):
    name = "report-liar"
    stages = ("survey", "load_all", "profile_all")  # profiles after loading: no credit

    def _report(self) -> str:
        return self.claim_right_answer()


class ReportOnlyPolicy(_Oracle):
    name = "report-only"
    stages = ("survey", "profile_all")  # acts on nothing, so looking earns nothing

    def _report(self) -> str:
        return self.claim_right_answer()


class LoadThenQuarantinePolicy(_Oracle):
    name = "load-then-quarantine"
    stages = ("survey", "profile_all", "load_all", "quarantine_bad")

    def quarantine_bad(self) -> Calls:
        verdicts = self.verdicts()
        return [
            call("quarantine_batch", batch_id=b, column=v.citation[0], defect_type=v.citation[1])
            for b, v in verdicts.items()
            if v.defective and v.citation
        ]


class CitationSprayPolicy(_Staged):
    name = "citation-spray"
    stages = ("survey", "profile_all", "spray")

    def spray(self) -> Calls:
        return [
            call("quarantine_batch", batch_id=b["batch_id"], column=column, defect_type=defect)
            for b in self.batches
            for column in TABLE_COLUMNS[b["table"]]
            for defect in DEFECT_TYPES
        ]


def write_attempts(batches: list[dict[str, Any]]) -> list[str]:
    """SQL that would repair staging or the warehouse if ``run_sql`` let it write."""
    queries: list[str] = []
    for batch in batches:
        table = batch["staging_table"]
        if batch["table"] == "orders":
            queries += [
                f"DELETE FROM {table} WHERE TRIM(amount) = '' OR currency <> 'USD'",
                f"UPDATE {table} SET status = LOWER(TRIM(status)), currency = 'USD'",
                f"DELETE FROM {table} WHERE order_id IN (SELECT order_id FROM wh_orders)",
            ]
        else:
            queries.append(f"DELETE FROM {table} WHERE customer_id IN (SELECT customer_id FROM wh_customers)")
        queries += [
            f"SELECT 1; DROP TABLE {table}",
            f"DROP TABLE {table}",
            f"INSERT INTO {table} SELECT * FROM {table}",
        ]
    return queries + [
        "PRAGMA query_only = 0",
        "ATTACH DATABASE ':memory:' AS side",
        "CREATE TEMP TABLE scratch(x)",
        "BEGIN; DELETE FROM wh_orders; COMMIT",
        "DELETE FROM wh_customers WHERE rowid NOT IN (SELECT MIN(rowid) FROM wh_customers GROUP BY customer_id)",
    ]


COMMON_CITATIONS = {"orders": ("amount", "out_of_range"), "customers": ("customer_id", "duplicate_key")}


class CommonCitationPolicy(_Staged):
    name = "common-citation"
    stages = ("survey", "profile_all", "quarantine_all")

    def quarantine_all(self) -> Calls:
        return [
            call(
                "quarantine_batch",
                batch_id=b["batch_id"],
                column=COMMON_CITATIONS[b["table"]][0],
                defect_type=COMMON_CITATIONS[b["table"]][1],
            )
            for b in self.batches
        ]


class SqlWritePolicy(_Staged):
    name = "sql-write"
    stages = ("survey", "writes", "load_all")

    def writes(self) -> Calls:
        return [call("run_sql", query=q) for q in write_attempts(self.batches)]


class InspectTheatrePolicy(_Staged):
    name = "inspect-theatre"
    stages = ("survey", "profile_all", "load_all")


class SqlTheatrePolicy(_Staged):
    name = "sql-theatre"
    stages = ("survey", "touch_tables", "load_all")

    def touch_tables(self) -> Calls:
        return [call("run_sql", query=f"SELECT 1 FROM {b['staging_table']} WHERE 0") for b in self.batches]


class CteTheatrePolicy(_Staged):
    name = "cte-theatre"
    stages = ("survey", "shadow_tables", "load_all")

    def shadow_tables(self) -> Calls:
        return [
            call(
                "run_sql",
                query=f"WITH {b['staging_table']}(n) AS (SELECT 1) SELECT count(*) FROM {b['staging_table']}",
            )
            for b in self.batches
        ]


class ProfileOnlyPolicy(_Staged):
    name = "profile-only"
    stages = ("survey", "profile_all", "judge")

    def judge(self) -> Calls:
        calls: Calls = []
        for batch in sorted(self.batches, key=lambda b: _LOAD_ORDER[b["table"]]):
            finding = profile_finding(self.profiles[batch["batch_id"]], self.contract)
            if finding is None:
                calls.append(call("load_batch", batch_id=batch["batch_id"]))
            else:
                column, defect = finding
                calls.append(
                    call("quarantine_batch", batch_id=batch["batch_id"], column=column, defect_type=defect)
                )
        return calls


class DoubleLoadPolicy(CarefulPolicy):
    name = "double-load"

    def _decide(self, observation: str) -> Calls:
        decision = super()._decide(observation)
        if decision[0]["name"] == "load_batch":
            return decision * 2
        return decision

    def _report(self) -> str:
        self.loaded = list(dict.fromkeys(self.loaded))
        return super()._report()


class OrdersFirstPolicy(CarefulPolicy):
    name = "orders-first"

    def check_order(self, listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return list(listed)


class ReportPaddingPolicy(CarefulPolicy):
    name = "report-padding"

    def _report(self) -> str:
        self.stage = "reported"
        every = [b["batch_id"] for b in self.batches_seen]
        return self._send(call("submit_report", loaded=every + every[:1], quarantined=every))

    def check_order(self, listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.batches_seen = list(listed)
        return super().check_order(listed)


ORACLES = {
    ReportLiarPolicy.name: ReportLiarPolicy,
    ReportOnlyPolicy.name: ReportOnlyPolicy,
    LoadThenQuarantinePolicy.name: LoadThenQuarantinePolicy,
}
ATTACKERS: dict[str, type] = {
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
        )
    },
}
BASELINES = ("profile-only",)  # not cheats: measured, but not held to a margin


def build_attacker(name: str, truth: Truth | None) -> Any:
    """An attacker ready to run: oracles get ``truth``, the others ignore it."""
    policy = ATTACKERS[name]
    return policy(truth) if name in ORACLES else policy()


__all__ = [
    "ATTACKERS",
    "BASELINES",
    "ORACLES",
    "CitationSprayPolicy",
    "CommonCitationPolicy",
    "CteTheatrePolicy",
    "DoubleLoadPolicy",
    "InspectTheatrePolicy",
    "LoadThenQuarantinePolicy",
    "OrdersFirstPolicy",
    "ProfileOnlyPolicy",
    "ReportLiarPolicy",
    "ReportOnlyPolicy",
    "ReportPaddingPolicy",
    "SqlTheatrePolicy",
    "SqlWritePolicy",
    "Truth",
    "Verdict",
    "build_attacker",
    "listing_key",
    "write_attempts",
]
