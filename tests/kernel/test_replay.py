"""The replay driver: verify, make the world from the logged settings, re-apply, grade."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from batchgate_gym.kernel.ledger import Ledger, LogIntegrityError
from batchgate_gym.kernel.replay import reapply_all, replay_log


class Counter:
    """A toy world: ``add`` entries add to a total, checked against the logged total."""

    def __init__(self, start: int) -> None:
        self.total = start
        self.seen: list[str] = []

    def reapply(self, entry: Mapping[str, Any]) -> None:
        self.seen.append(entry["action"])
        if entry["action"] == "add" and entry["executed"] is True:
            self.total += entry["args"]["n"]
            if self.total != entry["args"]["total"]:
                raise LogIntegrityError(f"entry {entry['seq']}: total disagrees")


def _log(key: bytes | None = None, nonce: str | None = None) -> tuple[list[dict[str, Any]], str]:
    ledger = Ledger(key)
    ledger.begin("case-1", {"start": 10}, nonce)
    ledger.append("add", {"n": 2, "total": 12}, True)
    ledger.append("add", {"n": 5, "total": 99}, False, "refused")  # not executed: nothing to redo
    ledger.append("look", {}, True)
    ledger.append("add", {"n": 3, "total": 15}, True)
    ledger.seal("done")
    return ledger.export(), ledger.head


def _replay(entries: Any, **kwargs: Any) -> tuple[int, list[str], int]:
    def grade(world: Counter, log: Sequence[Mapping[str, Any]]) -> tuple[int, list[str], int]:
        return world.total, world.seen, len(log)

    return replay_log(
        entries, "case-1", make_world=lambda settings: Counter(settings["start"]), grade=grade, **kwargs
    )


def test_every_entry_reaches_the_world_in_order_and_the_grade_sees_the_rebuilt_world():
    entries, head = _log()
    total, seen, count = _replay(entries, head=head, key=None)
    assert total == 15 and count == 6
    assert seen == ["begin", "add", "add", "look", "add", "seal"]
    keyed, _ = _log(b"k", "n-1")
    assert _replay(keyed, head=None, key=b"k", nonce="n-1")[0] == 15


def test_a_key_alone_never_passes_the_log_of_another_episode():
    mine, _ = _log(b"k", "n-1")
    other, other_head = _log(b"k", "n-2")  # the same case, the same play, another episode
    assert other != mine
    with pytest.raises(TypeError, match="nonce= "):
        _replay(other, head=None, key=b"k")
    with pytest.raises(LogIntegrityError, match="nonce differs"):
        _replay(other, head=None, key=b"k", nonce="n-1")
    unmarked, _ = _log(b"k")  # a log without a nonce is no episode's
    with pytest.raises(LogIntegrityError, match="nonce differs"):
        _replay(unmarked, head=None, key=b"k", nonce="n-1")
    assert _replay(other, head=other_head, key=b"k")[0] == 15  # its own head still pins it


def test_a_world_that_disagrees_with_the_log_fails_the_replay():
    ledger = Ledger()
    ledger.begin("case-1", {"start": 0})
    ledger.append("add", {"n": 1, "total": 2}, True)
    ledger.seal("done")
    with pytest.raises(LogIntegrityError, match="entry 1: total disagrees"):
        _replay(ledger.export(), head=ledger.head, key=None)


def test_malformed_entries_and_settings_surface_as_integrity_errors_only():
    ledger = Ledger()
    ledger.begin("case-1", {"begin_without_start": 1})
    ledger.seal("done")
    with pytest.raises(LogIntegrityError, match="KeyError"):
        _replay(ledger.export(), head=ledger.head, key=None)
    ledger = Ledger()
    ledger.begin("case-1", {"start": 0})
    ledger.append("add", {"n": "two", "total": 2}, True)
    ledger.seal("done")
    with pytest.raises(LogIntegrityError, match="TypeError"):
        _replay(ledger.export(), head=ledger.head, key=None)


def test_verification_comes_first_and_needs_a_head_or_a_key():
    entries, head = _log()
    with pytest.raises(TypeError, match="head= "):
        _replay(entries, head=None, key=None)
    made: list[Any] = []
    with pytest.raises(LogIntegrityError, match="does not begin by naming this case"):
        replay_log(
            entries,
            "case-2",
            make_world=made.append,
            grade=lambda world, log: None,
            head=head,
            key=None,
        )
    assert made == []


def test_reapply_all_returns_the_world_it_was_given():
    world = Counter(10)
    entries, _ = _log()
    assert reapply_all(world, entries) is world and world.total == 15
