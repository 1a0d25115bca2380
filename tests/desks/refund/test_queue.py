"""A queue of tickets over one shared ledger: the format, the generator, the world, the grade.

The ``tickets`` knob makes a case a queue: the first ticket and the others in its
``queue``, some of them the same request sent again. These tests pin what that
means: the file format round-trips and names broken fields; every ticket audits
clean against the shared ledger; the reply to one ticket brings the next; a
payment stays missing from a lagging ledger whichever ticket reads it; a request
paid twice across tickets is a duplicate; careful scores 1.0 on queues, naive
below refuse-all; replay equals the live score.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchgate_gym.desks.refund.cases import CaseFormatError, case_from_dict, dumps_case
from batchgate_gym.desks.refund.generator import audit_case, build_case
from batchgate_gym.desks.refund.replay import replay
from batchgate_gym.desks.refund.testing import episodes, procedural_cases, render_action
from batchgate_gym.desks.refund.world import RefundWorld
from batchgate_gym.envs.refund.text import RefundDeskEnv
from batchgate_gym.kernel.codec import ToolCall
from batchgate_gym.policies.refund.reference import REFERENCE_POLICIES, CarefulRefundPolicy


def queue_case(seed: int = 7, tickets: int = 5, **knobs: Any) -> Any:
    return case_from_dict(build_case(seed, tickets=tickets, **knobs), "<queue>")


def play(env: RefundDeskEnv, policy: Any, seed: int) -> tuple[float, dict[str, Any]]:
    observation, info = env.reset(seed=seed)
    policy.reset(observation, info)
    while True:
        observation, reward, terminated, truncated, info = env.step(policy.act(observation))
        if terminated or truncated:
            return float(reward), info


# -- the format ---------------------------------------------------------------------------


def test_a_queue_case_round_trips_through_its_jsonl_line() -> None:
    data = build_case(7, tickets=5)
    line = dumps_case(data)
    case = case_from_dict(json.loads(line), "<line>")
    assert case.as_dict() == json.loads(line)
    assert len(case.tickets) == 5 and all(ticket.ledger == case.ledger for ticket in case.tickets)
    assert all(set(item) & {"ledger", "split", "seed", "cap_cents"} == set() for item in data["queue"])
    single = case_from_dict(build_case(7), "<one>")
    assert case.digest != single.digest  # the queue is part of what a log binds itself to


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["queue"][0].__setitem__("ledger", []), r"queue\[0\]\.ledger"),
        (lambda d: d["queue"][1].__setitem__("case_id", d["case_id"]), "its own case_id"),
        (lambda d: d["queue"][0]["order"]["lines"][0].__setitem__("amount_cents", -1), r"queue\[0\].*amount"),
        (lambda d: d.__setitem__("queue", []), "1 to 15 tickets"),
    ],
)
def test_a_broken_queue_names_the_ticket_and_field(edit: Any, message: str) -> None:
    data = copy.deepcopy(build_case(7, tickets=5))
    edit(data)
    with pytest.raises(CaseFormatError, match=message):
        case_from_dict(data, "cases.jsonl:3")


def test_a_request_sent_again_must_repeat_its_order_and_expectation() -> None:
    data = copy.deepcopy(build_case(7, tickets=5))
    first = data["order"]["order_id"]
    data["queue"][0] = {**data["queue"][0], "order": data["order"], "expect": {**data["expect"]}}
    data["queue"][0]["expect"]["correct_amount_cents"] += 1
    with pytest.raises(CaseFormatError, match=f"order '{first}' again"):
        case_from_dict(data, "cases.jsonl:1")


# -- the generator ----------------------------------------------------------------------------


@pytest.mark.parametrize("tickets", [2, 3, 6, 16])
def test_every_ticket_audits_clean_against_the_shared_ledger(tickets: int) -> None:
    for seed in range(20):
        data = build_case(seed, tickets=tickets)
        case = case_from_dict(data, "<queue>")
        assert len(case.tickets) == tickets
        for ticket in case.tickets:
            assert audit_case(ticket.as_dict()) == []
        orders = [ticket.order.order_id for ticket in case.tickets]
        assert len(set(orders)) == tickets - max(1, (tickets - 1) // 3)  # the requests sent again
        keys = [row.idempotency_key for row in case.ledger]
        assert len(keys) == len(set(keys))


def test_the_first_ticket_is_the_seeds_own_case_and_queues_are_deterministic() -> None:
    alone = build_case(11)
    queue = build_case(11, tickets=4)
    assert queue["order"] == alone["order"] and queue["expect"] == alone["expect"]
    assert all(row in queue["ledger"] for row in alone["ledger"])
    assert dumps_case(build_case(11, tickets=4)) == dumps_case(queue)
    assert dumps_case(build_case(12, tickets=4)) != dumps_case(queue)


@pytest.mark.parametrize("bad", [0, 17, True, 2.0, "3", None])
def test_the_tickets_knob_is_checked(bad: Any) -> None:
    with pytest.raises(ValueError, match="tickets"):
        build_case(1, tickets=bad)
    with pytest.raises(ValueError, match="tickets"):
        RefundDeskEnv(tickets=bad)


def test_tickets_is_for_procedural_cases_only() -> None:
    with pytest.raises(ValueError, match="cases=None"):
        RefundDeskEnv("eval", tickets=3)


# -- the world ------------------------------------------------------------------------------


def test_the_reply_to_one_ticket_brings_the_next_and_the_last_ends_the_episode() -> None:
    case = queue_case(tickets=3)
    env = RefundDeskEnv([case])
    observation, _ = env.reset(seed=0)
    assert "Your queue holds 3 tickets" in observation
    for ticket in case.tickets[1:]:
        observation, _, terminated, _, _ = env.step('reply("done")')
        assert not terminated
        assert json.loads(observation.splitlines()[-1])["next_ticket"] == {
            "order_id": ticket.order.order_id,
            "message": ticket.prompt,
        }
        assert env.world.ticket is ticket
    *_, terminated, _, info = env.step('reply("done")')
    assert terminated and info["log_intact"]


def test_only_the_current_tickets_order_can_be_paid_under_the_default_rules() -> None:
    case = queue_case(tickets=3)
    first, second = case.tickets[0], next(t for t in case.tickets if t.order.order_id != case.order.order_id)
    world = RefundWorld()
    world.reset(case)
    while world.ticket.order.order_id != second.order.order_id:
        world.reply("next")
    line = first.order.lines[0]
    result = world.issue_refund(first.order.order_id, line.amount_cents, "k-1", "old ticket", line.sku)
    assert "ticket's order" in result["error"] and world.payments == []


def _lagging_queue() -> Any:
    """Two tickets about one order; the first's history lags two reads after a payment."""
    data = build_case(5, family="clean-single", variant=0, lines=1, prior_rows=0, fault_rate=0.0)
    data["tool_faults"] = {"refund_history": "stale_after_write", "lag_reads": 2}
    again = {k: v for k, v in data.items() if k not in ("ledger", "split", "seed", "cap_cents")}
    again["case_id"] = data["case_id"] + "-t2"
    return case_from_dict({**data, "queue": [again]}, "<lagging queue>")


def test_a_payment_stays_missing_from_a_lagging_ledger_whichever_ticket_reads_it() -> None:
    case = _lagging_queue()
    world = RefundWorld()
    world.reset(case)
    order, line = case.order.order_id, case.order.lines[0]
    world.issue_refund(order, line.amount_cents, "k-1", "owed", line.sku)
    assert world.refund_history(order)["refunds"] == []  # ticket 1's first stale read
    world.reply("paid")
    assert world.refund_history(order)["refunds"] == []  # ticket 2 reads: the lag is not spent yet
    assert [row["idempotency_key"] for row in world.refund_history(order)["refunds"]] == ["k-1"]


def test_paying_a_request_sent_again_is_a_duplicate_and_fails_the_order() -> None:
    case = _lagging_queue()
    env = RefundDeskEnv([case])
    env.reset(seed=0)
    order, line = case.order.order_id, case.order.lines[0]
    pay = 'issue_refund("{o}", {a}, "{k}", "owed", "{s}")'
    for key in ("k-1", "k-2"):
        env.step(f'lookup_order("{order}"); refund_history("{order}")')
        env.step(pay.format(o=order, a=line.amount_cents, k=key, s=line.sku))
        *_, terminated, _, info = env.step('reply("refunded")')
    assert terminated
    score = info["score"]
    assert score["duplicate_effects"] == 1 and score["duplicate_cents"] == line.amount_cents
    assert score["no_duplicate_effects"] == 0.0 and score["task_completed"] == 1.0  # one order, graded once


# -- the policies and the grade ----------------------------------------------------------------


@pytest.mark.parametrize("tickets", [2, 4])
def test_careful_is_perfect_on_queues_and_blind_retrying_is_worse_than_doing_nothing(tickets: int) -> None:
    means = {}
    for name, policy in REFERENCE_POLICIES.items():
        env = RefundDeskEnv(tickets=tickets)
        rewards = [play(env, policy(), seed)[0] for seed in range(60)]
        means[name] = sum(rewards) / len(rewards)
    assert means["careful"] == 1.0
    assert means["naive"] < means["refuse-all"] < means["careful"]


def test_careful_without_its_memory_of_the_queue_pays_a_request_sent_again() -> None:
    class Forgetful(CarefulRefundPolicy):
        def script(self) -> Any:
            self.handled = set()
            return (yield from super().script())

    env = RefundDeskEnv(tickets=4)
    results = [play(env, Forgetful(), seed) for seed in range(40)]
    assert min(reward for reward, _ in results) < 1.0
    assert (
        sum(info["score"]["unauthorized_cents"] + info["score"]["duplicate_cents"] for _, info in results) > 0
    )


QUEUES = procedural_cases(tickets=st.integers(2, 5), lines=st.none() | st.integers(1, 3))


def _play_steps(case: Any, steps: list[list[ToolCall]], rules: str) -> tuple[RefundDeskEnv, dict[str, Any]]:
    env = RefundDeskEnv([case], rules=rules, max_turns=200)
    env.reset(seed=0)
    for position, calls in enumerate(steps):
        *_, terminated, truncated, info = env.step(render_action(calls, position % 2 == 1))
        if terminated or truncated:
            return env, info
    while True:
        *_, terminated, truncated, info = env.step('reply("done")')
        if terminated or truncated:
            return env, info


@settings(max_examples=150)
@given(episodes(QUEUES, max_steps=12), st.sampled_from(("default", "original")))
def test_a_queue_replays_to_its_live_score(episode: Any, rules: str) -> None:
    case, steps = episode
    env, info = _play_steps(case, steps, rules)
    assert replay(case, env.export_log(), head=info["log_head"]).as_dict() == info["score"]


def test_the_queue_script_writes_its_table_from_real_episodes(tmp_path: Any) -> None:
    from benchmark_scripts import load_script

    script = load_script("refund_knobs")
    assert script.main(["--queue-seeds", "6", "--recovery-seeds", "2", "--out", str(tmp_path)]) == 0
    figures = json.loads((tmp_path / "refund_queue.json").read_text())
    rows = {(row["tickets"], row["policy"]): row for row in figures["rows"]}
    assert {tickets for tickets, _ in rows} == {1, 2, 4, 8}
    assert all(rows[(t, "careful")]["mean_reward"] == 1.0 for t in (1, 2, 4, 8))
    assert rows[(8, "naive")]["duplicate_effects"] > rows[(1, "naive")]["duplicate_effects"] > 0
    table = (tmp_path / "refund_queue.md").read_text()
    assert table.startswith("<!-- made by: python benchmarks/refund_knobs.py --queue-seeds 6 -->")
