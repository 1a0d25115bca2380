"""The analyst desk's public fuzzing helpers (``batchgate_gym.testing.analyst``) at work.

The strategies draw what they say (cases per level and store, answers, evidence,
episodes, tampered logs), and the state machine's invariants hold under the
project's settings profiles: live == replay after every episode, and the score's
incentive ordering (an answerable question: wrong < decline = 0.20 < right).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batchgate_gym.desks.analyst.replay import replay
from batchgate_gym.desks.analyst.sources import split_cases
from batchgate_gym.envs.analyst.text import AnalystDeskEnv
from batchgate_gym.kernel.ledger import LogIntegrityError
from batchgate_gym.policies.analyst.reference import CarefulAnalyst
from batchgate_gym.testing import analyst

TestAnalystMachine = pytest.mark.slow(analyst.AnalystMachine.TestCase)  # a hypothesis state machine
TestAnalystMachine.settings = settings(settings.default, stateful_step_count=10)


@settings(max_examples=6)
@given(
    data=st.data(),
    level=st.sampled_from([1, 2, 3, 5, 6]),
    store=st.sampled_from(["sqlite", "duckdb", "lake", "files"]),
)
def test_cases_are_of_the_level_and_store_asked(data: Any, level: int, store: str) -> None:
    case = data.draw(analyst.cases(level=level, store=store, seeds=st.integers(0, 3)))
    assert case.level == level and case.stores == (store,)


@settings(max_examples=2)
@given(case=analyst.cases(level=4, seeds=st.integers(0, 3)))
def test_level_4_cases_span_two_stores(case: Any) -> None:
    assert case.stores == ("sqlite", "lake")


def test_the_incentive_rule_is_the_scores_ordering() -> None:
    case = next(c for c in split_cases("eval") if c.answerable)
    assert analyst.incentive_holds(case, "decline", 0.2, 0.0)
    assert analyst.incentive_holds(case, "submit_answer", 0.75, 1.0)
    assert not analyst.incentive_holds(
        case, "submit_answer", 0.25, 0.0
    )  # a wrong answer paying more than a decline
    assert not analyst.incentive_holds(case, "decline", 0.0, 0.0)


@pytest.fixture(scope="module")
def careful_log() -> tuple[Any, list[dict[str, Any]], str]:
    case = next(c for c in split_cases("eval") if c.case_id == "eval-month-report-sqlite-0")
    env = AnalystDeskEnv([case])
    observation, info = env.reset(seed=0)
    policy = CarefulAnalyst()
    policy.reset(observation, info)
    while True:
        observation, _, terminated, truncated, info = env.step(policy.act(observation))
        if terminated or truncated:
            break
    log = env.export_log()
    env.close()
    return case, log, info["log_head"]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_tampered_log_is_refused(careful_log: Any, data: Any) -> None:
    case, log, head = careful_log
    assert replay(case, log, head=head).reward == 1
    _kind, changed = data.draw(analyst.tampered_logs(log))
    with pytest.raises(LogIntegrityError):
        replay(case, changed, head=head)


@settings(max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(episode=analyst.episodes(max_steps=4))
def test_drawn_episodes_never_raise(episode: Any) -> None:
    case, steps = episode
    env = AnalystDeskEnv([case], max_turns=6)
    try:
        env.reset(seed=0)
        for action in steps:
            observation, reward, terminated, truncated, info = env.step(action)
            assert isinstance(observation, str) and 0.0 <= reward <= 1.0
            if terminated or truncated:
                assert replay(case, env.export_log(), head=info["log_head"]).as_dict() == info["score"]
                break
    finally:
        env.close()
    json.dumps(steps)
