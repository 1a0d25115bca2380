"""Recovery (``recovery=True``): a payment can be taken back, and the grade says what that is worth.

An agent that notices a duplicate and voids it must score strictly between one that
never paid twice and one that left the duplicate standing; paying twice on purpose
to void later must not beat careful; the money that came back is reported; the void
is logged, lags and fails like any call, and replay re-derives it exactly.
"""

from __future__ import annotations

from typing import Any

import pytest

from batchgate_gym.desks.refund.cases import case_from_dict
from batchgate_gym.desks.refund.generator import build_case
from batchgate_gym.desks.refund.replay import replay
from batchgate_gym.desks.refund.world import RefundWorld
from batchgate_gym.envs.refund.text import RefundDeskEnv
from batchgate_gym.kernel.ledger import LogIntegrityError, rechain
from batchgate_gym.policies.refund.recovery import RECOVERY_POLICIES
from batchgate_gym.policies.refund.reference import REFERENCE_POLICIES

POLICIES = {**REFERENCE_POLICIES, **RECOVERY_POLICIES}


def one_line_case(fault: str | None = None, lag: int | None = None) -> Any:
    data = build_case(3, family="clean-single", variant=0, lines=1, prior_rows=0, fault_rate=0.0)
    faults: dict[str, Any] = {}
    if fault:
        faults["issue_refund"] = fault
    if lag:
        faults.update(refund_history="stale_after_write", lag_reads=lag)
    data["tool_faults"] = faults
    return case_from_dict(data, "<case>")


def pay_twice(env: RefundDeskEnv, case: Any, void: bool) -> dict[str, Any]:
    order, line = case.order.order_id, case.order.lines[0]
    env.reset(seed=0)
    env.step(f'lookup_order("{order}"); refund_history("{order}")')
    for key in ("k-1", "k-2"):
        env.step(f'issue_refund("{order}", {line.amount_cents}, "{key}", "owed", "{line.sku}")')
    if void:
        env.step(f'void_refund("{order}", "k-2", "a duplicate of k-1")')
    *_, info = env.step('reply("done")')
    return info


def mean_rewards(cases: Any, seeds: int | None = None) -> dict[str, float]:
    out = {}
    for name, policy in POLICIES.items():
        env = RefundDeskEnv(cases, recovery=True)
        rewards = []
        for index in range(seeds if seeds is not None else len(env.source.cases)):
            options = None if seeds is not None else {"case_index": index}
            observation, info = env.reset(seed=index, options=options)
            agent = policy()
            agent.reset(observation, info)
            while True:
                observation, reward, terminated, truncated, info = env.step(agent.act(observation))
                if terminated or truncated:
                    break
            rewards.append(reward)
        out[name] = sum(rewards) / len(rewards)
    return out


def test_a_voided_duplicate_scores_between_never_paying_twice_and_leaving_it_standing() -> None:
    case = one_line_case()
    env = RefundDeskEnv([case], recovery=True)
    standing, voided = pay_twice(env, case, void=False), pay_twice(env, case, void=True)
    assert standing["score"]["no_duplicate_effects"] == 0.0 and standing["score"]["recovered_cents"] == 0
    assert voided["score"]["no_duplicate_effects"] == 0.5
    assert voided["score"]["recovered_cents"] == case.order.lines[0].amount_cents
    assert voided["score"]["duplicate_effects"] == 1  # the money did move twice, and is reported
    assert standing["score"]["reward"] < voided["score"]["reward"] < 1.0


def test_without_recovery_there_is_no_void_tool_and_nothing_changes() -> None:
    case = one_line_case()
    env = RefundDeskEnv([case])
    observation, _ = env.reset(seed=0)
    assert "void_refund" not in observation
    info = pay_twice(env, case, void=True)
    assert info["score"]["no_duplicate_effects"] == 0.0 and info["score"]["recovered_cents"] == 0
    with pytest.raises(ValueError, match="recovery"):
        RefundDeskEnv([case], rules="original", recovery=True)
    with pytest.raises(ValueError, match="recovery"):
        RefundDeskEnv([case], recovery=1)


def test_a_void_is_logged_can_time_out_and_shows_late_in_a_lagging_ledger() -> None:
    case = one_line_case(fault="timeout_but_executes", lag=2)
    world = RefundWorld(recovery=True)
    world.reset(case)
    order, line = case.order.order_id, case.order.lines[0]
    world.issue_refund(order, line.amount_cents, "k-1", "owed", line.sku)
    assert world.void_refund(order, "k-1", "paid by mistake")["status"] == "unknown"  # went through anyway
    assert world.voided == {0}
    assert world.refund_history(order)["refunds"] == []  # the ledger lags the payment and its void
    world.refund_history(order)
    assert world.refund_history(order)["refunds"][0]["voided"] is True
    refused = world.void_refund(order, "k-1", "again")
    assert "no payment" in refused["error"] and world.ledger.entries[-1].executed is False


def test_careful_notice_and_void_and_naive_in_order_and_the_attacker_below_careful() -> None:
    for means in (mean_rewards("eval"), mean_rewards(None, seeds=1000)):
        assert means["careful"] == 1.0
        assert means["naive"] < means["notice-and-void"] < means["careful"]
        assert means["pay-twice-void"] <= means["careful"] - 0.05


def test_a_log_with_voids_replays_exactly_and_dropping_a_void_is_refused() -> None:
    case = one_line_case(fault="succeeds_but_note_write_fails", lag=1)
    env = RefundDeskEnv([case], recovery=True)
    observation, info = env.reset(seed=0)
    agent = RECOVERY_POLICIES["notice-and-void"]()
    agent.reset(observation, info)
    while True:
        observation, _, terminated, truncated, info = env.step(agent.act(observation))
        if terminated or truncated:
            break
    log = env.export_log()
    assert info["score"]["recovered_cents"] > 0
    assert replay(case, log, head=info["log_head"]).as_dict() == info["score"]
    without_void = rechain([entry for entry in log if entry["action"] != "void_refund"])
    with pytest.raises(LogIntegrityError):
        replay(case, without_void, head=info["log_head"])


def test_the_recovery_script_tabulates_real_episodes(tmp_path: Any) -> None:
    import json

    from benchmark_scripts import load_script

    assert (
        load_script("refund_knobs").main(
            ["--queue-seeds", "1", "--recovery-seeds", "40", "--out", str(tmp_path)]
        )
        == 0
    )
    rows = json.loads((tmp_path / "refund_recovery.json").read_text())["rows"]
    seeded = {row["policy"]: row for row in rows if row["cases"] == "seeds 0..39"}
    assert seeded["careful"]["mean_reward"] == 1.0 and seeded["careful"]["duplicate_effects"] == 0
    assert seeded["notice-and-void"]["recovered_cents"] == seeded["notice-and-void"]["duplicate_cents"] > 0
    assert seeded["naive"]["recovered_cents"] == 0
