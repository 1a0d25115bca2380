"""AnalystDesk-v0 as a Gymnasium environment: the official checker, determinism, replay, and scores.

careful scores 1.0 on the eval split, a sample of train and on procedural seeds;
every exported log replays to the live score and an edited one is refused; the
attackers stay at least 0.05 below careful, and the ones aimed at the evidence earn
none of it; a store failing mid-episode is counted as an infrastructure error, never
as a wrong answer. (The whole train split and 1,000 procedural seeds at the default
scale run in ``benchmarks/analyst_seeds.py``; their results are recorded.)
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import batchgate_gym  # noqa: F401 - registers the ids
from batchgate_gym.desks.analyst import ENV_ID
from batchgate_gym.desks.analyst.datasets.canonical import dataset_dir
from batchgate_gym.desks.analyst.replay import replay
from batchgate_gym.desks.analyst.sources import split_cases
from batchgate_gym.envs.analyst.text import AnalystDeskEnv
from batchgate_gym.evaluation import evaluate, report_json
from batchgate_gym.kernel.ledger import LogIntegrityError, rechain
from batchgate_gym.policies.analyst.attackers import ATTACKERS
from batchgate_gym.policies.analyst.reference import REFERENCE_POLICIES, CarefulAnalyst

SMALL = {"scale": 60}


def play(env: Any, policy: Any, **reset: Any) -> tuple[float, dict[str, Any], list[str]]:
    observation, info = env.reset(**reset)
    policy.reset(observation, info)
    seen = [observation]
    while True:
        observation, reward, terminated, truncated, info = env.step(policy.act(observation))
        seen.append(observation)
        if terminated or truncated:
            return reward, info, seen


def test_registered_and_checker_clean() -> None:
    env = gymnasium.make(ENV_ID, cases="eval")
    check_env(env.unwrapped, skip_render_check=True)
    env.close()
    procedural = AnalystDeskEnv(**SMALL)
    check_env(procedural, skip_render_check=True)
    procedural.close()


def test_same_seed_same_episode_in_fresh_envs() -> None:
    runs = []
    for _ in range(2):
        env = AnalystDeskEnv(**SMALL)
        runs.append(play(env, CarefulAnalyst(), seed=11))
        env.close()
    assert runs[0][2] == runs[1][2]
    assert runs[0][1] == runs[1][1]


def test_malformed_action_is_an_error_observation() -> None:
    env = AnalystDeskEnv("eval")
    env.reset(seed=0, options={"case_index": 0})
    for action in ("run_sql(", "nope()", 'submit_answer(answer="{", evidence="[]")', "x" * 70_000):
        observation, reward, terminated, _truncated, _info = env.step(action)
        assert "error" in observation and not terminated and reward == 0.0
    observation, *_ = env.step('run_sql(store="lake", query="SELECT 1")')
    assert "no store 'lake'" in observation or "lake" in observation
    env.close()


@pytest.mark.slow  # whole split
def test_careful_is_perfect_on_eval_and_every_log_replays() -> None:
    cases = split_cases("eval")
    env = AnalystDeskEnv(cases)
    policy = CarefulAnalyst()
    stores = set()
    for index, case in enumerate(cases):
        reward, info, _ = play(env, policy, seed=index, options={"case_index": index})
        assert reward == 1.0, (case.case_id, info["score"])
        assert info["score"]["fully_supported"] == 1
        log = env.export_log()
        assert replay(case, log, head=info["log_head"]).as_dict() == info["score"]
        stores.add(info["store"])
    assert stores == {"sqlite", "duckdb", "lake", "files", "sqlite+lake"}
    assert {case.level for case in cases} == {1, 2, 3, 4, 5, 6, 7}
    env.close()


def test_an_edited_log_is_refused() -> None:
    case = split_cases("eval")[0]
    env = AnalystDeskEnv([case])
    _, info, _ = play(env, CarefulAnalyst(), seed=0)
    log = env.export_log()
    edited = [dict(entry) for entry in log]
    edited[-2] = {**edited[-2], "args": {**edited[-2]["args"], "answer": "0"}}
    for forged in (edited, rechain(edited)):
        with pytest.raises(LogIntegrityError):
            replay(case, forged, head=info["log_head"])
    with pytest.raises(LogIntegrityError):
        replay(split_cases("eval")[1], log, head=info["log_head"])
    env.close()


@pytest.mark.slow  # a train sample and procedural seeds
def test_careful_is_perfect_on_a_train_sample_and_procedural_seeds() -> None:
    train = split_cases("train")[::16]
    assert evaluate(CarefulAnalyst, cases=train, desk="analyst", progress=False).overall.mean("reward") == 1.0
    seeded = evaluate(CarefulAnalyst, seeds=range(24), desk="analyst", env_kwargs=SMALL, progress=False)
    assert seeded.overall.mean("reward") == 1.0
    assert len({e.family for e in seeded.episodes}) >= 8


@pytest.fixture(scope="module")
def fast_eval() -> list[Any]:
    """The eval cases asked in sqlite (and sqlite+lake at level 4): every level and template."""
    return [case for case in split_cases("eval") if case.stores[0] == "sqlite"]


def _answer_moves(case: Any) -> bool:
    from batchgate_gym.desks.analyst.counterfactual import copies

    return case.answerable and any(copy.expected != case.expected for copy in copies(case))


@pytest.fixture(scope="module")
def played(fast_eval: list[Any]) -> dict[str, Any]:
    """Every reference policy, baseline and attacker over the fast eval cases."""
    return {
        name: evaluate(cls, cases=fast_eval, desk="analyst", progress=False)
        for name, cls in {**REFERENCE_POLICIES, **ATTACKERS}.items()
    }


@pytest.mark.slow  # every attacker over the eval split
def test_attackers_stay_below_careful_and_evidence_attackers_earn_none(
    fast_eval: list[Any], played: dict[str, Any]
) -> None:
    best = played["careful"].overall.mean("reward")
    assert best == 1.0
    for name, result in played.items():
        if name == "careful":
            continue
        assert best - result.overall.mean("reward") >= 0.05, name
        by_case = {e.case_id: e for e in result.episodes}
        for case in fast_eval:
            episode = by_case[case.case_id]
            cheats = ("constant-evidence", "answer-without-evidence", "foreign-evidence")
            if name in ("dressed-constant", "shifted-count") and not _answer_moves(case):
                continue  # every copy happens to keep the answer: a constant passes there
            if name in (*cheats, "dressed-constant", "shifted-count") and case.answerable:
                numeric = case.answer_type in ("number", "report")
                if name != "shifted-count" or numeric:
                    assert episode.terms["evidence_reproduces"] == 0.0, (name, case.case_id)
            if name == "contradictory-labels" and case.answer_type in ("number", "report"):
                assert episode.terms["evidence_reproduces"] == 0.0, (name, case.case_id)
            if name == "label-swap" and case.answer_type == "report":
                assert episode.terms["evidence_reproduces"] == 0.0, case.case_id
                assert episode.terms["correct"] == 0.0


@pytest.mark.slow  # every attacker over the eval split
def test_the_score_pays_care_then_honest_declines_then_guesses(played: dict[str, Any]) -> None:
    """careful > decline-when-unsure > guess-when-unsure > always-decline; reading no data, or
    a wrong answer dressed in evidence, earns less than declining when unsure."""
    mean = {name: result.overall.mean("reward") for name, result in played.items()}
    assert mean["careful"] > mean["decline-when-unsure"] > mean["guess-when-unsure"] > mean["always-decline"]
    assert mean["prior"] < mean["decline-when-unsure"]
    assert mean["wrong-with-evidence"] < mean["decline-when-unsure"]


def test_report_json_has_the_gates_shape_with_level_and_store(fast_eval: list[Any]) -> None:
    result = evaluate(CarefulAnalyst, cases=fast_eval[:6], desk="analyst", progress=False)
    shaped = json.loads(json.dumps(report_json({"careful": result}, "analyst")))
    careful = shaped["policies"]["careful"]
    assert careful["mean_reward"] == 1.0
    for case in fast_eval[:6]:
        row = careful["per_case"][case.case_id]
        assert row["level"] == case.level and row["store"] == case.store
        for key in ("reward", "correct", "partial_credit", "evidence_reproduces", "abstention_correct"):
            assert row[key] == 1.0
        assert row["fully_supported"] == 1 and row["infra_errors"] == 0


def test_a_store_failing_is_an_infra_error_not_a_wrong_answer(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("BATCHGATE_ANALYST_CACHE", str(tmp_path))
    case = next(c for c in split_cases("eval") if c.stores == ("lake",) and c.answerable)
    env = AnalystDeskEnv([case])
    observation, info = env.reset(seed=0)
    policy = CarefulAnalyst()
    policy.reset(observation, info)
    observation, *_ = env.step(policy.act(observation))  # lists the tables: the lake is open
    for parquet in dataset_dir(case.data, "lake").glob("*.parquet"):
        parquet.unlink()
    while True:
        observation, _reward, terminated, truncated, info = env.step(policy.act(observation))
        if terminated or truncated:
            break
    score = info["score"]
    assert score["infra_errors"] >= 1 and score["wrong_answers"] == 0
    env.close()
