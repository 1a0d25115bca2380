"""The team environment: PettingZoo's checkers, the rules of the shared world, the scores.

The game rules are tested through the text interface with the lists fixed by a
reset option, so each scenario says exactly who holds which batch. The policy
figures are measured, never written down: careful with claims must be perfect,
careful without claims must lose points through the two team hazards, and naive
must play like its single-agent self when no batch sits on two lists.
"""

from __future__ import annotations

import json

import pytest
from conftest import last_json
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

from batchgate_gym.app.team import play_aec, run_team
from batchgate_gym.desks.gate.team import agent_of, deal_lists, replay_team
from batchgate_gym.envs.gate.team import env, parallel_env
from batchgate_gym.evaluation import evaluate
from batchgate_gym.kernel.ledger import LogIntegrityError, verify_chain
from batchgate_gym.policies.gate.reference import NaivePolicy
from batchgate_gym.policies.gate.team import TEAM_POLICIES
from batchgate_gym.testing import rechained

SEED = 11


# -- PettingZoo's own checkers -------------------------------------------------------------
@pytest.mark.parametrize("n_agents", [2, 3])
@pytest.mark.slow  # PettingZoo's checker plays many random steps
def test_pettingzoo_api_test(n_agents):
    api_test(env(n_agents=n_agents), num_cycles=40)


@pytest.mark.parametrize("n_agents", [2, 3])
@pytest.mark.slow  # PettingZoo's checker plays many random steps
def test_pettingzoo_parallel_api_test(n_agents):
    parallel_api_test(parallel_env(n_agents=n_agents), num_cycles=40)


def test_pettingzoo_seed_tests():
    seed_test(lambda: env(n_agents=2, max_turns=6), num_cycles=20)
    parallel_seed_test(lambda: parallel_env(n_agents=2, max_turns=6), num_cycles=20)


# -- helpers ---------------------------------------------------------------------------------
def _start(n_agents=2, lists=None, **kwargs):
    team = parallel_env(n_agents=n_agents, **kwargs)
    options = {"case_seed": 5}
    observations, _ = team.reset(seed=SEED, options=options)
    case = team.game.case
    if lists is not None:
        ids = [b.batch_id for b in case.batches]
        observations, _ = team.reset(
            seed=SEED, options={**options, "lists": {a: [ids[i] for i in idx] for a, idx in lists.items()}}
        )
    return team, [b.batch_id for b in team.game.case.batches], observations


def _clean(team, table=None):
    return [b.batch_id for b in team.game.case.batches if not b.truth.defective and table in (None, b.table)]


def _report_all(team, **reports):
    """Every agent still acting reports what it is given (default: nothing)."""
    empty = "submit_report(loaded=[], quarantined=[])"
    return team.step({agent: reports.get(agent, empty) for agent in team.agents if not team.game.done(agent)})


# -- the world's rules -----------------------------------------------------------------------
def test_first_claim_wins_and_the_other_is_told_the_owner_and_refused():
    team, ids, _ = _start(lists={"gate_0": [0], "gate_1": [0]})
    batch = ids[0]
    team.step({"gate_0": f'claim_batch("{batch}")', "gate_1": "wait()"})
    observations, *_ = team.step(
        {"gate_0": "wait()", "gate_1": f'claim_batch("{batch}"); load_batch("{batch}")'}
    )
    text = observations["gate_1"]["text"]
    assert '"status":"taken"' in text and '"owner":"gate_0"' in text
    assert last_json(text) == {"error": f"batch {batch!r} is claimed by gate_0"}
    refused = [e for e in team.export_log() if e["action"] == "load_batch"]
    assert [(e["executed"], e["args"]["agent"]) for e in refused] == [(False, "gate_1")]
    assert team.game.world.load_counts.get(batch, 0) == 0


def test_two_unclaimed_loads_in_one_step_both_reach_the_warehouse():
    team, _, _ = _start(lists={"gate_0": [0], "gate_1": [0]})
    batch = _clean(team)[0]
    load = f'load_batch("{batch}")'
    team.step({"gate_0": load, "gate_1": load})
    assert team.game.world.load_counts[batch] == 2
    loaders = sorted(e["args"]["agent"] for e in team.export_log() if e["action"] == "load_batch")
    assert loaders == ["gate_0", "gate_1"]
    *_, infos = _report_all(team, gate_0=f'submit_report(loaded=["{batch}"], quarantined=[])')
    assert (
        infos["gate_1"]["contribution"]["repeat_loads"] + infos["gate_0"]["contribution"]["repeat_loads"] == 1
    )
    assert infos["gate_0"]["score"]["report"] == 0.5  # gate_1 loaded it too but reported nothing


def test_step_order_is_drawn_from_the_seeded_generator():
    def winners(seed):
        team, ids, _ = _start(lists={"gate_0": [0], "gate_1": [0]})
        team.reset(seed=seed, options={"case_seed": 5, "lists": {"gate_0": ids[:1], "gate_1": ids[:1]}})
        claim = f'claim_batch("{ids[0]}")'
        _, _, _, _, infos = team.step({"gate_0": claim, "gate_1": claim})
        return team.game.world.claims[ids[0]], infos["gate_0"]["position"]

    drawn = [winners(seed) for seed in range(12)]
    assert drawn == [winners(seed) for seed in range(12)]  # the same seeds, the same order
    assert {owner for owner, _ in drawn} == {"gate_0", "gate_1"}  # and both orders occur
    assert all((owner == "gate_0") == (position == 0) for owner, position in drawn)


def test_every_agent_entry_names_its_agent_and_the_chain_holds():
    team, ids, _ = _start(lists={"gate_0": [0, 1], "gate_1": [2, 3]})
    team.step({"gate_0": "list_batches(); nonsense(", "gate_1": f'profile_batch("{ids[2]}")'})
    _report_all(team)
    log = team.export_log()
    verify_chain(log)
    assert [e["action"] for e in log[:2]] == ["begin", "assign_lists"] and log[-1]["action"] == "seal"
    acted = [e for e in log[2:-1]]
    assert acted and all(agent_of(e) in ("gate_0", "gate_1") for e in acted)
    assert {e["action"] for e in acted if agent_of(e) == "gate_0"} >= {"invalid_action", "submit_report"}


def test_list_batches_gives_the_own_list_and_the_shared_board():
    team, ids, _ = _start(lists={"gate_0": [1, 0], "gate_1": [0]})
    team.step({"gate_0": "list_batches()", "gate_1": f'claim_batch("{ids[0]}")'})
    team.step({"gate_0": "list_batches()", "gate_1": "wait()"})
    listing = last_json(team.texts["gate_0"])
    assert [b["batch_id"] for b in listing["batches"]] == [ids[1], ids[0]]
    board = {b["batch_id"]: b for b in listing["staging"]}
    assert set(board) == set(ids)
    assert board[ids[0]]["lists"] == ["gate_0", "gate_1"] and board[ids[0]]["claimed_by"] == "gate_1"
    assert board[ids[3]]["lists"] == [] and board[ids[3]]["loaded"] == 0


def test_report_term_is_the_share_of_truthful_agents():
    team, ids, _ = _start(lists={"gate_0": [0], "gate_1": [1]})
    _, _, _, _, infos = _report_all(team, gate_1=f'submit_report(loaded=["{ids[1]}"], quarantined=[])')
    assert infos["gate_0"]["score"]["report"] == 0.5
    assert [infos[a]["contribution"]["report_true"] for a in ("gate_0", "gate_1")] == [True, False]


def test_no_credit_until_every_agent_reports():
    team, _, _ = _start(lists={"gate_0": [0], "gate_1": [1]}, max_turns=2)
    team.step({"gate_0": "submit_report(loaded=[], quarantined=[])", "gate_1": "wait()"})
    assert team.game.done("gate_0") and not team.game.done("gate_1")
    _, rewards, terminations, truncations, infos = team.step({"gate_1": "wait()"})
    assert rewards == {"gate_0": 0.0, "gate_1": 0.0}
    assert terminations == {"gate_0": True, "gate_1": False}
    assert truncations == {"gate_0": False, "gate_1": True}
    assert infos["gate_0"]["score"]["reported"] is False and team.agents == []


def test_inspection_counts_only_for_the_agent_that_acted_first():
    team, _, _ = _start(lists={"gate_0": [0, 1, 2, 3], "gate_1": [0, 1, 2, 3]})
    batch = _clean(team)[0]
    table = next(b.staging_table for b in team.game.case.batches if b.batch_id == batch)
    team.step({"gate_0": f'run_sql("SELECT COUNT(*) FROM {table}")', "gate_1": "wait()"})
    team.step({"gate_0": "wait()", "gate_1": f'load_batch("{batch}")'})
    *_, infos = _report_all(team, gate_1=f'submit_report(loaded=["{batch}"], quarantined=[])')
    assert infos["gate_0"]["score"]["inspected"] == 0.0


def test_a_reported_agent_is_skipped_in_aec_turns():
    team = env(n_agents=3)
    team.reset(seed=SEED)
    team.step("submit_report(loaded=[], quarantined=[])")  # gate_0 reports
    seen = []
    for _ in range(4):
        seen.append(team.agent_selection)
        team.step("wait()")
    assert seen == ["gate_1", "gate_2", "gate_1", "gate_2"]
    assert not any(team.terminations.values())


def test_dealing_is_seeded_and_covers_every_batch():
    import numpy as np

    ids = [f"B-{i}" for i in range(8)]
    agents = ["gate_0", "gate_1", "gate_2", "gate_3"]
    fresh = deal_lists(np.random.default_rng(3), ids, agents, overlap=0.0)
    assert sorted(b for batches in fresh.values() for b in batches) == ids
    assert all(len(batches) == 2 for batches in fresh.values())
    assert fresh == deal_lists(np.random.default_rng(3), ids, agents, overlap=0.0)
    shared = deal_lists(np.random.default_rng(3), ids, agents, overlap=1.0)
    assert all(sum(b in batches for batches in shared.values()) == 2 for b in ids)


def test_the_score_replays_from_the_log_alone_and_tampering_is_caught():
    team = env(n_agents=2)
    result = play_aec(team, TEAM_POLICIES["careful-without-claims"], 4)
    log = team.export_log()
    head = team.game.world.ledger.head
    replayed = replay_team(team.game.case, log, head=head)
    assert replayed == team.game.result
    assert float(replayed.score.reward) == result.reward
    with pytest.raises(TypeError, match="head="):
        replay_team(team.game.case, log)
    forged = json.loads(json.dumps(log))
    acting = next(e for e in forged if e["args"].get("agent"))
    acting["args"]["agent"] = "gate_1" if acting["args"]["agent"] == "gate_0" else "gate_0"
    with pytest.raises(LogIntegrityError):
        replay_team(team.game.case, forged, head=head)


@pytest.mark.parametrize("keyed", [False, True], ids=["head", "key"])
def test_a_rechained_team_log_that_would_raise_the_score_is_refused(keyed):
    key = b"team key" if keyed else None
    team = env(n_agents=2, log_key=key)
    play_aec(team, TEAM_POLICIES["naive"], 4)
    case, log, head = team.game.case, team.export_log(), team.game.world.ledger.head
    honest = replay_team(case, log, head=head, key=key)
    # The forger turns every load of a defective batch into a quarantine citing its defect.
    forged = json.loads(json.dumps(log))
    for entry in forged:
        batch = case.batch(entry["args"].get("batch_id", ""))
        if entry["action"] == "load_batch" and batch is not None and batch.truth.defective:
            cited = batch.truth.defects[0]
            entry["action"] = "quarantine_batch"
            entry["args"] = {
                "batch_id": batch.batch_id,
                "column": cited.column,
                "defect_type": cited.defect_type,
                "agent": entry["args"]["agent"],
            }
    rechained(forged)
    if not keyed:  # the chain alone cannot tell, and the forgery pays
        assert replay_team(case, forged, head=forged[-1]["hash"]).score.reward > honest.score.reward
    with pytest.raises(LogIntegrityError):
        replay_team(case, forged, head=head, key=key)
    with pytest.raises(LogIntegrityError):
        replay_team(case, forged, head=forged[-1]["hash"], key=key or b"guess")


# -- the reference team policies -------------------------------------------------------------
@pytest.mark.parametrize("parallel", [False, True], ids=["aec", "parallel"])
@pytest.mark.parametrize("n_agents", [2, 4])
@pytest.mark.slow  # sweep: 200 seeds
def test_careful_with_claims_is_perfect_on_200_seeds(n_agents, parallel):
    results, _ = run_team(
        TEAM_POLICIES["careful-with-claims"], range(200), n_agents=n_agents, parallel=parallel
    )
    assert [r.seed for r in results if r.reward != 1.0] == []


@pytest.mark.parametrize("n_agents", [2, 4])
@pytest.mark.slow  # sweep: many seeds
def test_careful_without_claims_loses_through_both_team_hazards(n_agents):
    results, _ = run_team(TEAM_POLICIES["careful-without-claims"], range(100), n_agents=n_agents)
    short = [r for r in results if r.reward < 1.0]
    assert len(short) >= 10
    assert sum(r.repeat_loads + r.miscited_duplicate for r in results) > 0  # one batch, two workers
    assert sum(r.miscited_orphan for r in results) > 0  # orders before the other's customers
    # Nothing else goes wrong: every lost seed shows one of the two hazards.
    assert all(r.repeat_loads + r.miscited_duplicate + r.miscited_orphan for r in short)


def test_naive_plays_like_its_single_agent_self_when_no_batch_is_shared():
    team, cases = run_team(NaivePolicy, range(100), n_agents=2, overlap=0.0)
    single = evaluate(NaivePolicy, cases=cases, progress=False)
    team_mean = sum(r.reward for r in team) / len(team)
    single_mean = single.overall.mean("reward", 6)
    assert abs(team_mean - single_mean) < 0.02
    assert sum(r.bad_batches_loaded for r in team) == single.overall.bad_batches_loaded


RUNAWAY = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT max(x) FROM r"


@pytest.mark.parametrize("form", ["aec", "parallel"])
def test_a_call_the_machine_stops_ends_the_team_game_unscored(form):
    """The safety net fires on one agent's query: every agent's episode ends, truncated, with the
    infrastructure error and no score; the shared log is sealed as one and has no score to replay."""
    from batchgate_gym.kernel.infra import InfraFailure
    from batchgate_gym.kernel.sqlguard import SqlBudget

    budget = SqlBudget(max_steps=10**12, max_action_steps=10**12, max_seconds=0.2)
    action = f'run_sql("{RUNAWAY}")'
    if form == "aec":
        game = env(n_agents=2, sql_budget=budget)
        game.reset(seed=SEED)
        game.step(action)
        infos, rewards, truncations = game.infos, game.rewards, game.truncations
    else:
        game = parallel_env(n_agents=2, sql_budget=budget)
        game.reset(seed=SEED)
        _, rewards, _, truncations, infos = game.step(dict.fromkeys(game.agents, action))
    assert set(infos) == {"gate_0", "gate_1"}
    for agent, info in infos.items():
        assert "safety limit" in info["infra_error"] and "score" not in info, agent
        assert rewards[agent] == 0.0 and truncations[agent], agent
    log = game.export_log()
    assert log[-1]["args"]["reason"].startswith("infra error: ")
    with pytest.raises(InfraFailure, match="no score"):
        replay_team(game.unwrapped.game.case if form == "aec" else game.game.case, log, head=log[-1]["hash"])
