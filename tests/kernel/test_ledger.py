"""The hash-chained log: format, verification, tamper detection and replay."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest
from conftest import FIXTURE_CASES

from batchgate_gym.desks.gate.replay import replay
from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.kernel.ledger import GENESIS, Ledger, LogIntegrityError, verify_chain
from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES


def test_entry_format_and_hash_definition():
    ledger = Ledger()
    first = ledger.append("load_batch", {"batch_id": "B-1", "rows": 3, "orphan_rows": 0}, True)
    second = ledger.append("run_sql", {"query": "SELECT 1"}, False, "refused")
    assert first.prev_hash == GENESIS and second.prev_hash == first.hash
    body = {k: v for k, v in first.as_dict().items() if k != "hash"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    assert first.hash == hashlib.sha256(canonical.encode()).hexdigest()
    assert set(first.as_dict()) == {"seq", "action", "args", "executed", "note", "prev_hash", "hash"}


def played(policy_name: str, case_index: int):
    env = BatchGateEnv(FIXTURE_CASES)
    observation, info = env.reset(options={"case_index": case_index})
    policy = REFERENCE_POLICIES[policy_name]()
    policy.reset(observation, info)
    while True:
        observation, _, terminated, truncated, info = env.step(policy.act(observation))
        if terminated or truncated:
            return env, info


@pytest.mark.parametrize("policy", ["naive", "careful", "refuse-all"])
@pytest.mark.parametrize("case_index", [0, 3, 9, 22, 30])
def test_replay_from_case_and_log_equals_the_live_score(policy, case_index):
    env, info = played(policy, case_index)
    score = replay(env.world.case, env.export_log(), head=info["log_head"])
    assert score.as_dict() == info["score"]


def test_export_is_a_copy():
    env, _ = played("careful", 0)
    exported = env.export_log()
    exported[0]["args"]["x"] = 1
    assert "x" not in env.world.ledger.entries[0].args


def tampered_logs(entries):
    edit = copy.deepcopy(entries)
    edit[2]["args"]["batch_id"] = "B-other"
    rehashed = copy.deepcopy(entries)  # edited and re-hashed: the next link breaks
    rehashed[1]["executed"] = not rehashed[1]["executed"]
    from batchgate_gym.kernel.ledger import entry_hash

    rehashed[1]["hash"] = entry_hash(rehashed[1])
    yield "edited", edit
    yield "edited and rehashed", rehashed
    yield "deleted", entries[:1] + entries[2:]
    yield "reordered", [entries[1], entries[0], *entries[2:]]
    yield "truncated", entries[:-2]
    yield "seal cut off", entries[:-1]


def test_tampering_is_detected():
    env, info = played("careful", 8)
    entries = env.export_log()
    verify_chain(entries)
    for how, log in tampered_logs(entries):
        with pytest.raises(LogIntegrityError):
            replay(env.world.case, log, head=info["log_head"])
        with pytest.raises(LogIntegrityError):  # even where a forger also swapped the head
            replay(env.world.case, log, head=log[-1]["hash"])
        assert how


def test_a_forged_orphan_count_is_caught_on_replay():
    env, _ = played("naive", 3)  # clean-control-3 lists orders first: orphans at load
    entries = env.export_log()
    load = next(e for e in entries if e["action"] == "load_batch" and e["args"]["orphan_rows"])
    forged = copy.deepcopy(entries)
    forged[load["seq"]]["args"]["orphan_rows"] = 0
    from batchgate_gym.kernel.ledger import entry_hash

    prev = forged[load["seq"] - 1]["hash"]
    for entry in forged[load["seq"] :]:  # re-chain everything after the forgery
        entry["prev_hash"] = prev
        entry["hash"] = entry_hash(entry)
        prev = entry["hash"]
    verify_chain(forged)  # the chain alone cannot tell: the warehouse can
    with pytest.raises(LogIntegrityError, match="orphan count"):
        replay(env.world.case, forged, head=forged[-1]["hash"])


def test_sealed_ledger_refuses_appends_and_reports_intact():
    env, info = played("careful", 1)
    assert info["log_intact"] and env.world.ledger.sealed
    with pytest.raises(LogIntegrityError):
        env.world.ledger.append("load_batch", {}, True)


def test_entry_parts_read_a_live_and_an_exported_entry_alike():
    from batchgate_gym.kernel.ledger import entry_parts

    ledger = Ledger()
    live = ledger.append("act", {"x": [1]}, True)
    ledger.append("try", {}, False, "refused")
    exported = ledger.export()
    assert entry_parts(live) == entry_parts(exported[0]) == ("act", {"x": [1]}, True)
    assert entry_parts(exported[1]) == ("try", {}, False)
    assert entry_parts({"action": "odd", "args": None, "executed": 1}) == ("odd", {}, False)
    assert entry_parts({}) == (None, {}, False)


def _as_verify_chain_judges(ledger: Ledger, key: bytes | None = None) -> bool:
    try:
        verify_chain(
            [e.as_dict() for e in ledger.entries], require_seal=ledger.sealed, key=key, check_args=False
        )
    except LogIntegrityError:
        return False
    return True


@pytest.mark.parametrize("key", [None, b"k"])
def test_a_live_ledger_judges_itself_as_verify_chain_judges_its_export(key):
    """intact() reads the live entries directly; any in-place change to one it must catch."""
    import dataclasses

    def fresh() -> Ledger:
        ledger = Ledger(key)
        ledger.begin("digest", {"sql_budget": {"max_rows": 50}})
        ledger.append("run_sql", {"query": "SELECT 1", "tables_read": ["t"]}, True)
        ledger.append("load_batch", {"batch_id": "B-1", "rows": 3, "orphan_rows": 0}, True)
        ledger.seal("task finished")
        return ledger

    ledger = fresh()
    assert ledger.intact() and _as_verify_chain_judges(ledger, key)
    edits = [
        lambda entries: entries[1].args["tables_read"].append("u"),
        lambda entries: entries[2].args.__setitem__("orphan_rows", 1),
        lambda entries: entries[3].args.__setitem__("entries", 9),
        lambda entries: object.__setattr__(entries[2], "executed", 1),
        lambda entries: object.__setattr__(entries[2], "note", "edited"),
        lambda entries: entries.reverse(),
        lambda entries: entries.pop(1),
        lambda entries: entries.pop(),
        lambda entries: entries.insert(1, dataclasses.replace(entries[1], seq=1)),
    ]
    # Edits of a field's content that keep its type: only a recomputed hash sees them. The
    # others (a seal's count, a field's type, entries reordered, dropped or inserted) break
    # the chain's shape, which linked() checks without hashing.
    content_only = {0, 1, 4}
    for position, edit in enumerate(edits):
        ledger = fresh()
        edit(ledger._entries)
        assert ledger.intact() is _as_verify_chain_judges(ledger, key) is False
        assert ledger.linked() is (position in content_only)
        with pytest.raises(LogIntegrityError, match="edited after it was written"):
            ledger.export()  # the log leaves the ledger only with its chain recomputed


def test_an_episode_end_hashes_only_the_entries_it_appends(monkeypatch):
    """The live log is not re-verified when an episode ends: its last step computes the hash
    of the report and of the seal, not of every entry again."""
    import batchgate_gym.kernel.ledger as ledger_module

    env = BatchGateEnv(FIXTURE_CASES)
    observation, info = env.reset(options={"case_index": 3})
    policy = REFERENCE_POLICIES["careful"]()
    policy.reset(observation, info)
    action = policy.act(observation)
    while "submit_report" not in action:
        observation, *_ = env.step(action)
        action = policy.act(observation)
    hashed = []
    real = ledger_module._fields_hash
    monkeypatch.setattr(ledger_module, "_fields_hash", lambda *args: hashed.append(args[1]) or real(*args))
    *_, terminated, _truncated, info = env.step(action)
    assert terminated and info["log_intact"] is True and info["log_entries"] > 4
    assert hashed == ["submit_report", "seal"]


def test_episode_nonces_are_per_reset_seeded_and_draw_nothing_from_the_generator():
    import pickle

    import numpy as np
    from gymnasium.utils import seeding

    from batchgate_gym.kernel.ledger import EpisodeNonces

    def first_three(seed: int) -> tuple[list[str], object]:
        rng, _ = seeding.np_random(seed)
        state = copy.deepcopy(rng.bit_generator.state)
        nonces = EpisodeNonces()
        drawn = [nonces.next(rng) for _ in range(3)]
        assert rng.bit_generator.state == state  # the stream of cases and deals is untouched
        return drawn, nonces

    drawn, nonces = first_three(7)
    assert len(set(drawn)) == 3 and all(len(n) == 32 for n in drawn)
    assert first_three(7)[0] == drawn  # the same seed, the same nonces
    assert not set(first_three(8)[0]) & set(drawn)
    rng, _ = seeding.np_random(7)
    assert nonces.next(rng) == drawn[0]  # a new generator starts again, as a reset with a seed does
    rng.spawn(1)  # a child spawned makes a stream of its own; the parent's nonces stay
    copy_rng, copy_nonces = pickle.loads(pickle.dumps((rng, nonces)))
    assert copy_nonces.next(copy_rng) == nonces.next(rng) == drawn[1]  # a pickle goes on counting
    legacy = np.random.MT19937()
    legacy._legacy_seeding(3)  # no seed sequence: the nonce is drawn from the stream
    seedless = np.random.Generator(legacy)
    assert nonces.next(seedless) == _legacy_stream_bytes(3)


def _legacy_stream_bytes(seed: int) -> str:
    import numpy as np

    legacy = np.random.MT19937()
    legacy._legacy_seeding(seed)
    return np.random.Generator(legacy).bytes(16).hex()
