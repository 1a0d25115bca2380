"""A closed world's connection, with the statements it compiled, serves the next world."""

from __future__ import annotations

import os
import sqlite3
import tracemalloc

import pytest

import batchgate_gym.desks.gate.world as world_module
from batchgate_gym.desks.gate.sources import split_cases
from batchgate_gym.desks.gate.world import GateWorld
from batchgate_gym.evaluation import evaluate
from batchgate_gym.kernel.sqlguard import SqlBudget
from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES


@pytest.fixture(autouse=True)
def no_kept_connections():
    with world_module._KEPT_LOCK:
        world_module._kept_here().clear()
    yield
    with world_module._KEPT_LOCK:
        world_module._kept_here().clear()


def test_a_closed_worlds_connection_goes_to_the_next_world_of_its_budget():
    case = split_cases("eval")[0]
    first = GateWorld()
    first.reset(case)
    conn = first.conn
    first.close()
    first.close()  # a second close does nothing: the connection is kept once
    assert sum(map(len, world_module._kept.values())) == 1
    other = GateWorld(SqlBudget(max_rows=7))
    assert other.conn is not conn  # another budget, another connection
    second = GateWorld()
    assert second.conn is conn and second.guard.budget == SqlBudget()
    second.reset(case)
    assert second.list_batches() == first.prepared_case.listing
    with pytest.raises(sqlite3.ProgrammingError):  # a closed world is closed
        first.reset(case)
    with pytest.raises(sqlite3.ProgrammingError):
        first.conn.execute("SELECT 1")


def test_only_a_few_connections_are_kept_and_the_rest_are_closed():
    worlds = [GateWorld() for _ in range(world_module._CONNECTIONS_KEPT + 2)]
    conns = [world.conn for world in worlds]
    for world in worlds:
        world.close()
    kept = {id(conn) for pairs in world_module._kept.values() for conn, _ in pairs}
    assert len(kept) == world_module._CONNECTIONS_KEPT
    for conn in conns:
        if id(conn) not in kept:
            with pytest.raises(sqlite3.ProgrammingError):
                conn.execute("SELECT 1")


def test_a_forked_child_opens_its_own_connections():
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    GateWorld().close()
    kept = next(conn for pairs in world_module._kept.values() for conn, _ in pairs)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report whether it was handed its parent's connection
        os.write(write, b"1" if GateWorld().conn is kept else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"0"
    assert GateWorld().conn is kept  # the parent still has it


def test_evaluations_that_share_connections_score_as_fresh_ones(monkeypatch):
    """The second evaluation runs on the connection the first one left, its statements
    compiled; every result is what an evaluation on new connections gives."""
    careful = REFERENCE_POLICIES["careful"]
    first = evaluate(careful(), split="eval", progress=False)
    compiled = []
    real = world_module.open_connection
    monkeypatch.setattr(world_module, "open_connection", lambda *a, **k: compiled.append(1) or real(*a, **k))
    second = evaluate(careful(), split="eval", progress=False)
    assert compiled == []  # no new connection was opened
    monkeypatch.setattr(world_module, "_CONNECTIONS_KEPT", 0)
    with world_module._KEPT_LOCK:
        world_module._kept_here().clear()
    fresh = evaluate(careful(), split="eval", progress=False)
    assert compiled == [1]
    assert first.rows() == second.rows() == fresh.rows()


def test_a_world_keeps_nothing_of_its_earlier_episodes_logs():
    """Resets of one case with new nonces (every seeded reset of a training loop) leave
    the world no bigger: it keeps no earlier log's entries (a world once kept entry 0 of
    up to 1,024 earlier resets, which only a repeated seed could use)."""
    case = split_cases("eval")[0]
    world = GateWorld()
    for nonce in range(50):
        world.reset(case, f"warm-{nonce}")
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for nonce in range(400):
        world.reset(case, f"nonce-{nonce}")
    grown = sum(stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(before, "filename"))
    tracemalloc.stop()
    world.close()
    assert grown < 20_000, f"400 resets grew the world by {grown:,} bytes"
    assert world.ledger.nonce == "nonce-399"
