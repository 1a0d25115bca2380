"""Properties of the refund desk over drawn play: hostile arguments, replay, determinism.

Play is random calls of the five tools with arguments drawn from the well-formed
and the hostile (amounts as text, floats, bools, lists or huge numbers; order ids
with look-alike characters; keys 1 and "1"; blank reasons; unknown tools), in call
syntax and JSON, as :mod:`batchgate_gym.desks.refund.testing` draws it. Whatever is drawn: the environment never raises and every observation is in
its space; under the default rules a refused call moves no money; the exported
log replays to exactly the live score; the same seed and actions give the same
transcript. Bounded by the ``ci`` hypothesis profile; ``long`` runs 10,000.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from batchgate_gym.desks.refund.cases import load_cases
from batchgate_gym.desks.refund.replay import replay
from batchgate_gym.desks.refund.testing import RefundMachine, call_sequences, render_action
from batchgate_gym.envs.refund.text import RefundDeskEnv
from batchgate_gym.kernel.codec import ToolCall

CASES = load_cases(Path(__file__).resolve().parents[2] / "data" / "dsed_eval_curated.jsonl")
ORDER_IDS = sorted({case.order.order_id for case in CASES})
SKUS = sorted({line.sku for case in CASES for line in case.order.lines})
AMOUNTS = sorted({line.amount_cents for case in CASES for line in case.order.lines})
# Every order id and sku of the fixture, so a call often names another case's order.
STEPS = call_sequences(ORDER_IDS, SKUS, AMOUNTS)


def play(rules: str, index: int, steps: list[list[ToolCall]]) -> tuple[RefundDeskEnv, dict[str, Any]]:
    env = RefundDeskEnv(CASES, rules=rules)
    observation, info = env.reset(seed=index, options={"case_index": index})
    assert env.observation_space.contains(observation)
    for position, calls in enumerate(steps):  # call syntax and JSON in turn
        observation, _reward, terminated, truncated, info = env.step(render_action(calls, position % 2 == 1))
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


TestRefundMachine = pytest.mark.slow(RefundMachine.TestCase)  # a hypothesis state machine
