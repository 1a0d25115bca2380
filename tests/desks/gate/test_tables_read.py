"""What a query read: one definition for the live episode and for replay.

A table counts as read (and its batch as inspected) only if the compiled query
opens it, whatever the query names: a LEFT JOIN the planner drops, a CTE named like
a table, a name in a string and an agent's own EXPLAIN read nothing; a name typed
in another letter case reads the table itself. Live scoring and replay ask the
same guard method, so every genuine log replays.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from batchgate_gym import replay
from batchgate_gym.desks.gate.sources import split_cases
from batchgate_gym.desks.gate.world import GateWorld
from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.kernel.sqlguard import SqlGuard
from batchgate_gym.policies.base import result_of
from batchgate_gym.policies.gate.reference import CarefulPolicy


class ExploringCareful(CarefulPolicy):
    """Careful, plus one exploratory query per staged table whose staging side SQLite drops."""

    def act(self, observation: str) -> str:
        sent = super().act(observation)
        if self.stage != "checking" or getattr(self, "_explored", False):
            return sent
        self._explored = True
        listed = result_of(observation, "list_batches")["batches"]
        extra = [
            {
                "name": "run_sql",
                "arguments": {
                    "query": "SELECT DISTINCT o.order_id FROM wh_orders o"
                    f" LEFT JOIN {b['staging_table']} s ON s.rowid = o.rowid LIMIT 1"
                },
            }
            for b in listed
        ]
        return json.dumps(extra + json.loads(sent))


def test_careful_with_dropped_joins_replays_on_every_eval_case() -> None:
    env = BatchGateEnv(split="eval")
    refused = 0
    for index in range(32):
        observation, info = env.reset(options={"case_index": index})
        policy = ExploringCareful()
        policy.reset(observation, info)
        while "score" not in info:
            observation, _reward, _terminated, _truncated, info = env.step(policy.act(observation))
        assert info["score"]["reward"] == 1.0  # careful still inspects every batch itself
        try:
            assert (
                replay(env.unwrapped.world.case, env.export_log(), head=info["log_head"]).as_dict()
                == (info["score"])
            )
        except Exception:
            refused += 1
    assert refused == 0


def _guard_on(case: Any) -> tuple[GateWorld, SqlGuard, str]:
    world = GateWorld()
    world.reset(case)
    return world, world.guard, case.batches[0].staging_table


QUERIES = {
    # query shape -> whether it reads the staging table
    "SELECT count(*) FROM {t}": True,
    "SELECT count(*) FROM {T}": True,
    "SELECT * FROM main.{T} LIMIT 1": True,
    "SELECT DISTINCT o.order_id FROM wh_orders o LEFT JOIN {t} s ON s.rowid = o.rowid": False,
    "SELECT o.order_id FROM wh_orders o LEFT JOIN {t} s ON 0 LIMIT 1": True,
    "WITH {t}(n) AS (SELECT 1) SELECT count(*) FROM {t}": False,
    "SELECT '{t}' -- {t}": False,
    "EXPLAIN SELECT count(*) FROM {t}": False,
    "EXPLAIN SELECT * FROM {t}": False,
    "  /* a comment */ explain query plan SELECT * FROM {t}": False,
}


@pytest.mark.parametrize("shape", list(QUERIES))
def test_a_table_is_read_only_if_the_compiled_query_opens_it(shape: str) -> None:
    case = split_cases("eval")[0]
    _world, guard, table = _guard_on(case)
    query = shape.format(t=table, T=table.upper())
    live = guard.run(query).tables_read
    assert (table in live) is QUERIES[shape]
    assert all(name == name.lower() for name in live)  # canonical names, as the schema has them
    assert guard.tables_read(query) == live  # the replay's answer is the live one


def test_the_inspected_term_follows_the_same_rule() -> None:
    case = split_cases("eval")[0]
    table, other = (b.staging_table for b in case.batches)
    env = BatchGateEnv([case])
    env.reset()
    env.step(
        json.dumps(
            [
                {"name": "run_sql", "arguments": {"query": f"SELECT count(*) FROM {table.upper()}"}},
                {"name": "run_sql", "arguments": {"query": f"EXPLAIN SELECT * FROM {other}"}},
            ]
        )
    )
    ids = [b.batch_id for b in case.batches]
    env.step(f'load_batch("{ids[0]}")\nload_batch("{ids[1]}")')
    *_, info = env.step(f"submit_report({ids!r}, [])")
    assert info["score"]["inspected"] == 0.5  # the upper-case read counts, the EXPLAIN does not


# -- shared objects stay unchanged whatever a caller does with what it got -------------------------
def test_tool_results_are_read_only_and_splits_are_the_callers_own() -> None:
    case = split_cases("eval")[0]
    world = GateWorld()
    world.reset(case)
    batch_id = case.batches[0].batch_id
    before = [world.list_batches(), world.profile_batch(batch_id), world.read_contract()]
    snapshot = json.dumps(before, sort_keys=True)
    for result in before:
        for change in _changes(result):
            with pytest.raises((TypeError, AttributeError)):
                change()
    other = GateWorld()
    other.reset(case)
    after = [other.list_batches(), other.profile_batch(batch_id), other.read_contract()]
    assert json.dumps(after, sort_keys=True) == snapshot
    split = split_cases("eval")
    split.clear()
    assert len(split_cases("eval")) == 32


def _changes(value: Any) -> list[Any]:
    """Every way to change ``value`` in place, at every depth, as zero-argument calls."""
    out: list[Any] = []
    if isinstance(value, dict):
        out += [lambda: value.__setitem__("changed", 1), lambda: value.pop(next(iter(value)))]
        out += [lambda: value.update(changed=1), value.clear]
        items = list(value.values())
    else:
        out += [lambda: value.append(1)]  # tuples have no append: AttributeError
        items = list(value)
    for item in items:
        if isinstance(item, (dict, list, tuple)):
            out += _changes(item)
    return out


def test_the_answer_follows_the_schema_not_a_cached_one() -> None:
    """One guard, one query text, two schemas: each answers for the tables it really has."""
    from batchgate_gym.kernel.sqlguard import SqlRefused

    first, second = split_cases("eval")[:2]
    world = GateWorld()
    world.reset(first)
    table = first.batches[0].staging_table
    query = f"SELECT count(*) FROM {table}"
    assert world.guard.run(query).tables_read == (table,)
    world.reset(second)  # same connection, another image: that table is gone
    assert table not in {b.staging_table for b in second.batches}
    with pytest.raises(SqlRefused, match="no such table"):
        world.guard.run(query)
    with pytest.raises(SqlRefused, match="no such table"):
        world.guard.tables_read(query)
    # A table created on the connection after the fact changes the schema version too.
    world.conn.execute(f"CREATE TABLE {table} (x TEXT)")
    assert world.guard.run(query).tables_read == (table,)
    world.conn.execute(f"DROP TABLE {table}")
    world.conn.execute(f"CREATE VIEW {table} AS SELECT * FROM wh_orders")
    assert world.guard.run(query).tables_read == ("wh_orders",)
