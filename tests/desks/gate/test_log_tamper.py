"""Tampering with an exported log: every edit, deletion, reordering or cut is caught.

``replay`` rebuilds the score from the case and the log alone. An untouched log
replays to the live score; a log changed in any way raises ``LogIntegrityError``
(never another exception). A forger who re-hashes everything after an edit
defeats the chain alone, so replay needs the ``log_head`` the episode reported
(or the log key): pinned to it, every forgery is caught. Where a forger could
also swap the head (the tests pass the forged log's own last hash), replay still
re-derives what it can (orphan counts, tables read) from the case.
"""

from __future__ import annotations

import contextlib
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from batchgate_gym.desks.gate.cases import Case
from batchgate_gym.desks.gate.replay import replay
from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.kernel.ledger import ENTRY_FIELDS, LogIntegrityError
from batchgate_gym.kernel.text_policy import as_policy
from batchgate_gym.policies.gate.attackers import ATTACKERS
from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES
from batchgate_gym.testing import changed_value, rechained

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "seed_eval_curated.jsonl"
PLAYS = [("careful", 4), ("naive", 3), ("refuse-all", 9), ("sql-write", 20), ("double-load", 26)]
Log = list[dict[str, Any]]


def play(policy_name: str, case_index: int) -> tuple[Case, Log, dict[str, Any]]:
    policies = {**REFERENCE_POLICIES, **ATTACKERS}
    env = BatchGateEnv(FIXTURE)
    observation, info = env.reset(options={"case_index": case_index})
    policy = as_policy(policies[policy_name])
    policy.reset(observation, info)
    while True:
        observation, _reward, terminated, truncated, info = env.step(policy.act(observation))
        if terminated or truncated:
            return env.unwrapped.world.case, env.export_log(), info


@pytest.fixture(scope="module", params=PLAYS, ids=[f"{p}-{i}" for p, i in PLAYS])
def episode(request: pytest.FixtureRequest) -> tuple[Case, Log, dict[str, Any]]:
    return play(*request.param)


def reseal(log: Log) -> Log:
    """Make the seal count what is left, then re-chain."""
    log[-1]["args"]["entries"] = len(log) - 1
    return rechained(log)


def own_head(log: Any) -> str:
    """The head a forger who controls the whole log would claim: its own last hash."""
    try:
        head = log[-1]["hash"]
    except (IndexError, KeyError, TypeError):
        return "none"
    return head if isinstance(head, str) else "none"


def test_an_untouched_log_replays_to_the_live_score(episode: Any) -> None:
    case, log, info = episode
    assert replay(case, log, head=info["log_head"]).as_dict() == info["score"]
    assert info["log_head"] == log[-1]["hash"]
    assert log[0]["action"] == "begin" and log[0]["args"]["case_digest"] == case.digest


def test_replay_without_head_or_key_is_refused_outright(episode: Any) -> None:
    case, log, _info = episode
    with pytest.raises(TypeError, match="head="):
        replay(case, log)


def _edits(log: Log) -> list[tuple[str, Log]]:
    """One changed field, one deleted, swapped, duplicated entry, or a cut, at every position."""
    out: list[tuple[str, Log]] = []
    for position, entry in enumerate(log):
        for field in ENTRY_FIELDS:
            edited = copy.deepcopy(log)
            edited[position][field] = changed_value(entry[field])
            out.append((f"{field}@{position}", edited))
        out.append((f"delete@{position}", log[:position] + log[position + 1 :]))
        out.append((f"duplicate@{position}", log[: position + 1] + log[position:]))
        out.append((f"truncate@{position}", log[:position]))
        if position + 1 < len(log):
            out.append(
                (
                    f"swap@{position}",
                    log[:position] + [log[position + 1], log[position]] + log[position + 2 :],
                )
            )
    return out


def test_every_edit_deletion_reordering_and_cut_is_caught(episode: Any) -> None:
    case, log, _info = episode
    for how, tampered in _edits(log):
        with pytest.raises(LogIntegrityError):
            replay(case, tampered, head=own_head(tampered))
        with pytest.raises(LogIntegrityError):
            replay(case, tampered, head=_info["log_head"])
        assert how


def test_edits_rehashed_by_a_forger_are_caught_against_the_recorded_head(episode: Any) -> None:
    case, log, info = episode
    for position in range(len(log) - 1):
        forged = copy.deepcopy(log)
        forged[position]["note"] = "nothing to see"
        rechained(forged)
        replay(case, forged, head=own_head(forged))  # the chain alone cannot tell
        with pytest.raises(LogIntegrityError, match="head"):
            replay(case, forged, head=info["log_head"])


def test_a_cut_log_resealed_by_a_forger_is_caught_against_the_recorded_head(episode: Any) -> None:
    case, log, info = episode
    cut = reseal(copy.deepcopy(log[:-2] + log[-1:]))
    with pytest.raises(LogIntegrityError):
        replay(case, cut, head=info["log_head"])


def test_a_plausible_forgery_passes_the_chain_but_not_the_head() -> None:
    """Turning naive's load of the bad batch into a quarantine is a possible episode."""
    case, log, info = play("naive", 9)  # amount-bounds-1: one defective orders batch
    bad = next(b for b in case.batches if b.truth.defective)
    cited = bad.truth.defects[0]
    forged = copy.deepcopy(log)
    for entry in forged:
        if entry["action"] == "load_batch" and entry["args"]["batch_id"] == bad.batch_id:
            entry["action"] = "quarantine_batch"
            entry["args"] = {
                "batch_id": bad.batch_id,
                "column": cited.column,
                "defect_type": cited.defect_type,
            }
        if entry["action"] == "submit_report":
            entry["args"]["loaded"].remove(bad.batch_id)
            entry["args"]["quarantined"] = [bad.batch_id]
    rechained(forged)
    assert replay(case, forged, head=own_head(forged)).reward > info["score"]["reward"]  # why the head
    with pytest.raises(LogIntegrityError, match="head"):
        replay(case, forged, head=info["log_head"])


def test_a_forged_tables_read_is_caught_without_the_head() -> None:
    case, log, _info = play("naive", 9)
    forged = copy.deepcopy(log)
    fake_look = {
        "seq": 0,
        "action": "run_sql",
        "args": {"query": "SELECT 1", "tables_read": sorted(b.staging_table for b in case.batches)},
        "executed": True,
        "note": "",
    }
    forged.insert(1, fake_look)
    reseal(forged)
    with pytest.raises(LogIntegrityError, match="tables_read"):
        replay(case, forged, head=own_head(forged))


MALFORMED = {
    "load without orphan count": ("load_batch", lambda args: args.pop("orphan_rows")),
    "load of a list id": ("load_batch", lambda args: args.update(batch_id=["B"])),
    "orphan count as text": ("load_batch", lambda args: args.update(orphan_rows="three")),
    "report as a number": ("submit_report", lambda args: args.update(quarantined=7)),
    "quarantine without id": ("quarantine_batch", lambda args: args.pop("batch_id")),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_arguments_rehashed_are_an_integrity_error(name: str) -> None:
    action, break_args = MALFORMED[name]
    case, log, _info = play("naive" if action == "load_batch" else "refuse-all", 9)
    forged = copy.deepcopy(log)
    break_args(next(e for e in forged if e["action"] == action)["args"])
    rechained(forged)
    with pytest.raises(LogIntegrityError):
        replay(case, forged, head=own_head(forged))


@pytest.mark.parametrize(
    "forge",
    [
        lambda log: [1, 2, 3],
        lambda log: [dict(log[0], extra="field"), *log[1:]],
        lambda log: [dict(log[0], executed="yes"), *log[1:]],
        lambda log: [{key: value for key, value in log[0].items() if key != "note"}, *log[1:]],
    ],
    ids=["not-objects", "extra-field", "executed-as-text", "missing-field"],
)
def test_entries_of_the_wrong_shape_are_an_integrity_error_even_rehashed(forge: Any) -> None:
    case, log, _info = play("careful", 4)
    forged = forge(copy.deepcopy(log))
    if all(isinstance(entry, dict) for entry in forged):
        rechained(forged)
    with pytest.raises(LogIntegrityError):
        replay(case, forged, head=own_head(forged))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
_LOGS: dict[str, tuple[Case, Log, dict[str, Any]]] = {}


def _cached(policy: str, case_index: int) -> tuple[Case, Log, dict[str, Any]]:
    key = f"{policy}-{case_index}"
    if key not in _LOGS:
        _LOGS[key] = play(policy, case_index)
    return _LOGS[key]


@given(
    st.sampled_from(PLAYS),
    st.data(),
    JSON_VALUES,
    st.booleans(),
)
def test_replay_of_any_mutated_log_never_crashes_and_the_head_catches_every_change(
    played: tuple[str, int], data: st.DataObject, value: Any, rehash: bool
) -> None:
    case, log, info = _cached(*played)
    mutated = json.loads(json.dumps(log))
    position = data.draw(st.integers(0, len(mutated) - 1))
    target = mutated[position]
    if data.draw(st.booleans()) and target["args"]:
        target = target["args"]
    key = data.draw(st.sampled_from(sorted(target)))
    target[key] = value
    if rehash:
        rechained(mutated)
    with contextlib.suppress(LogIntegrityError):  # a forger's own head: a score or this error, never a crash
        replay(case, mutated, head=own_head(mutated))
    if json.dumps(mutated, sort_keys=True) == json.dumps(log, sort_keys=True):
        assert replay(case, mutated, head=info["log_head"]).as_dict() == info["score"]
    else:
        with pytest.raises(LogIntegrityError):
            replay(case, mutated, head=info["log_head"])


# -- the log binds its case and its settings ---------------------------------------------------
def _shared_batch_pairs() -> list[tuple[Case, Case]]:
    from batchgate_gym.desks.gate.sources import split_cases

    every = [*split_cases("eval"), *split_cases("train")]
    by_ids: dict[frozenset[str], list[Case]] = {}
    for case in every:
        by_ids.setdefault(frozenset(b.batch_id for b in case.batches), []).append(case)
    return [(group[0], other) for group in by_ids.values() for other in group[1:]]


def test_a_log_does_not_replay_under_another_case_with_the_same_batch_ids() -> None:
    pairs = _shared_batch_pairs()
    assert len(pairs) >= 20  # the splits reuse batch ids across cases
    for played_on, other in pairs[:20]:
        env = BatchGateEnv([played_on])
        observation, info = env.reset()
        policy = as_policy(REFERENCE_POLICIES["careful"])
        policy.reset(observation, info)
        while "score" not in info:
            observation, _reward, _terminated, _truncated, info = env.step(policy.act(observation))
        log = env.export_log()
        assert replay(played_on, log, head=info["log_head"]).as_dict() == info["score"]
        with pytest.raises(LogIntegrityError, match="this case"):
            replay(other, log, head=info["log_head"])


def test_a_log_replays_with_the_sql_budget_it_was_played_under() -> None:
    from batchgate_gym.kernel.sqlguard import SqlBudget

    env = BatchGateEnv(FIXTURE, sql_budget=SqlBudget(max_columns=128))
    env.reset(options={"case_index": 4})
    table = env.unwrapped.world.case.batches[0].staging_table
    wide = "SELECT " + ", ".join(f"order_id AS c{i}" for i in range(70)) + f" FROM {table} LIMIT 1"
    observation, *_ = env.step(f"run_sql({wide!r})")
    assert '"columns":["c0"' in observation  # it ran under the wider budget
    *_, info = env.step("submit_report([], [])")
    log = env.export_log()
    assert log[0]["args"]["settings"]["sql_budget"]["max_columns"] == 128
    assert replay(env.unwrapped.world.case, log, head=info["log_head"]).as_dict() == info["score"]


# -- malformed logs of any shape raise LogIntegrityError and nothing else ------------------------
def _with_executed_query(query: str) -> tuple[Case, Log]:
    case, log, _info = _cached("careful", 4)
    forged = copy.deepcopy(log)
    sql = next(e for e in forged if e["action"] == "run_sql" and e["executed"])
    sql["args"]["query"] = query
    return case, rechained(forged)


@pytest.mark.parametrize(
    "query",
    ["SELECT '\ud800'", "SELECT 1 \udfff", 7, None, ["SELECT 1"]],
    ids=["lone-surrogate", "trailing-surrogate", "number", "null", "list"],
)
def test_a_query_sqlite_cannot_take_is_an_integrity_error(query: Any) -> None:
    case, forged = _with_executed_query(query)
    with pytest.raises(LogIntegrityError):
        replay(case, forged, head=own_head(forged))


def test_deeply_nested_arguments_are_an_integrity_error() -> None:
    case, log, _info = _cached("careful", 4)
    deep: Any = "x"
    for _ in range(100_000):
        deep = [deep]
    for target in ("args", "query"):
        forged = copy.deepcopy(log)
        entry = next(e for e in forged if e["action"] == "run_sql")
        if target == "args":
            entry["args"]["extra"] = deep
        else:
            entry["args"]["query"] = deep
        forged[-1]["hash"] = "x" * 64  # rehashing would itself recurse too deep
        with pytest.raises(LogIntegrityError):
            replay(case, forged, head=own_head(forged))


LOG_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.sampled_from(["begin", "seal", "run_sql", "load_batch", "submit_report", "genesis"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
ENTRY_LIKE = st.fixed_dictionaries(
    {name: LOG_VALUES for name in ENTRY_FIELDS},
    optional={"extra": LOG_VALUES},
)


@given(st.lists(ENTRY_LIKE | LOG_VALUES, max_size=6) | LOG_VALUES, st.booleans())
def test_logs_of_any_shape_raise_only_the_integrity_error(log: Any, rehash: bool) -> None:
    case, _genuine, _info = _cached("careful", 4)
    if rehash and isinstance(log, list) and all(isinstance(e, dict) for e in log):
        with contextlib.suppress(Exception):
            rechained(log)
    with pytest.raises(LogIntegrityError):
        replay(case, log, head=own_head(log))
    with pytest.raises(LogIntegrityError):
        replay(case, log, key=b"some key", nonce="a nonce")


# -- a keyed log: nobody without the key can forge a chain ---------------------------------------
def _keyed_play(key: bytes) -> tuple[Case, Log, dict[str, Any]]:
    env = BatchGateEnv(FIXTURE, log_key=key)
    observation, info = env.reset(options={"case_index": 9})
    policy = as_policy(REFERENCE_POLICIES["naive"])
    policy.reset(observation, info)
    while "score" not in info:
        observation, _reward, _terminated, _truncated, info = env.step(policy.act(observation))
    assert info["log_intact"]
    return env.unwrapped.world.case, env.export_log(), info


def test_a_keyed_log_replays_with_its_key_and_a_rechained_forgery_does_not() -> None:
    key = b"held by the trainer"
    case, log, info = _keyed_play(key)
    assert replay(case, log, key=key, nonce=info["log_nonce"]).as_dict() == info["score"]
    assert replay(case, log, key=key, head=info["log_head"]).as_dict() == info["score"]
    with pytest.raises(LogIntegrityError):
        replay(case, log, key=b"another key", nonce=info["log_nonce"])
    forged = copy.deepcopy(log)
    forged[-2]["args"]["loaded"] = []  # the report, rewritten and re-chained without the key
    rechained(forged)
    with pytest.raises(LogIntegrityError, match="hash"):
        replay(case, forged, key=key, nonce=info["log_nonce"])
    # The unkeyed chain does not verify a keyed log either: its hashes are HMACs.
    with pytest.raises(LogIntegrityError, match="hash"):
        replay(case, log, head=info["log_head"])
