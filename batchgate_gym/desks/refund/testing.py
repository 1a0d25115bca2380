"""Hypothesis strategies for fuzzing the refund desk, its grader and your own agents.

Public and importable (``from batchgate_gym.desks.refund.testing import ...``); it
needs hypothesis (the ``test`` extra). Like the gate's testing module it is a
helper, not core: the generator, the case loader and the splits are imported inside
the functions that build case strategies, so importing this module costs no more
than hypothesis and the kernel's codec.

* Arguments: :func:`hostile_values` (every JSON type and then some: huge and
  negative ints, NaN and infinite floats, bools, ``None``, lists, free text,
  amounts written as text); :func:`order_ids` (the case's ids, their look-alikes
  and hostile values), :func:`skus`, :func:`amounts`, :func:`keys`, :func:`reasons`.
* Calls: :func:`tool_calls` (well-formed calls of the five tools over a case's
  order ids, skus and line amounts), :func:`hostile_calls` (the same tools with
  any argument drawn hostile, plus unknown tools and missing arguments) and
  :func:`any_calls` (both).
* Actions: :func:`render_action` writes calls as one action string, in call syntax
  or JSON; :func:`valid_actions`, :func:`hostile_actions`, :func:`arbitrary_actions`
  (any text) and :func:`action_strings` (all three) draw whole actions;
  :func:`call_sequences` draws an episode's worth of steps.
* Cases: :func:`case_dicts` and :func:`procedural_cases` build cases from the
  generator's seeds with its knobs (family, variant, lines, prior ledger rows, lag
  depth, fault rate; each a value or a strategy); :func:`split_cases` samples the
  committed splits, :func:`file_cases` a JSONL file; :func:`cases` mixes sources.
* :func:`episodes`: a case together with steps over its order; :func:`play_graded`
  plays a policy's episode and grades it as the commands do.
* :class:`RefundMachine`: a ``RuleBasedStateMachine`` over ``RefundDeskEnv`` (either
  rule set) whose invariants are checked after every step and at the end of every
  episode: the reward in [-1, 1] (a payment's money cost is at most 1) and 0 until
  the end, every term in [0, 1], the log intact and live == replay; subclass it to
  add rules (an agent of your own, say) or invariants.

The settings profiles (``ci``, ``long``) and the log strategies (``tampered_logs``,
``rechained``) are every desk's: :mod:`batchgate_gym.kernel.testing` holds them.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import initialize

from batchgate_gym.kernel.codec import ToolCall
from batchgate_gym.kernel.testing import EpisodeMachine, as_strategy

TOOL_NAMES = ("lookup_order", "refund_history", "issue_refund", "escalate", "reply")
"""The desk's five tools, ``reply`` last (it ends the episode)."""

CAP_CENTS = 5_000
"""What the agent may refund alone; amounts around it are drawn more often."""

SOURCES = ("procedural", "eval", "train")
"""Case sources :func:`cases` knows by name (any other string is a JSONL path)."""


def _known(values: Sequence[Any]) -> st.SearchStrategy[Any]:
    return st.sampled_from(tuple(values)) if values else st.nothing()


# -- argument values ---------------------------------------------------------------------
def hostile_values() -> st.SearchStrategy[Any]:
    """Values of every type a tool might be handed instead of the one it declares."""
    return st.one_of(
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.none(),
        st.lists(st.integers(0, 9), max_size=3),
        st.text(max_size=12),
        st.sampled_from(["1200", "1200.0", " 1200 ", "0", "-14000", "5e3"]),
    )


def lookalikes(order_id: str) -> st.SearchStrategy[str]:
    """Spellings of ``order_id`` a lax comparison would take for it."""
    return st.sampled_from(
        (
            order_id.replace("O", "\u039f"),  # a Greek capital omicron
            order_id.lower(),
            order_id + " ",
            " " + order_id,
            order_id.replace("-", "_"),
            order_id + "0",
        )
    )


def order_ids(known: Sequence[str] = (), *, hostile: bool = True) -> st.SearchStrategy[Any]:
    """Mostly one of ``known``; with ``hostile``, also look-alikes of them and hostile values."""
    ids = _known(known)
    if not hostile:
        return ids
    return st.one_of(ids, ids, ids.flatmap(lookalikes), hostile_values())


def skus(known: Sequence[str] = (), *, hostile: bool = True) -> st.SearchStrategy[Any]:
    """One of ``known`` or left empty; with ``hostile``, also hostile values."""
    sku = st.one_of(_known(known), _known(known), st.just(""))
    return st.one_of(sku, hostile_values()) if hostile else sku


def amounts(known: Sequence[int] = (), *, hostile: bool = True) -> st.SearchStrategy[Any]:
    """Cents: the lines' amounts and their neighbours, the cap and its neighbours, any positive int."""
    near = st.sampled_from(tuple(known) or (CAP_CENTS,)).flatmap(
        lambda amount: st.sampled_from((amount, amount - 1, amount + 1, 2 * amount))
    )
    cents = st.one_of(
        near, near, st.sampled_from((CAP_CENTS - 1, CAP_CENTS, CAP_CENTS + 1)), st.integers(1, 20_000)
    )
    return st.one_of(cents, cents, hostile_values()) if hostile else cents


def keys(*, hostile: bool = True) -> st.SearchStrategy[Any]:
    """Idempotency keys from a small pool (so reuse is common), and ``1`` against ``"1"``."""
    pool = st.sampled_from(("k-1", "k-2", "k-3", "1"))
    return st.one_of(pool, pool, st.just(1), hostile_values()) if hostile else pool


def reasons(*, hostile: bool = True) -> st.SearchStrategy[Any]:
    """Reasons long enough, too short or blank; with ``hostile``, any value."""
    text = st.sampled_from(("customer returned the item", "over the refund cap", "", "   ", "ok"))
    return st.one_of(text, hostile_values()) if hostile else text


# -- tool calls and actions ----------------------------------------------------------------
def _calls(
    ids: st.SearchStrategy[Any],
    lines: st.SearchStrategy[Any],
    cents: st.SearchStrategy[Any],
    key: st.SearchStrategy[Any],
    why: st.SearchStrategy[Any],
    message: st.SearchStrategy[Any],
    reply: bool,
) -> st.SearchStrategy[ToolCall]:
    refund = st.builds(
        lambda o, a, k, r, s: ToolCall(
            "issue_refund", {"order_id": o, "amount_cents": a, "idempotency_key": k, "reason": r, "sku": s}
        ),
        ids,
        cents,
        key,
        why,
        lines,
    )
    return st.one_of(
        st.builds(lambda o: ToolCall("lookup_order", {"order_id": o}), ids),
        st.builds(lambda o: ToolCall("refund_history", {"order_id": o}), ids),
        refund,
        refund,
        st.builds(lambda o, r: ToolCall("escalate", {"order_id": o, "reason": r}), ids, why),
        *([st.builds(lambda m: ToolCall("reply", {"message": m}), message)] if reply else []),
    )


def tool_calls(
    order_id_values: Sequence[str] = (),
    sku_values: Sequence[str] = (),
    amount_values: Sequence[int] = (),
    *,
    reply: bool = True,
) -> st.SearchStrategy[ToolCall]:
    """Well-formed calls of the five tools over the given order ids, skus and amounts.

    Every argument has its declared type; whether the call is right (the ticket's
    order, the owed line, an amount under the cap) is left to the draw.
    ``reply=False`` leaves ``reply`` out, so an episode keeps going.
    """
    return _calls(
        order_ids(order_id_values, hostile=False),
        skus(sku_values, hostile=False),
        amounts(amount_values, hostile=False),
        keys(hostile=False),
        reasons(hostile=False),
        st.sampled_from(("done", "Your refund is on its way.", "")),
        reply,
    )


def hostile_calls(
    order_id_values: Sequence[str] = (),
    sku_values: Sequence[str] = (),
    amount_values: Sequence[int] = (),
    *,
    reply: bool = True,
) -> st.SearchStrategy[ToolCall]:
    """Calls of the five tools with any argument possibly hostile, plus unknown tools and calls missing arguments."""
    message = st.one_of(st.text(max_size=20), hostile_values())
    return st.one_of(
        _calls(
            order_ids(order_id_values),
            skus(sku_values),
            amounts(amount_values),
            keys(),
            reasons(),
            message,
            reply,
        ),
        st.builds(ToolCall, st.sampled_from(("note", "refund_all", "issue_refund", "lookup_order"))),
        st.builds(
            lambda name, value: ToolCall(name, {"extra": value}),
            st.sampled_from(TOOL_NAMES[:-1]),
            hostile_values(),
        ),
    )


def any_calls(
    order_id_values: Sequence[str] = (),
    sku_values: Sequence[str] = (),
    amount_values: Sequence[int] = (),
    *,
    reply: bool = True,
) -> st.SearchStrategy[ToolCall]:
    """Well-formed and hostile calls in equal shares."""
    known = (order_id_values, sku_values, amount_values)
    return st.one_of(tool_calls(*known, reply=reply), hostile_calls(*known, reply=reply))


def render_action(calls: Sequence[ToolCall], as_json: bool = False) -> str:
    """Calls as one action string: call syntax, one call a line, or a JSON list.

    NaN and the infinities are written as JSON's extension spells them; the desk
    must refuse such an action, never raise on it.
    """
    if as_json:
        return json.dumps([{"name": c.name, "arguments": c.args} for c in calls], allow_nan=True)
    return "\n".join(call.render() for call in calls)


def _actions(calls: st.SearchStrategy[ToolCall]) -> st.SearchStrategy[str]:
    return st.builds(render_action, st.lists(calls, min_size=1, max_size=3), st.booleans())


def valid_actions(
    order_id_values: Sequence[str] = (), sku_values: Sequence[str] = (), amount_values: Sequence[int] = ()
) -> st.SearchStrategy[str]:
    """One to three well-formed calls in call syntax or JSON."""
    return _actions(tool_calls(order_id_values, sku_values, amount_values))


def hostile_actions(
    order_id_values: Sequence[str] = (), sku_values: Sequence[str] = (), amount_values: Sequence[int] = ()
) -> st.SearchStrategy[str]:
    """One to three calls, any of them hostile, in call syntax or JSON."""
    return _actions(hostile_calls(order_id_values, sku_values, amount_values))


def arbitrary_actions() -> st.SearchStrategy[str]:
    """Any text at all, and printable ASCII (the action charset) in particular."""
    return st.one_of(st.text(max_size=200), st.text(st.characters(codec="ascii"), max_size=200))


def action_strings(
    order_id_values: Sequence[str] = (), sku_values: Sequence[str] = (), amount_values: Sequence[int] = ()
) -> st.SearchStrategy[str]:
    """Valid, hostile and arbitrary actions, in roughly equal shares."""
    known = (order_id_values, sku_values, amount_values)
    return st.one_of(valid_actions(*known), hostile_actions(*known), arbitrary_actions())


def call_sequences(
    order_id_values: Sequence[str] = (),
    sku_values: Sequence[str] = (),
    amount_values: Sequence[int] = (),
    *,
    max_steps: int = 8,
    hostile: bool = True,
    reply: bool = True,
) -> st.SearchStrategy[list[list[ToolCall]]]:
    """One to ``max_steps`` steps of one to three calls each.

    ``hostile=False`` draws only well-formed calls; ``reply=False`` leaves ``reply``
    out (a caller then ends the episode itself).
    """
    known = (order_id_values, sku_values, amount_values)
    calls = any_calls(*known, reply=reply) if hostile else tool_calls(*known, reply=reply)
    return st.lists(st.lists(calls, min_size=1, max_size=3), min_size=1, max_size=max_steps)


# -- cases -----------------------------------------------------------------------------
def _variants(family: str | None) -> st.SearchStrategy[int | None]:
    if family is None:
        return st.none()
    from .generator import variants

    return st.none() | st.integers(0, variants(family) - 1)


def case_dicts(
    *,
    families: Sequence[str] | None = None,
    lines: int | st.SearchStrategy[int | None] | None = None,
    prior_rows: int | st.SearchStrategy[int | None] | None = None,
    lag_depth: int | st.SearchStrategy[int | None] | None = None,
    fault_rate: float | st.SearchStrategy[float | None] | None = None,
    cap_cents: int | st.SearchStrategy[int] | None = None,
    tickets: int | st.SearchStrategy[int] | None = None,
    seeds: st.SearchStrategy[int] | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    """Procedural cases in the JSONL dict format, from the generator's seeds and knobs.

    ``families`` limits the families drawn (default: any, or the generator's own
    choice); a variant of a drawn family is drawn too (or left to the generator).
    ``lines``, ``prior_rows``, ``lag_depth`` and ``fault_rate`` each take a value or
    a strategy (``None``: the generator's default), and so does ``cap_cents`` (the
    case's own refund cap; ``None`` leaves the generator's) and ``tickets`` (a queue of
    that many tickets; ``None``: one); their bounds are the generator's (``check_knobs``).
    """
    from .generator import FAMILIES, build_case

    family = st.sampled_from(tuple(families) if families is not None else (None, *FAMILIES))

    @st.composite
    def draw(draw_: st.DrawFn) -> dict[str, Any]:
        fam = draw_(family)
        cap = draw_(as_strategy(cap_cents))
        queue = draw_(as_strategy(tickets))
        return build_case(
            draw_(seeds if seeds is not None else st.integers(0, 2**31 - 1)),
            family=fam,
            variant=draw_(_variants(fam)),
            lines=draw_(as_strategy(lines)),
            prior_rows=draw_(as_strategy(prior_rows)),
            lag_depth=draw_(as_strategy(lag_depth)),
            fault_rate=draw_(as_strategy(fault_rate)),
            **({} if cap is None else {"cap_cents": cap}),
            **({} if queue is None else {"tickets": queue}),
        )

    return draw()


def procedural_cases(**knobs: Any) -> st.SearchStrategy[Any]:
    """Like :func:`case_dicts`, parsed into :class:`~batchgate_gym.desks.refund.cases.RefundCase` objects."""
    from .cases import case_from_dict

    return case_dicts(**knobs).map(lambda data: case_from_dict(data, f"<drawn case {data['case_id']}>"))


def split_cases(*names: str) -> st.SearchStrategy[Any]:
    """A case of the committed splits (``"eval"``, ``"train"``; default both), read once per process."""
    from . import sources

    pool = [case for name in names or sources.SPLITS for case in sources.split_cases(name)]
    return st.sampled_from(pool)


def file_cases(path: str | os.PathLike[str]) -> st.SearchStrategy[Any]:
    """A case of a JSONL file (the original's eval fixture, say), read when the strategy is made."""
    from .cases import load_cases

    return st.sampled_from(load_cases(path))


def cases(*sources: str | os.PathLike[str], **knobs: Any) -> st.SearchStrategy[Any]:
    """A case from any of ``sources``: ``"procedural"`` (with ``knobs``), a split name, or a JSONL path.

    With no sources: procedural cases and both splits.
    """
    chosen = sources or SOURCES
    return st.one_of(
        *(
            procedural_cases(**knobs)
            if source == "procedural"
            else split_cases(str(source))
            if source in SOURCES
            else file_cases(source)
            for source in chosen
        )
    )


def case_names(case: Any) -> tuple[list[str], list[str], list[int]]:
    """A case's order ids (its tickets', then its ledger's other orders), skus and line amounts
    (of every ticket, on a queue)."""
    own = list(dict.fromkeys(ticket.order.order_id for ticket in case.tickets))
    others = sorted({row.order_id for row in case.ledger} - set(own))
    lines = [line for ticket in case.tickets for line in ticket.order.lines]
    return [*own, *others], [line.sku for line in lines], [line.amount_cents for line in lines]


def episodes(
    case_strategy: st.SearchStrategy[Any] | None = None,
    *,
    max_steps: int = 8,
    hostile: bool = True,
    reply: bool = True,
    **knobs: Any,
) -> st.SearchStrategy[tuple[Any, list[list[ToolCall]]]]:
    """A case (from ``case_strategy``, else :func:`cases` with ``knobs``) and steps over its order.

    See :func:`call_sequences` for ``max_steps``, ``hostile`` and ``reply``. The
    steps may end before the episode does; a caller sends the final ``reply``.
    """
    drawn_cases = case_strategy if case_strategy is not None else cases(**knobs)
    # One strategy per case's names, not one per draw: hypothesis validates each new
    # strategy, which cost more than the episode it fed; examples often share a case.
    steps_over = functools.lru_cache(maxsize=256)(
        lambda *names: call_sequences(*names, max_steps=max_steps, hostile=hostile, reply=reply)
    )

    @st.composite
    def draw(draw_: st.DrawFn) -> tuple[Any, list[list[ToolCall]]]:
        case = draw_(drawn_cases)
        order_ids, skus, amounts = case_names(case)
        steps = draw_(steps_over(tuple(order_ids), tuple(skus), tuple(amounts)))
        return case, steps

    return draw()


# -- the state machine -----------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _action_strategy(
    order_ids: tuple[str, ...], skus: tuple[str, ...], amounts: tuple[int, ...]
) -> st.SearchStrategy[str]:
    """:func:`action_strings` over one case's names, built once per names (as the gate's machine)."""
    return action_strings(order_ids, skus, amounts)


def play_graded(env: Any, policy: Any, reset: dict[str, Any]) -> dict[str, Any]:
    """One episode of ``policy`` on ``env`` (a ``RefundDeskEnv``) through the text interface,
    started with ``env.reset(**reset)``, and its score as the commands grade it: a policy
    that hands in an edited log after its episode (``edit_log``) is graded on that log
    (the desk's ``after_episode``)."""
    from batchgate_gym.desks.registry import get

    observation, info = env.reset(**reset)
    policy.reset(observation, info)
    terminated = truncated = False
    while not (terminated or truncated):
        observation, _reward, terminated, truncated, info = env.step(policy.act(observation))
    assert terminated, "every policy ends with a reply"
    after_episode = get("refund").policies.after_episode
    assert after_episode is not None
    return dict(after_episode(env, policy, info)["score"])


class RefundMachine(EpisodeMachine):
    """Random and hostile play against ``RefundDeskEnv`` with its invariants checked at every step.

    Each run draws a case (:func:`cases`: procedural and both splits) and a rule set,
    then steps with valid, hostile and arbitrary actions, resetting when an episode
    ends. After every step the reward is in [-1, 1] and 0 unless the episode ended; at
    the end of an episode every term is in [0, 1], the money cost in [0, 1] (0 under
    the original rules), the log verifies and its replay equals the live score.
    Override :meth:`make_env` to change the environment.
    """

    max_turns = 8
    min_reward = -1.0  # the money cost of payments the desk was not owed is at most 1

    def make_env(self, case: Any) -> Any:
        from batchgate_gym.envs.refund.text import RefundDeskEnv

        return RefundDeskEnv([case], rules=self.rule_set, max_turns=self.max_turns)

    @initialize(case=st.deferred(lambda: cases()), rules=st.sampled_from(("default", "original")))
    def start(self, case: Any, rules: str) -> None:
        self.rule_set = rules  # not ``rules``: the state machine's own attribute
        order_ids, skus, amounts = case_names(case)
        self.begin(case, _action_strategy(tuple(order_ids), tuple(skus), tuple(amounts)))

    def check_episode(self, terminated: bool) -> None:
        from .grader import TERMS
        from .replay import replay

        score = self.info["score"]
        assert all(0.0 <= score[term] <= 1.0 for term in TERMS), score
        assert 0.0 <= score["money_cost"] <= 1.0 and (self.rule_set == "default" or score["money_cost"] == 0)
        assert self.info["log_intact"]
        replayed = replay(self.case, self.env.export_log(), head=self.info["log_head"])
        assert replayed.as_dict() == score, "replaying the log must give the live score"


__all__ = [
    "CAP_CENTS",
    "SOURCES",
    "TOOL_NAMES",
    "RefundMachine",
    "action_strings",
    "amounts",
    "any_calls",
    "arbitrary_actions",
    "call_sequences",
    "case_dicts",
    "case_names",
    "cases",
    "episodes",
    "file_cases",
    "hostile_actions",
    "hostile_calls",
    "hostile_values",
    "keys",
    "lookalikes",
    "order_ids",
    "play_graded",
    "procedural_cases",
    "reasons",
    "render_action",
    "skus",
    "split_cases",
    "tool_calls",
    "valid_actions",
]
