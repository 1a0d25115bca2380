"""Hypothesis strategies and a state machine for fuzzing the grader and your own agents.

Public and importable (``from batchgate_gym.testing import ...``); it needs
hypothesis (the ``test`` extra). It is a testing helper, so the pieces that need
more than the core are imported inside the functions that use them: the case
generator when a case strategy is built, Gymnasium and the environment when
:class:`GateMachine` starts. Importing this module alone stays as light as the
core.

* Cases: :func:`case_dicts` and :func:`cases` draw procedural cases from the
  generator with scale knobs (families, rows per batch, batches, defects).
* Actions: :func:`tool_calls` (well-formed calls over a case's batch ids),
  :func:`valid_actions`, :func:`near_valid_actions` (one mutation away from
  valid), :func:`arbitrary_actions` (any text) and :func:`action_strings` (all
  three); :func:`call_sequences` draws whole episodes' worth of calls.
* :class:`GateMachine`: a ``RuleBasedStateMachine`` over ``BatchGateEnv`` that
  checks the environment's invariants after every step; subclass it to add rules
  (an agent of your own, say) or invariants.
  :func:`episodes` draws a case together with steps over its batches.

The settings profiles and the tampered logs every desk's verifier must refuse are
desk-neutral: :mod:`batchgate_gym.kernel.testing` holds them, and
:mod:`batchgate_gym.testing` names them beside these.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, precondition, rule

from batchgate_gym.kernel.codec import ToolCall
from batchgate_gym.kernel.testing import EpisodeMachine, as_strategy

from .contract import DEFECT_TYPES, TABLE_COLUMNS

ALL_COLUMNS = tuple(dict.fromkeys(c for columns in TABLE_COLUMNS.values() for c in columns))
TOOL_NAMES = (
    "read_contract",
    "list_batches",
    "profile_batch",
    "run_sql",
    "load_batch",
    "quarantine_batch",
    "submit_report",
)


# -- cases ------------------------------------------------------------------------------
def case_dicts(
    *,
    families: Sequence[str] | None = None,
    rows_per_batch: tuple[int, int] | st.SearchStrategy[tuple[int, int]] = (3, 20),
    batches: int | st.SearchStrategy[int] = 2,
    defects_per_batch: int | st.SearchStrategy[int] = 1,
    seeds: st.SearchStrategy[int] | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    """Procedural cases in the JSONL dict format; every knob takes a value or a strategy."""
    from .generator import FAMILIES, build_case

    family = st.sampled_from(tuple(families) if families is not None else (None, *FAMILIES))
    return st.builds(
        lambda seed, fam, rows, n, defects: build_case(
            seed, family=fam, rows_per_batch=rows, batches=n, defects_per_batch=defects
        ),
        seeds if seeds is not None else st.integers(0, 2**31 - 1),
        family,
        as_strategy(rows_per_batch),
        as_strategy(batches),
        as_strategy(defects_per_batch),
    )


def cases(**knobs: Any) -> st.SearchStrategy[Any]:
    """Like :func:`case_dicts`, parsed into :class:`batchgate_gym.desks.gate.cases.Case` objects."""
    from .cases import case_from_dict

    return case_dicts(**knobs).map(lambda data: case_from_dict(data, f"<drawn case {data['case_id']}>"))


# -- tool calls and actions ---------------------------------------------------------------
def _batch_id(batch_ids: Sequence[str]) -> st.SearchStrategy[str]:
    known = st.sampled_from(tuple(batch_ids)) if batch_ids else st.nothing()
    stranger = st.text(st.characters(codec="ascii"), max_size=12)
    return st.one_of(known, known, known, stranger)


def sql_queries(tables: Sequence[str] = ()) -> st.SearchStrategy[str]:
    """Small SELECTs over the case's tables, plus some that must be refused.

    Besides plain reads: joins whose staging side SQLite's planner drops, tables
    shadowed by a CTE of their name, names in another letter case, and EXPLAIN,
    where what a query names and what it reads differ.
    """
    names = st.sampled_from(("wh_orders", "wh_customers", "sqlite_master", *tables))
    select = st.builds(
        lambda table, column, where: f"SELECT {column} FROM {table}{where}",
        names,
        st.sampled_from(("*", "COUNT(*)", "1", "rowid")),
        st.sampled_from(("", " WHERE 0", " LIMIT 3", " ORDER BY 1 DESC")),
    )
    tricky = st.builds(
        lambda table, shape: shape.format(t=table, T=table.upper()),
        names,
        st.sampled_from(
            (
                "SELECT DISTINCT o.order_id FROM wh_orders o LEFT JOIN {t} s ON s.rowid = o.rowid",
                "SELECT o.order_id FROM wh_orders o LEFT JOIN {t} s ON 0 LIMIT 2",
                "WITH {t}(n) AS (SELECT 1) SELECT count(*) FROM {t}",
                "SELECT count(*) FROM {T}",
                "EXPLAIN SELECT * FROM {t}",
                "EXPLAIN QUERY PLAN SELECT count(*) FROM {t}",
                "/* {t} */ SELECT count(*) FROM main.{t} WHERE rowid > 1",
            )
        ),
    )
    hostile = st.builds(
        lambda table, verb: verb.format(t=table),
        names,
        st.sampled_from(
            (
                "DELETE FROM {t}",
                "DROP TABLE {t}",
                "UPDATE {t} SET rowid = rowid",
                "SELECT 1; DELETE FROM {t}",
                "PRAGMA table_info({t})",
                "SELECT 1 -- {t}",
                "SELECT '{t}'",
            )
        ),
    )
    return st.one_of(select, select, tricky, hostile, st.text(max_size=40))


def sql_budgets() -> st.SearchStrategy[Any]:
    """SQL budgets other than the default: tighter and looser limits on what a query may do."""
    from batchgate_gym.kernel.sqlguard import SqlBudget

    return st.builds(
        SqlBudget,
        max_steps=st.integers(10_000, 4_000_000),
        max_value_bytes=st.integers(1_000, 100_000),
        max_columns=st.integers(8, 256),
        max_rows=st.integers(1, 100),
        max_cell_chars=st.integers(10, 400),
        max_query_chars=st.integers(40, 40_000),
    )


def tool_calls(
    batch_ids: Sequence[str] = (), tables: Sequence[str] = (), *, reports: bool = True
) -> st.SearchStrategy[ToolCall]:
    """Well-formed calls of every tool over ``batch_ids`` (sometimes unknown ids).

    ``reports=False`` leaves ``submit_report`` out (drawn without it, not filtered).
    """
    ids = _batch_id(batch_ids)
    id_lists = st.lists(ids, max_size=len(batch_ids) + 2)
    report = st.builds(
        lambda lo, qu: ToolCall("submit_report", {"loaded": lo, "quarantined": qu}), id_lists, id_lists
    )
    return st.one_of(
        st.just(ToolCall("read_contract")),
        st.just(ToolCall("list_batches")),
        st.builds(lambda b: ToolCall("profile_batch", {"batch_id": b}), ids),
        st.builds(lambda q: ToolCall("run_sql", {"query": q}), sql_queries(tables)),
        st.builds(lambda b: ToolCall("load_batch", {"batch_id": b}), ids),
        st.builds(
            lambda b, c, d: ToolCall("quarantine_batch", {"batch_id": b, "column": c, "defect_type": d}),
            ids,
            st.sampled_from(ALL_COLUMNS),
            st.sampled_from(DEFECT_TYPES),
        ),
        *([report] if reports else []),
    )


def render_action(calls: Sequence[ToolCall], as_json: bool = False) -> str:
    """Calls as one action string, in call syntax (one per line) or as a JSON list."""
    if as_json:
        return json.dumps([{"name": c.name, "arguments": c.args} for c in calls])
    return "\n".join(call.render() for call in calls)


def valid_actions(batch_ids: Sequence[str] = (), tables: Sequence[str] = ()) -> st.SearchStrategy[str]:
    return st.builds(
        render_action, st.lists(tool_calls(batch_ids, tables), min_size=1, max_size=4), st.booleans()
    )


_MUTATIONS: tuple[Callable[[str, int], str], ...] = (
    lambda text, i: text[:i] + text[i + 1 :],  # drop a character
    lambda text, i: text[:i] + ")" + text[i:],  # stray parenthesis
    lambda text, i: text[:i] + '"' + text[i:],  # unbalanced quote
    lambda text, i: text.replace("batch", "batch_", 1),  # misspelt tool or argument
    lambda text, i: text.replace('"', "", 1),  # a string turned into a name
    lambda text, i: text[:i] + "\u00e9\x00" + text[i:],  # outside the charset
    lambda text, i: text.replace("(", "(1, ", 1),  # an extra positional argument
    lambda text, i: "[" * 40 + text,  # deep nesting
    lambda text, i: text + ";" + text,  # stacked twice
)


def near_valid_actions(batch_ids: Sequence[str] = (), tables: Sequence[str] = ()) -> st.SearchStrategy[str]:
    """A valid action with one mutation: what a model gets almost right."""
    # Built once, not per draw: hypothesis validates a strategy the first time it is drawn
    # from, and building this tree afresh each draw cost more than the episode it fed.
    valid = valid_actions(batch_ids, tables)

    @st.composite
    def mutated(draw: st.DrawFn) -> str:
        text = draw(valid)
        mutation = draw(st.sampled_from(_MUTATIONS))
        return mutation(text, draw(st.integers(0, max(len(text) - 1, 0))))

    return mutated()


def arbitrary_actions() -> st.SearchStrategy[str]:
    return st.one_of(st.text(max_size=200), st.text(st.characters(codec="ascii"), max_size=200))


def action_strings(batch_ids: Sequence[str] = (), tables: Sequence[str] = ()) -> st.SearchStrategy[str]:
    """Valid, near-valid and arbitrary actions, in roughly equal shares."""
    return st.one_of(
        valid_actions(batch_ids, tables), near_valid_actions(batch_ids, tables), arbitrary_actions()
    )


def call_sequences(
    batch_ids: Sequence[str] = (),
    tables: Sequence[str] = (),
    *,
    max_steps: int = 10,
    report: bool | None = None,
) -> st.SearchStrategy[list[list[ToolCall]]]:
    """Steps of calls; ``report=False`` leaves submit_report out, ``True`` ends with one."""
    calls = tool_calls(batch_ids, tables, reports=report is None)
    steps = st.lists(st.lists(calls, min_size=1, max_size=4), max_size=max_steps)
    if not report:
        return steps
    ids = st.lists(_batch_id(batch_ids), max_size=len(batch_ids) + 1)
    final = st.builds(lambda lo, qu: [ToolCall("submit_report", {"loaded": lo, "quarantined": qu})], ids, ids)
    return st.builds(lambda body, last: [*body, last], steps, final)


def case_names(case: Any) -> tuple[list[str], list[str]]:
    """A case's batch ids and staging table names, what the strategies above take."""
    return [b.batch_id for b in case.batches], [b.staging_table for b in case.batches]


def episodes(
    *, max_steps: int = 10, report: bool | None = None, **case_knobs: Any
) -> st.SearchStrategy[tuple[Any, list[list[ToolCall]]]]:
    """A case and steps of calls over its batches (see :func:`call_sequences`)."""

    drawn_cases = cases(**case_knobs)
    # One strategy per case's names, not one per draw (see _action_strategies).
    steps_over = functools.lru_cache(maxsize=256)(
        lambda ids, tables: call_sequences(ids, tables, max_steps=max_steps, report=report)
    )

    @st.composite
    def draw_episode(draw: st.DrawFn) -> tuple[Any, list[list[ToolCall]]]:
        case = draw(drawn_cases)
        steps = draw(steps_over(*map(tuple, case_names(case))))
        return case, steps

    return draw_episode()


# -- the state machine --------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _action_strategies(
    batch_ids: tuple[str, ...], tables: tuple[str, ...]
) -> tuple[st.SearchStrategy[str], st.SearchStrategy[str]]:
    """:func:`action_strings` and :func:`valid_actions` over one case's names."""
    return action_strings(batch_ids, tables), valid_actions(batch_ids, tables)


class GateMachine(EpisodeMachine):
    """Random play against ``BatchGateEnv`` with its invariants checked at every step.

    Each run draws a case, then steps with valid, near-valid and arbitrary actions,
    resetting when an episode ends. After every step: the observation lies in the
    observation space, the reward is in [0, 1] and is 0 unless the episode ended;
    at the end of an episode every term is in [0, 1], the log verifies and its
    replay equals the live score. Override :meth:`make_env` to change the
    environment and add ``@rule`` methods (for instance one that asks your agent
    for an action) in a subclass.
    """

    max_turns = 8

    def make_env(self, case: Any) -> Any:
        from batchgate_gym.envs.gate.text import BatchGateEnv

        return BatchGateEnv([case], max_turns=self.max_turns)

    @initialize(case=st.deferred(lambda: cases(rows_per_batch=(1, 8))))
    def start(self, case: Any) -> None:
        # Built once per case's names: constructing and validating strategies costs more
        # than stepping, and hypothesis often plays the same case again (it mutates and
        # shrinks the examples it has).
        any_action, self.valid_action = _action_strategies(*map(tuple, case_names(case)))
        self.begin(case, any_action)

    def check_episode(self, terminated: bool) -> None:
        from .replay import replay

        score = self.info["score"]
        assert all(
            0.0 <= score[t] <= 1.0 for t in ("reward", "disposition", "report", "evidence", "inspected")
        )
        assert self.info["log_intact"]
        assert terminated or score["reward"] == 0.0, "no report must give 0"
        replayed = replay(self.case, self.env.unwrapped.export_log(), head=self.info["log_head"])
        assert replayed.as_dict() == score, "replaying the log must give the live score"

    @precondition(lambda self: not self.over)
    @rule(data=st.data())
    def send_valid_calls(self, data: st.DataObject) -> None:
        self.step_env(data.draw(self.valid_action))

    @invariant()
    def observation_is_in_space(self) -> None:
        if hasattr(self, "env"):
            assert self.env.observation_space.contains(self.observation)


__all__ = [
    "GateMachine",
    "action_strings",
    "arbitrary_actions",
    "call_sequences",
    "case_dicts",
    "case_names",
    "cases",
    "episodes",
    "near_valid_actions",
    "render_action",
    "sql_budgets",
    "sql_queries",
    "tool_calls",
    "valid_actions",
]
