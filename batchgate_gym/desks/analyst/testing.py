"""Hypothesis strategies and a state machine for fuzzing the analyst desk, its grader and your own agents.

Public and importable (``from batchgate_gym.testing.analyst import ...``); it needs
hypothesis (the ``test`` extra). A helper, not core: the generator, the splits,
the environment and the reference analyst are imported inside the functions that
use them, so importing this module costs no more than hypothesis.

* Cases: :func:`cases` draws procedural cases from the generator's seeds with its
  knobs (``level``, ``template``, ``store``, ``scale``; each a value or a strategy);
  :func:`split_cases` samples the committed splits.
* Answers: :func:`answers` draws answer texts: the case's own answer and near
  misses of its type, and hostile ones (integers past any float, NaN and the
  infinities, lone surrogates, nesting of every kind, text that is not JSON).
* Evidence: :func:`evidence_queries` draws the queries an agent might cite: the
  honest one, a constant, a constant dressed as a table read, a count, a query
  calling a function whose value changes from run to run, hostile text;
  :func:`evidence` a list of them on the case's stores, as JSON text.
* Actions: :func:`actions` draws one action of any of the five tools (or junk);
  :func:`episodes` a case together with an episode's worth of actions.
* Logs: ``tampered_logs`` (one change to an exported log), the desk-neutral
  strategy of :mod:`batchgate_gym.kernel.testing`, named here too.
* :class:`AnalystMachine`: a ``RuleBasedStateMachine`` over ``AnalystDeskEnv``
  whose invariants are checked after every step and at the end of every episode:
  the reward in [0, 1] and 0 until the end, live == replay, and the incentive
  ordering of the score (an answerable question: a wrong answer below a decline,
  a decline at 0.20, a right answer at 0.75 or more; one to decline: a decline 1,
  an answer 0). It plays random actions, hostile submissions and, as an agent of
  its own, the reference ``careful`` analyst through the text interface; subclass
  it to add rules or invariants.

The settings profiles (``ci``, ``long``) are every desk's, registered by
:func:`batchgate_gym.kernel.testing.register_profiles`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from batchgate_gym.kernel.testing import EpisodeMachine, as_strategy, tampered_logs

TOOL_NAMES = ("list_tables", "describe_table", "run_sql", "submit_answer", "decline")
"""The desk's five tools, the last two ending the episode."""

DECLINE_REWARD = 0.2
"""What declining a question the data can answer earns: above any wrong answer, below any right one."""

RIGHT_REWARD = 0.75
"""The least a right answer to an answerable question earns (with no evidence that computes it)."""


# -- cases ------------------------------------------------------------------------------
def cases(
    *,
    level: Any = None,
    template: Any = None,
    store: Any = None,
    scale: Any = 200,
    seeds: st.SearchStrategy[int] | None = None,
) -> st.SearchStrategy[Any]:
    """Procedural cases (:class:`~batchgate_gym.desks.analyst.cases.AnalystCase`) from drawn seeds.

    Each knob is a value or a strategy: ``level`` 1..7, ``template`` an id, ``store``
    one of the stores (``sqlite+lake`` at level 4), ``scale`` the order count (200 by
    default: small datasets build fast; the generator's default is 1,000).
    """
    from .sources import build_procedural

    @st.composite
    def draw(draw_: st.DrawFn) -> Any:
        seed = draw_(seeds if seeds is not None else st.integers(0, 2**31 - 1))
        knobs = {
            "level": draw_(as_strategy(level)),
            "template": draw_(as_strategy(template)),
            "store": draw_(as_strategy(store)),
            "scale": draw_(as_strategy(scale)),
        }
        return build_procedural(seed, **knobs)

    return draw()


def split_cases(*names: str, stores: Sequence[str] | None = None) -> st.SearchStrategy[Any]:
    """Cases sampled from committed splits (``eval`` by default), optionally of some stores only."""
    from .sources import split_cases as read

    chosen = [c for name in names or ("eval",) for c in read(name) if stores is None or c.stores[0] in stores]
    return st.sampled_from(chosen)


# -- answers ----------------------------------------------------------------------------
def hostile_answers() -> st.SearchStrategy[str]:
    """Answer texts no analyst should send, which the desk must score or refuse all the same."""
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=8,
    )
    return st.one_of(
        st.integers(10**300, 10**400).map(str),
        st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3),
        st.sampled_from(
            ["NaN", "-Infinity", "1e999", '"\\ud800"', '["\\udfff", 1]', "[[[[[]]]]]", "[" * 2000, ""]
        ),
        json_values.map(json.dumps),
        st.text(max_size=12),
    )


def _near(value: Any) -> st.SearchStrategy[Any]:
    """Values next to ``value``: itself, a little off, a different type."""
    if isinstance(value, bool) or value is None:
        return st.just(value)
    if isinstance(value, (int, float)):
        return st.sampled_from([value, value + 1, value - 0.5, -value, str(value), None])
    if isinstance(value, str):
        return st.sampled_from([value, value.lower(), value + "x", ""])
    if isinstance(value, dict):
        return st.fixed_dictionaries({k: _near(v) for k, v in value.items()})
    if isinstance(value, list):
        return st.one_of(
            st.just(list(value)),
            st.just(list(reversed(value))),
            st.just(list(value[:-1])),
            st.tuples(*(_near(v) for v in value)).map(list) if value else st.just([]),
        )
    return st.just(value)


def answers(case: Any = None) -> st.SearchStrategy[str]:
    """Answer texts for ``case``: its reference and near misses of its type, or hostile ones."""
    if case is None or case.expected is None:
        return hostile_answers()
    return st.one_of(_near(_plain(case.expected)).map(json.dumps), hostile_answers())


def _plain(value: Any) -> Any:
    if isinstance(value, dict) or hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# -- evidence ---------------------------------------------------------------------------
def _honest_query(case: Any) -> str | None:
    """The reference analyst's query for a single-store question (``None`` where it takes several)."""
    from batchgate_gym.policies.analyst.sql import CROSS, DECLINE, dialect_of, read_question, solution

    reading = read_question(case.question)
    if reading is None or reading.kind in (*DECLINE, *CROSS):
        return None
    return solution(reading.kind, reading.params, dialect_of(case.stores[0]))


def evidence_queries(case: Any) -> st.SearchStrategy[str]:
    """Queries an agent might cite for ``case``: honest, constant, dressed, counting, nondeterministic, hostile."""
    honest = _honest_query(case)
    constant = (
        "SELECT " + (json.dumps(_plain(case.expected)) if case.expected is not None else "0") + " AS answer"
    )
    plain = [
        "SELECT count(*) AS n FROM orders",
        "SELECT 42",
        "SELECT random() AS r",
        "SELECT * FROM nope",
        "DELETE FROM orders",
    ]
    if honest is not None:
        plain += [
            honest,
            f"SELECT * FROM ({constant}) AS c WHERE (SELECT count(*) FROM ({honest}) AS k) >= 0",
            f"SELECT 'elsewhere' AS scope, k.* FROM ({honest}) AS k",
            f"SELECT k.* FROM ({honest}) AS k WHERE random() IS NOT NULL",
        ]
    return st.one_of(
        st.sampled_from(plain),
        st.text(max_size=30),
        st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3),
    )


def evidence(case: Any, max_items: int = 3) -> st.SearchStrategy[str]:
    """An evidence list as JSON text: items on the case's stores (sometimes another), or junk."""
    stores = st.sampled_from([*case.stores, "nowhere"])
    items = st.lists(
        st.fixed_dictionaries({"store": stores, "query": evidence_queries(case)}), max_size=max_items
    )
    return st.one_of(items.map(json.dumps), st.text(max_size=12))


# -- actions and episodes -----------------------------------------------------------------
def _call(name: str, **arguments: Any) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def actions(case: Any) -> st.SearchStrategy[str]:
    """One action over ``case``: any of the five tools with drawn arguments, or junk text."""
    stores = st.sampled_from([*case.stores, "nowhere"])
    tables = st.sampled_from(["orders", "order_items", "reviews", "lineitem", "nope"])
    return st.one_of(
        stores.map(lambda s: _call("list_tables", store=s)),
        st.tuples(stores, tables).map(lambda p: _call("describe_table", store=p[0], table=p[1])),
        st.tuples(stores, evidence_queries(case)).map(lambda p: _call("run_sql", store=p[0], query=p[1])),
        st.tuples(answers(case), evidence(case)).map(
            lambda p: _call("submit_answer", answer=p[0], evidence=p[1])
        ),
        st.just('decline(reason="the data cannot answer this")'),
        st.text(max_size=40),
    )


def episodes(
    case_strategy: st.SearchStrategy[Any] | None = None, max_steps: int = 6
) -> st.SearchStrategy[tuple[Any, list[str]]]:
    """A case (eval's sqlite and duckdb questions by default) and up to ``max_steps`` actions over it."""
    drawn = case_strategy if case_strategy is not None else split_cases("eval", stores=("sqlite", "duckdb"))

    @st.composite
    def draw(draw_: st.DrawFn) -> tuple[Any, list[str]]:
        case = draw_(drawn)
        return case, draw_(st.lists(actions(case), min_size=1, max_size=max_steps))

    return draw()


# -- the state machine --------------------------------------------------------------------
def incentive_holds(case: Any, ending: str | None, reward: float, correct: float) -> bool:
    """The score's ordering for one finished episode: wrong < decline < right, by what it ended with."""
    if ending is None:  # out of turns, or no executed ending
        return reward == 0.0
    if not case.answerable:
        return reward == (1.0 if ending == "decline" else 0.0)
    if ending == "decline":
        return reward == DECLINE_REWARD
    return reward >= RIGHT_REWARD if correct == 1.0 else reward < DECLINE_REWARD


class AnalystMachine(EpisodeMachine):
    """Random, hostile and careful play against ``AnalystDeskEnv`` with its invariants checked.

    Each run draws a case (:meth:`case_strategy`: eval's sqlite and duckdb questions by
    default, whose counterfactual copies are built once per machine), then steps with
    drawn actions and hostile submissions, or lets the reference ``careful`` analyst
    play a fresh episode to its end; it starts again when an episode ends.
    """

    max_turns = 6

    @staticmethod
    def case_strategy() -> st.SearchStrategy[Any]:
        return split_cases("eval", stores=("sqlite", "duckdb"))

    def make_env(self, case: Any) -> Any:
        from batchgate_gym.envs.analyst.text import AnalystDeskEnv

        return AnalystDeskEnv([case], max_turns=self.max_turns)

    @initialize(data=st.data())
    def start(self, data: st.DataObject) -> None:
        case = data.draw(self.case_strategy())
        self.begin(case, actions(case))

    def reset_env(self) -> None:
        super().reset_env()
        self.fresh = True  # no action sent since the reset

    def step_env(self, action: str) -> None:
        self.fresh = False
        super().step_env(action)

    def _ending(self) -> str | None:
        for entry in self.env.export_log():
            if entry.get("executed") is True and entry.get("action") in ("submit_answer", "decline"):
                return str(entry["action"])
        return None

    def check_episode(self, terminated: bool) -> None:
        from .replay import replay

        score = self.info["score"]
        assert all(0.0 <= score[t] <= 1.0 for t in ("reward", "correct", "partial_credit"))
        replayed = replay(self.case, self.env.export_log(), head=self.info["log_head"])
        assert replayed.as_dict() == score, "replaying the log must give the live score"
        assert incentive_holds(self.case, self._ending(), score["reward"], score["correct"]), score

    @precondition(lambda self: not self.over)
    @rule(answer=hostile_answers())
    def submit_hostile_answer(self, answer: str) -> None:
        evidence_text = json.dumps([{"store": self.case.stores[0], "query": "SELECT 1"}])
        self.step_env(_call("submit_answer", answer=answer, evidence=evidence_text))

    @precondition(lambda self: self.fresh and not self.over)
    @rule()
    def careful_plays_the_episode(self) -> None:
        from batchgate_gym.policies.analyst.reference import CarefulAnalyst

        careful = CarefulAnalyst()
        careful.reset(self.observation, self.info)
        while not self.over:
            self.step_env(careful.act(self.observation))
        assert self.reward == 1.0, self.info["score"]


__all__ = [
    "DECLINE_REWARD",
    "RIGHT_REWARD",
    "TOOL_NAMES",
    "AnalystMachine",
    "actions",
    "answers",
    "cases",
    "episodes",
    "evidence",
    "evidence_queries",
    "hostile_answers",
    "incentive_holds",
    "split_cases",
    "tampered_logs",
]
