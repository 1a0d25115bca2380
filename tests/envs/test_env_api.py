"""The Gymnasium interface: checker, registration, vector envs, spaces, info, render."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import gymnasium
import pytest
from conftest import FIXTURE_CASES, run_actions
from gymnasium.utils.env_checker import check_env

from batchgate_gym.envs import ENV_ID, BatchGateEnv

CAREFUL_DONE = "submit_report(loaded=[], quarantined=[])"


@pytest.fixture
def env():
    environment = BatchGateEnv(FIXTURE_CASES)
    yield environment
    environment.close()


def test_check_env_passes_with_warnings_as_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        made = gymnasium.make(ENV_ID, cases=str(FIXTURE_CASES))
        check_env(made.unwrapped)
        made.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_runs_and_observations_are_fresh(mode):
    venv = gymnasium.make_vec(ENV_ID, num_envs=2, vectorization_mode=mode, cases=str(FIXTURE_CASES))
    try:
        observations, _ = venv.reset(seed=3)
        assert all(o.startswith("You gate tonight's warehouse load.") for o in observations)
        observations, _, _, _, _ = venv.step(("list_batches()", "nonsense("))
        assert observations[0].startswith("turn 1 of 30\n> list_batches()")
        assert observations[1].startswith("turn 1 of 30\nerror:")
        observations, rewards, terminated, _, infos = venv.step((CAREFUL_DONE, CAREFUL_DONE))
        assert list(terminated) == [True, True]
        assert "score" in infos and all(0.0 <= r <= 1.0 for r in rewards)
    finally:
        venv.close()


def test_reset_observation_is_the_whole_task(env):
    observation, info = env.reset(seed=0, options={"case_index": 0})
    assert env.observation_space.contains(observation)
    for tool in (
        "read_contract()",
        "list_batches()",
        "profile_batch(batch_id: string)",
        "run_sql(query: string)",
        "load_batch(batch_id: string)",
        "quarantine_batch(batch_id: string, column: string, defect_type: string)",
        "submit_report(loaded: array, quarantined: array)",
    ):
        assert tool in observation
    assert "September close" in observation  # the case's own prompt
    assert '{"name": "load_batch", "arguments": {"batch_id": "B-1"}}' in observation
    # The case's name and where it came from; its truth (the defective batches) waits for the end.
    assert info == {
        "turn": 0,
        "calls": 0,
        "case_id": "eval-clean-control-0",
        "family": "clean-control",
        "cases": str(FIXTURE_CASES),
    }


def test_info_reveals_nothing_before_the_end(env):
    observations, _, info = run_actions(env, ["list_batches()", "read_contract()"], options={"case_index": 5})
    blob = json.dumps(info) + "".join(observations)
    case = env.world.case
    assert case.family not in blob and case.case_id not in blob
    assert "defective" not in blob and "truth" not in blob
    assert set(info) == {"turn", "calls"}


def test_terminal_step_pays_the_score_and_says_everything(env):
    _, reward, info = run_actions(env, ["list_batches()", CAREFUL_DONE], options={"case_index": 0})
    assert info["case_id"] == "eval-clean-control-0" and info["family"] == "clean-control"
    assert info["log_intact"] is True and info["log_entries"] == 4  # begin, two calls and the seal
    assert reward == info["score"]["reward"] == pytest.approx(0.2 + 0.15)  # report and evidence only
    assert set(info["score"]) >= {
        "disposition",
        "report",
        "evidence",
        "inspected",
        "bad_batches_loaded",
        "revenue_error_usd",
    }


def test_reward_is_zero_until_the_report(env):
    env.reset(options={"case_index": 8})
    for action in ("list_batches()", "load_batch('B-0930-70-2')"):
        _, reward, terminated, truncated, _ = env.step(action)
        assert (reward, terminated, truncated) == (0.0, False, False)


def test_turn_limit_truncates_with_zero_reward():
    env = BatchGateEnv(FIXTURE_CASES, max_turns=3)
    observations, reward, info = run_actions(
        env,
        ['load_batch("B-0930-60-1")', 'load_batch("B-0930-60-2")', "list_batches()"],
        options={"case_index": 0},
    )
    assert reward == 0.0 and info["score"]["reward"] == 0.0
    assert info["score"]["disposition"] == 0.0  # no report, no credit
    assert "Turn limit reached" in observations[-1]
    with pytest.raises(RuntimeError):
        env.step("list_batches()")


def test_reset_options_pick_cases_and_reject_unknown_ones(env):
    env.reset(options={"case_id": "eval-label-drift-2"})
    assert env.world.case.case_id == "eval-label-drift-2"
    with pytest.raises(ValueError):
        env.reset(options={"case_id": "nope"})
    with pytest.raises(ValueError):
        env.reset(options={"case_index": 32})


def test_seeded_draws_cover_cases_and_repeat(env):
    drawn = [env.reset(seed=s)[0] and env.world.case.case_id for s in range(40)]
    again = [env.reset(seed=s)[0] and env.world.case.case_id for s in range(40)]
    assert drawn == again and len(set(drawn)) > 15


def test_render_ansi_returns_the_transcript():
    env = BatchGateEnv(FIXTURE_CASES, render_mode="ansi")
    run_actions(env, ["list_batches()"], options={"case_index": 0})
    text = env.render()
    assert text.startswith("You gate tonight's warehouse load.") and "ACTION:\nlist_batches()" in text
    assert BatchGateEnv(FIXTURE_CASES).render() is None
    with pytest.raises(ValueError):
        BatchGateEnv(FIXTURE_CASES, render_mode="rgb_array")


def test_observations_stay_in_the_space_and_are_cut_with_a_marker():
    env = BatchGateEnv(FIXTURE_CASES, max_observation_chars=600)
    observations, _, _ = run_actions(
        env, ["read_contract()", "héllo wörld ☃ \x00"], options={"case_index": 0}
    )
    for observation in observations[1:]:
        assert env.observation_space.contains(observation)
        assert len(observation) <= 600
    assert "observation cut" in observations[1]
    assert "\\u2603" in observations[2] or "observation cut" in observations[2]


_SCRIPT = """
import json, sys
from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.policies.gate.reference import CarefulPolicy
env = BatchGateEnv(sys.argv[1])
out = []
for seed in (0, 1, 2):
    obs, info = env.reset(seed=seed)
    policy = CarefulPolicy(); policy.reset(obs, info)
    trace = [obs]
    while True:
        obs, reward, term, trunc, info = env.step(policy.act(obs))
        trace.append(obs)
        if term or trunc:
            break
    out.append({"trace": trace, "reward": reward, "info": info})
print(json.dumps(out))
"""


def test_same_seed_same_everything_in_two_processes():
    runs = [
        subprocess.run(
            [sys.executable, "-c", _SCRIPT, str(FIXTURE_CASES)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        ).stdout
        for hash_seed in ("1", "2")
    ]
    assert runs[0] == runs[1]
    assert len(json.loads(runs[0])) == 3


@pytest.mark.parametrize(
    ("env_id", "split", "count"), [("RefundDesk-v0", "eval", 32), ("AnalystDesk-v0", "tpch", 28)]
)
def test_every_desk_takes_split_as_the_gate_does(env_id: str, split: str, count: int) -> None:
    env = gymnasium.make(f"batchgate_gym/{env_id}", split=split)
    assert len(env.unwrapped.source) == count
    env.close()
    with pytest.raises(ValueError, match=r"'nope' is neither a split \(eval, train"):
        gymnasium.make(f"batchgate_gym/{env_id}", split="nope")
    with pytest.raises(ValueError, match="give cases= or split=, not both"):
        gymnasium.make(f"batchgate_gym/{env_id}", split=split, cases=split)
