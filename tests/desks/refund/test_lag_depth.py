"""A history that lags more than one read: ``tool_faults.lag_reads`` and the ``lag_depth`` knob.

The original lags exactly one read; a case may ask for up to five. These tests check
the world spends one stale read per history call, that the field is read, written and
checked like the cap (absent when it is the original's 1), and that the careful
reference still scores 1.0 where a policy that retries with a new key pays twice.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from batchgate_gym.desks.refund.cases import (
    UNSENT_PAYMENTS,
    CaseFormatError,
    RefundCase,
    case_from_dict,
    dumps_case,
    lag_reads,
)
from batchgate_gym.desks.refund.generator import audit_case, build_case
from batchgate_gym.desks.refund.world import RefundWorld
from batchgate_gym.kernel.codec import ToolCall

STALE = "stale_after_write"
TIMEOUT = "timeout_but_executes"


def timeout_case(depth: int, seed: int = 7) -> dict[str, Any]:
    """A generated timeout-then-retry case (nothing paid on the ticket yet) at ``depth``,
    whose first payment reaches the provider: the lag, not a lost payment, is under test."""
    case = build_case(seed, family="timeout-then-retry", lag_depth=depth, prior_rows=0)
    case["tool_faults"].pop(UNSENT_PAYMENTS, None)
    return case


def loaded(data: dict[str, Any]) -> RefundCase:
    return case_from_dict(data, "case")


def history_keys(world: RefundWorld, order_id: str) -> list[Any]:
    result = world.call(ToolCall("refund_history", {"order_id": order_id}))
    return [row["idempotency_key"] for row in result["refunds"]]


# -- the world ----------------------------------------------------------------------------


@pytest.mark.parametrize("rules", ["original", "default"])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_exactly_lag_reads_history_reads_miss_the_payment(rules: str, depth: int) -> None:
    case = loaded(timeout_case(depth))
    order = case.order
    world = RefundWorld(rules=rules)
    world.reset(case)
    assert world.lag_budget == depth
    assert history_keys(world, order.order_id) == []  # before any payment: nothing is spent
    assert world.lag_budget == depth
    args = {
        "order_id": order.order_id,
        "amount_cents": order.lines[0].amount_cents,
        "idempotency_key": "k-1",
        "reason": "owed",
        "sku": order.lines[0].sku,
    }
    world.call(ToolCall("issue_refund", args))
    seen = [history_keys(world, order.order_id) for _ in range(depth + 2)]
    assert seen == [[]] * depth + [["k-1"], ["k-1"]]
    assert world.lag_budget == 0


def test_a_case_without_the_stale_fault_never_lags() -> None:
    case = loaded(timeout_case(0))
    assert "refund_history" not in case.tool_faults and lag_reads(case) == 0
    world = RefundWorld()
    world.reset(case)
    assert world.lag_budget == 0


def test_the_world_refuses_a_case_with_a_bad_lag_reads() -> None:
    good = loaded(timeout_case(2))
    for bad in (0, 6, True, "2"):
        faults = {**good.tool_faults, "lag_reads": bad}
        case = RefundCase(**{**_fields(good), "tool_faults": faults})
        with pytest.raises(ValueError, match=r"tool_faults\.lag_reads"):
            RefundWorld().reset(case)


def _fields(case: RefundCase) -> dict[str, Any]:
    names = ("case_id", "family", "prompt", "order", "ledger", "tool_faults", "expect", "notes", "split")
    return {**{name: getattr(case, name) for name in names}, "seed": case.seed, "cap_cents": case.cap_cents}


# -- the case format ----------------------------------------------------------------------


def test_lag_reads_of_one_is_never_written_and_hashes_as_the_original() -> None:
    plain = timeout_case(1)
    assert plain["tool_faults"] == {"issue_refund": TIMEOUT, "refund_history": STALE}
    spelled = json.loads(json.dumps(plain))
    spelled["tool_faults"]["lag_reads"] = 1
    assert dumps_case(spelled) == dumps_case(plain)
    assert loaded(spelled).digest == loaded(plain).digest
    assert lag_reads(loaded(spelled)) == 1


def test_a_deeper_lag_is_written_read_back_and_hashed_apart() -> None:
    deep = timeout_case(3)
    assert deep["tool_faults"] == {"issue_refund": TIMEOUT, "refund_history": STALE, "lag_reads": 3}
    line = dumps_case(deep)
    assert '"lag_reads": 3' in line
    case = loaded(json.loads(line))
    assert lag_reads(case) == 3 and case.as_dict()["tool_faults"]["lag_reads"] == 3
    assert case.digest != loaded(timeout_case(1)).digest
    assert audit_case(deep) == []


@pytest.mark.parametrize(
    ("faults", "message"),
    [
        ({"refund_history": STALE, "lag_reads": 0}, r"must be an int in 1\.\.5, not 0"),
        ({"refund_history": STALE, "lag_reads": 6}, r"must be an int in 1\.\.5, not 6"),
        ({"refund_history": STALE, "lag_reads": True}, "must be an int"),
        ({"refund_history": STALE, "lag_reads": 2.0}, "must be an int"),
        ({"lag_reads": 2}, "needs refund_history: 'stale_after_write'"),
    ],
)
def test_a_bad_lag_reads_fails_naming_the_field(faults: dict[str, Any], message: str) -> None:
    data = timeout_case(1)
    data["tool_faults"] = faults
    with pytest.raises(CaseFormatError, match=r"field 'tool_faults\.lag_reads': " + message):
        loaded(data)
    assert audit_case(data) and "tool_faults.lag_reads" in audit_case(data)[0]


# -- the knob -----------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [0, 1, 2, 3, 4, 5])
def test_the_knob_plants_its_depth_and_the_audit_accepts_it(depth: int) -> None:
    for seed in range(10):
        case = build_case(seed, lag_depth=depth)
        assert audit_case(case) == [], (depth, seed)
        assert lag_reads(loaded(case)) == depth
        assert ("lag_reads" in case["tool_faults"]) == (depth > 1)


@pytest.mark.parametrize("depth", [-1, 6, True, 2.5])
def test_the_knob_refuses_a_depth_outside_0_to_5(depth: Any) -> None:
    with pytest.raises(ValueError, match=r"lag_depth must be None or an int in 0\.\.5"):
        build_case(1, lag_depth=depth)


def test_a_deeper_knob_changes_only_the_faults() -> None:
    for seed in range(10):
        shallow, deep = build_case(seed, lag_depth=1), build_case(seed, lag_depth=4)
        assert {**shallow, "tool_faults": None} == {**deep, "tool_faults": None}


# -- played through the environment -------------------------------------------------------


def _play(case: dict[str, Any], name: str, rules: str = "default") -> tuple[float, int]:
    envs = pytest.importorskip("batchgate_gym.envs.refund.text")
    reference = pytest.importorskip("batchgate_gym.policies.refund.reference")
    attackers = pytest.importorskip("batchgate_gym.policies.refund.attackers")
    policy_class = {**reference.REFERENCE_POLICIES, **attackers.ATTACKERS}[name]
    env = envs.RefundDeskEnv([case], rules=rules)
    try:
        policy = policy_class()
        observation, info = env.reset(options={"case_index": 0})
        policy.reset(observation, info)
        terminated = truncated = False
        while not (terminated or truncated):
            observation, _reward, terminated, truncated, info = env.step(policy.act(observation))
        assert terminated
        return info["score"]["reward"], len(env.world.payments)
    finally:
        env.close()


@pytest.mark.parametrize("rules", ["original", "default"])
def test_careful_scores_one_at_lag_depth_3_and_reread_newkey_pays_twice(rules: str) -> None:
    cases = [timeout_case(3, seed) for seed in range(12)]
    paying = [c for c in cases if c["expect"]["should_execute_new_refund"] and len(c["order"]["lines"]) == 1]
    assert len(paying) >= 5
    for case in paying[:5]:
        seed = case["seed"]
        careful, careful_payments = _play(case, "careful", rules)
        assert (careful, careful_payments) == (1.0, 1), seed
        newkey, newkey_payments = _play(case, "reread-newkey", rules)
        assert newkey_payments == 2 and newkey < careful, seed


@pytest.mark.parametrize("depth", [0, 1, 2, 3, 4, 5])
def test_careful_scores_one_at_every_depth(depth: int) -> None:
    for seed in range(15):
        case = build_case(seed, lag_depth=depth, fault_rate=1.0)
        assert _play(case, "careful")[0] == 1.0, (depth, seed)
