"""The refund team game: N workers, one queue, one provider, one lagging ledger, one log.

PettingZoo's own checkers pass on both interfaces; races are real (two workers who
read an empty ledger both pay, and the log says who paid second); claims coordinate;
careful-claim is perfect on 200 seeds for 2 and 4 workers on both interfaces while
careful without claims pays twice; replay of the shared log equals the live score.
"""

from __future__ import annotations

from typing import Any

import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

from batchgate_gym.app.team import run_team
from batchgate_gym.desks.refund.team.replay import replay_team
from batchgate_gym.envs.refund import team as refund_team
from batchgate_gym.kernel.ledger import LogIntegrityError, rechain
from batchgate_gym.policies.refund.team import TEAM_POLICIES


@pytest.mark.parametrize("n_agents", [2, 4])
@pytest.mark.slow  # PettingZoo's checkers play many random steps
def test_pettingzoo_checkers_pass_on_both_interfaces(n_agents: int) -> None:
    api_test(refund_team.env(n_agents=n_agents), num_cycles=30)
    parallel_api_test(refund_team.parallel_env(n_agents=n_agents, recovery=True), num_cycles=30)
    seed_test(lambda: refund_team.env(n_agents=n_agents), num_cycles=10)
    parallel_seed_test(lambda: refund_team.parallel_env(n_agents=n_agents))


def _means(policy: str, n_agents: int, parallel: bool, seeds: int) -> tuple[float, int, list[Any]]:
    results, _ = run_team(
        TEAM_POLICIES[policy], range(seeds), parallel=parallel, desk="refund", n_agents=n_agents
    )
    mean = sum(r.reward for r in results) / len(results)
    return mean, sum(r.metrics["duplicate_effects"] for r in results), results


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("n_agents", [2, 4])
@pytest.mark.slow  # sweep: every seed, every team size
def test_claiming_careful_is_perfect_and_careful_without_claims_pays_twice(
    n_agents: int, parallel: bool
) -> None:
    claim, claim_dups, _ = _means("careful-claim", n_agents, parallel, 200)
    assert claim == 1.0 and claim_dups == 0
    careful, careful_dups, _ = _means("careful", n_agents, parallel, 200)
    assert careful < 0.99 and careful_dups > 0  # real double payments, not a scoring quirk
    naive, _, _ = _means("naive", n_agents, parallel, 60)
    refuse, _, _ = _means("refuse-all", n_agents, parallel, 60)
    assert naive < refuse < careful


def _env_with_one_request_for_both() -> Any:
    env = refund_team.raw_env(n_agents=2, tickets_per_agent=1, cases=None)
    for seed in range(200):
        env.reset(seed=seed)
        case = env.game.case
        if case.expect.should_execute_new_refund and not case.tool_faults:
            return env
    raise AssertionError("no plain payable request in 200 seeds")


def test_two_workers_reading_an_empty_ledger_both_pay_and_the_second_payer_is_named() -> None:
    env = _env_with_one_request_for_both()
    case = env.game.case
    order, line = case.order.order_id, case.order.lines[0]
    pay = f'issue_refund("{order}", {line.amount_cents}, "same-key", "owed", "{line.sku}")'
    for action in (f'refund_history("{order}")', f'refund_history("{order}")', pay, pay):
        env.step(f'lookup_order("{order}"); {action}')  # refund_0, refund_1, refund_0, refund_1
    for _ in range(2):
        env.step('reply("done")')
    info = env.infos["refund_0"]
    assert info["score"]["duplicate_effects"] == 1  # the same key did not protect across workers
    assert env.infos["refund_0"]["contribution"]["duplicate_payments"] == 0
    assert env.infos["refund_1"]["contribution"]["duplicate_payments"] == 1
    assert env.infos["refund_1"]["contribution"]["duplicate_cents"] == line.amount_cents


def test_a_claimed_order_refuses_a_colleagues_payment_and_logs_it() -> None:
    env = _env_with_one_request_for_both()
    case = env.game.case
    order, line = case.order.order_id, case.order.lines[0]
    env.step(f'claim_order("{order}")')
    env.step(
        f'claim_order("{order}"); issue_refund("{order}", {line.amount_cents}, "k", "owed", "{line.sku}")'
    )
    observation = env.observe("refund_1")["text"]
    assert '"held"' in observation and "claimed by refund_0" in observation
    assert env.game.world.payments == []
    refused = [e for e in env.game.world.ledger.entries if e.action == "issue_refund"]
    assert len(refused) == 1 and refused[0].executed is False and refused[0].args["agent"] == "refund_1"


@pytest.mark.parametrize("policy", ["careful-claim", "careful", "naive"])
def test_the_shared_log_replays_to_the_live_score_and_edits_are_refused(policy: str) -> None:
    for seed in range(6):
        raw = refund_team.raw_env(n_agents=3)
        raw.reset(seed=seed)
        policies = {agent: TEAM_POLICIES[policy]() for agent in raw.agents}
        for agent, each in policies.items():
            each.reset(raw.observe(agent)["text"], {})
        while not raw.game.over:
            agent = raw.agent_selection
            raw.step(policies[agent].act(raw.observe(agent)["text"]))
        info = raw.infos["refund_0"]
        log = raw.export_log()
        replayed = replay_team(raw.game.case, log, head=info["log_head"])
        assert replayed.score.as_dict() == info["score"]
        assert replayed.agents["refund_1"].as_dict() == raw.infos["refund_1"]["contribution"]
        cut = rechain(log[:-3])
        with pytest.raises(LogIntegrityError):
            replay_team(raw.game.case, cut, head=info["log_head"])


@pytest.mark.parametrize("n_agents", [2, 3, 4, 8])
def test_one_ticket_a_worker_deals_every_worker_a_ticket(n_agents: int) -> None:
    # Repeated requests in a queue of n tickets left some worker without one (reset raised
    # on seeds 2 and 8 with three workers).
    env = refund_team.raw_env(n_agents=n_agents, tickets_per_agent=1, cases=None)
    for seed in range(40):
        env.reset(seed=seed)
        assert all(len(tickets) == 1 for tickets in env.game.world.lists.values()), seed


@pytest.mark.parametrize(
    "kwargs",
    [{"n_agents": 0}, {"n_agents": 9}, {"n_agents": 4, "tickets_per_agent": 5}, {"recovery": "yes"}],
)
def test_bad_arguments_are_refused_before_anything_is_built(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        refund_team.env(**kwargs)


def _team_steps() -> Any:
    from hypothesis import strategies as st

    from batchgate_gym.desks.refund.testing import tool_calls
    from batchgate_gym.kernel.codec import ToolCall

    @st.composite
    def draw(draw_: Any) -> tuple[int, int, bool, list[list[Any]]]:
        seed, n_agents, recovery = (
            draw_(st.integers(0, 10_000)),
            draw_(st.integers(2, 4)),
            draw_(st.booleans()),
        )
        raw = refund_team.raw_env(n_agents=n_agents)
        raw.reset(seed=seed)
        from batchgate_gym.desks.refund.testing import case_names

        ids, skus, amounts = case_names(raw.game.case)
        extra = st.one_of(
            st.builds(lambda o: ToolCall("claim_order", {"order_id": o}), st.sampled_from(ids)),
            st.builds(
                lambda o, k: ToolCall("void_refund", {"order_id": o, "idempotency_key": k, "reason": "undo"}),
                st.sampled_from(ids),
                st.sampled_from(["k", "same"]),
            ),
        )
        payments = [  # well-formed payments of every ticket's lines, under two shared keys
            ToolCall(
                "issue_refund",
                {"order_id": t.order.order_id, "amount_cents": line.amount_cents, "idempotency_key": key}
                | {"reason": "owed", "sku": line.sku},
            )
            for t in raw.game.case.tickets
            for line in t.order.lines
            for key in ("k", "same")
        ]
        calls = st.one_of(
            tool_calls(ids, skus, amounts), extra, st.sampled_from(payments), st.sampled_from(payments)
        )
        steps = draw_(st.lists(st.lists(calls, min_size=1, max_size=3), min_size=1, max_size=16))
        return seed, n_agents, recovery, steps

    return draw()


@pytest.mark.slow  # hypothesis: drawn team plays and changes
def test_any_team_play_replays_exactly_and_any_single_change_is_refused() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from batchgate_gym.desks.refund.testing import render_action
    from batchgate_gym.testing import tampered_logs

    @settings(max_examples=120, deadline=None)
    @given(_team_steps(), st.data())
    def check(drawn: Any, data: Any) -> None:
        seed, n_agents, recovery, steps = drawn
        raw = refund_team.raw_env(n_agents=n_agents, recovery=recovery)
        raw.reset(seed=seed)
        for position, calls in enumerate(steps):
            if raw.game.over:
                break
            raw.step(render_action(calls, position % 2 == 1))
        while not raw.game.over:
            raw.step('reply("done")')
        info, log = raw.infos["refund_0"], raw.export_log()
        replayed = replay_team(raw.game.case, log, head=info["log_head"])
        assert replayed.score.as_dict() == info["score"]
        assert {w: p.as_dict() for w, p in replayed.agents.items()} == {
            w: raw.infos[w]["contribution"] for w in raw.possible_agents
        }
        _, tampered = data.draw(tampered_logs(log))
        with pytest.raises(LogIntegrityError):
            replay_team(raw.game.case, tampered, head=info["log_head"])

    check()


def _play_with_a_hijacker(seed: int) -> tuple[float, Any]:
    """careful-claim on every worker, except that refund_0 first claims every order of the
    queue (an insider who knows the queue's ids); the team's reward and the env."""
    raw = refund_team.raw_env(n_agents=2)
    raw.reset(seed=seed)
    policies = {agent: TEAM_POLICIES["careful-claim"]() for agent in raw.agents}
    for agent, each in policies.items():
        each.reset(raw.observe(agent)["text"], {})
    orders = dict.fromkeys(ticket.order.order_id for ticket in raw.game.case.tickets)
    hijack = "; ".join(f'claim_order("{order}")' for order in orders)
    raw.step(hijack)  # refund_0's first turn
    while not raw.game.over:
        agent = raw.agent_selection
        raw.step(policies[agent].act(raw.observe(agent)["text"]))
    return raw.infos["refund_0"]["score"]["reward"], raw


def test_a_worker_may_claim_only_its_own_tickets_order_so_a_hijack_blocks_nobody() -> None:
    hijacked = []
    for seed in range(12):
        reward, raw = _play_with_a_hijacker(seed)
        hijacked.append(reward)
        world = raw.game.world
        own = raw.game.case.tickets[world.lists["refund_0"][0]].order.order_id
        count = len({ticket.order.order_id for ticket in raw.game.case.tickets})
        claims = world.ledger.entries[1 : 1 + count]  # the hijacker's first turn
        assert all(e.action == "claim_order" for e in claims)
        assert [e.executed for e in claims] == [e.args["order_id"] == own for e in claims]
        assert all("may claim only the order of its own ticket" in e.note for e in claims if not e.executed)
    assert hijacked == [1.0] * 12  # careful-claim's score on every seed: the hijack took nothing


def test_a_call_the_machine_stops_ends_the_team_game_unscored(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine fails under one worker's call: every worker's episode ends, truncated, with the
    infrastructure error and no score, in the infos and in the transcript alike."""
    from batchgate_gym.desks.refund.team.world import RefundTeamWorld
    from batchgate_gym.kernel.infra import InfraFailure

    def machine_fails(self: RefundTeamWorld, worker: str, call: Any) -> Any:
        raise InfraFailure("the payment service's host went away")

    game = refund_team.env(n_agents=2, render_mode="ansi")
    game.reset(seed=3)
    monkeypatch.setattr(RefundTeamWorld, "call_as", machine_fails)
    order = game.unwrapped.game.case.order.order_id
    game.step(f'refund_history("{order}")')
    assert game.unwrapped.game.result is None
    for agent, info in game.infos.items():
        assert "went away" in info["infra_error"] and "score" not in info, agent
        assert game.rewards[agent] == 0.0 and game.truncations[agent], agent
    transcript = game.render()
    assert "went away" in transcript and "episode over | score" not in transcript
    log = game.unwrapped.export_log()
    assert log[-1]["args"]["reason"].startswith("infra error: ")
    with pytest.raises(InfraFailure, match="no score"):
        replay_team(game.unwrapped.game.case, log, head=log[-1]["hash"])


@pytest.mark.parametrize("parallel", [False, True])
def test_a_team_game_the_machine_stopped_is_an_infra_error(monkeypatch, parallel: bool) -> None:
    """A tool the machine stops (``InfraFailure``, a safety net) ends the game unscored:
    ``run_team`` reports it as an infra error, left out of the means, not a KeyError."""
    from batchgate_gym.desks.refund.world import RefundWorld
    from batchgate_gym.kernel.infra import InfraFailure

    def stopped(self: RefundWorld, order_id: Any) -> Any:
        raise InfraFailure("the provider's safety net fired")

    monkeypatch.setattr(RefundWorld, "lookup_order", stopped)
    results, _ = run_team(TEAM_POLICIES["careful-claim"], [0], parallel=parallel, desk="refund", n_agents=2)
    (result,) = results
    assert "safety net fired" in result.infra_error
    assert result.reward == 0.0 and result.truncated
