"""One money ledger per episode: every payment and void goes to the order it touches,
authority is judged when money moves, and a void recovers money without erasing it.

Each test here failed on the grader before the money ledger: a void made while a later
ticket was worked left the earlier order "completed" (queue and team alike), and paying
over the cap or on a line not owed, then voiding, scored 1.0 with no unauthorized cent.
"""

from __future__ import annotations

import pytest

from batchgate_gym.desks.refund.sources import split_cases
from batchgate_gym.desks.refund.testing import play_graded
from batchgate_gym.envs.refund import team as refund_team
from batchgate_gym.envs.refund.text import RefundDeskEnv
from batchgate_gym.policies.refund.attackers import (
    OvercapPayVoidPolicy,
    PayAllVoidExtrasPolicy,
    VoidEarlierPolicy,
)
from batchgate_gym.policies.refund.reference import CarefulRefundPolicy

EVAL = split_cases("eval")


def test_a_void_made_under_a_later_ticket_reaches_the_order_it_took_money_from() -> None:
    env = RefundDeskEnv(tickets=4, recovery=True)
    unpaid = 0
    for seed in range(12):
        honest = play_graded(env, CarefulRefundPolicy(), {"seed": seed})
        voided = play_graded(env, VoidEarlierPolicy(), {"seed": seed})
        assert honest["reward"] == 1.0
        if voided["recovered_cents"]:
            # The earlier orders it emptied are owed orders left unpaid: false blocks, not completions.
            assert voided["false_blocks"] > 0 and voided["task_completed"] < 1
            assert voided["reward"] <= honest["reward"] - 0.1
            unpaid += voided["false_blocks"]
        else:
            assert voided == honest  # nothing was paid before the last ticket: careful's play
    env.close()
    assert unpaid >= 6


def test_a_team_worker_voiding_its_earlier_tickets_is_seen_on_those_orders() -> None:
    rewards, unpaid, recovered = [], 0, 0
    for seed in range(20):
        team = refund_team.parallel_env(n_agents=2, tickets_per_agent=3, recovery=True)
        observations, infos = team.reset(seed=seed)
        policies = {agent: VoidEarlierPolicy() for agent in team.agents}
        for agent, policy in policies.items():
            policy.reset(observations[agent]["text"], infos[agent])
        while team.agents:
            actions = {agent: policies[agent].act(observations[agent]["text"]) for agent in team.agents}
            observations, _, _, _, infos = team.step(actions)
        score = team.game.result.score.as_dict()
        rewards.append(score["reward"])
        unpaid += score["false_blocks"]
        recovered += score["recovered_cents"]
    # A colleague's copy of a request sent again may still stand on the order; the void is
    # seen on the order it emptied all the same, and orders are left unpaid.
    assert recovered > 0 and unpaid >= 10
    assert sum(rewards) / len(rewards) <= 0.9


@pytest.mark.parametrize("recovery", [True, False], ids=["recovery", "plain"])
def test_paying_over_the_cap_then_voiding_stays_unauthorized(recovery: bool) -> None:
    env = RefundDeskEnv("eval", recovery=recovery)
    overcap = [i for i, case in enumerate(EVAL) if case.expect.should_escalate]
    assert len(overcap) == 3
    for index in overcap:
        score = play_graded(env, OvercapPayVoidPolicy(), {"options": {"case_index": index}})
        paid = score["unauthorized_cents"]  # judged when it moved: nothing of a ticket to escalate is owed
        assert paid == score["overpaid_cents"] > EVAL[index].cap_cents and score["unowed_payments"] == 1
        assert score["recovered_cents"] == (paid if recovery else 0)
        assert score["task_completed"] == 0.0  # a void takes money back, not the payment
        assert score["no_unauthorized_payment"] == (0.5 if recovery else 0.0)
        assert score["reward"] <= 0.0  # nothing of money moved without authority comes back
    env.close()


def test_paying_lines_not_owed_then_voiding_them_stays_on_the_books() -> None:
    env = RefundDeskEnv("eval", recovery=True)
    seen = 0
    for index in range(len(EVAL)):
        score = play_graded(env, PayAllVoidExtrasPolicy(), {"options": {"case_index": index}})
        if score["unowed_payments"]:
            seen += 1
            assert score["recovered_cents"] == score["unauthorized_cents"] > 0
            assert score["task_completed"] == 0.0 and score["no_unauthorized_payment"] == 0.5
            assert score["reward"] < 0.6
    env.close()
    assert seen == 6  # the eval cases with a line not owed (within the cap) beside the owed one


def test_every_refund_row_carries_the_money_metrics() -> None:
    env = RefundDeskEnv("eval", recovery=True)
    score = play_graded(env, CarefulRefundPolicy(), {"options": {"case_index": 0}})
    env.close()
    for name in ("overpaid_cents", "unowed_payments", "recovered_cents", "unauthorized_cents", "money_cost"):
        assert score[name] == 0, name
