"""Properties of the refund desk over drawn play: hostile arguments, replay, determinism.

Play is random calls of the five tools with arguments drawn from the well-formed
and the hostile (amounts as text, floats, bools, lists or huge numbers; order ids
with look-alike characters; keys 1 and "1"; blank reasons), in call syntax and
JSON. Whatever is drawn: the environment never raises and every observation is in
its space; under the default rules a refused call moves no money; the exported
log replays to exactly the live score; the same seed and actions give the same
transcript. Bounded by the ``ci`` hypothesis profile; ``long`` runs 10,000.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from batchgate_gym.desks.refund.cases import load_cases
from batchgate_gym.desks.refund.replay import replay
from batchgate_gym.envs.refund import RefundDeskEnv

CASES = load_cases(Path(__file__).resolve().parents[2] / "data" / "dsed_eval_curated.jsonl")
ORDER_IDS = sorted({case.order.order_id for case in CASES})
SKUS = sorted({line.sku for case in CASES for line in case.order.lines})

HOSTILE_VALUES = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.lists(st.integers(0, 9), max_size=3),
    st.text(max_size=12),
    st.sampled_from(["1200", "1200.0", " 1200 ", "0", "-14000"]),
)
ORDER_ID = st.one_of(
    st.sampled_from(ORDER_IDS),
    st.sampled_from(ORDER_IDS).map(lambda s: s.replace("O", "\u039f")),  # a Greek capital omicron
    st.sampled_from(ORDER_IDS).map(lambda s: s.lower() + " "),
    HOSTILE_VALUES,
)
AMOUNT = st.one_of(st.integers(1, 20_000), HOSTILE_VALUES)
KEY = st.one_of(st.sampled_from(["k-1", "k-2", "1"]), st.just(1), HOSTILE_VALUES)
REASON = st.one_of(st.sampled_from(["customer returned the item", "", "   ", "ok"]), HOSTILE_VALUES)
SKU = st.one_of(st.sampled_from(SKUS), st.just(""), HOSTILE_VALUES)


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


CALLS = st.one_of(
    st.builds(lambda o: _call("lookup_order", order_id=o), ORDER_ID),
    st.builds(lambda o: _call("refund_history", order_id=o), ORDER_ID),
    st.builds(
        lambda o, a, k, r, s: _call(
            "issue_refund", order_id=o, amount_cents=a, idempotency_key=k, reason=r, sku=s
        ),
        ORDER_ID,
        AMOUNT,
        KEY,
        REASON,
        SKU,
    ),
    st.builds(lambda o, r: _call("escalate", order_id=o, reason=r), ORDER_ID, REASON),
    st.builds(lambda m: _call("reply", message=m), st.one_of(st.text(max_size=20), HOSTILE_VALUES)),
    st.builds(lambda n: _call(n), st.sampled_from(["note", "refund_all", "issue_refund"])),
)
STEPS = st.lists(st.lists(CALLS, min_size=1, max_size=3), min_size=1, max_size=8)


def _action(calls: list[dict[str, Any]]) -> str:
    try:
        return json.dumps(calls, allow_nan=True)
    except (TypeError, ValueError):
        return repr(calls)


def play(rules: str, index: int, steps: list[list[dict[str, Any]]]) -> tuple[RefundDeskEnv, dict[str, Any]]:
    env = RefundDeskEnv(CASES, rules=rules)
    observation, info = env.reset(seed=index, options={"case_index": index})
    assert env.observation_space.contains(observation)
    for calls in steps:
        observation, _reward, terminated, truncated, info = env.step(_action(calls))
        assert env.observation_space.contains(observation)
        if terminated or truncated:
            return env, info
    return env, env.step('reply("done")')[4]


@given(st.sampled_from(["default", "original"]), st.integers(0, len(CASES) - 1), STEPS)
def test_any_play_replays_to_the_live_score_and_never_raises(rules: str, index: int, steps: Any) -> None:
    env, info = play(rules, index, steps)
    case = env.unwrapped.world.case
    assert replay(case, env.export_log(), head=info["log_head"]).as_dict() == info["score"]
    score = info["score"]
    assert all(0.0 <= score[term] <= 1.0 for term in ("reward", "task_completed", "log_replayable"))


@given(st.integers(0, len(CASES) - 1), STEPS)
def test_under_the_default_rules_only_well_formed_payments_move_money(index: int, steps: Any) -> None:
    env, _info = play("default", index, steps)
    world = env.unwrapped.world
    case = world.case
    lines = {line.sku for line in case.order.lines}
    for payment in world.payments:
        assert payment.order_id == case.order.order_id  # no look-alike or other order is paid
        assert type(payment.amount_cents) is int and payment.amount_cents > 0
        assert payment.sku in lines


@given(st.integers(0, len(CASES) - 1), STEPS)
def test_the_same_actions_give_the_same_transcript(index: int, steps: Any) -> None:
    first, first_info = play("default", index, steps)
    second, second_info = play("default", index, steps)
    assert first.export_log() == second.export_log() and first_info == second_info
