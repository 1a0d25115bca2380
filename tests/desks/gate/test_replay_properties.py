"""Replay is exact and unforgeable, over drawn cases, budgets, keys and play.

For random action sequences on random procedural cases, under random SQL budgets
and with or without a log key: the exported log replays to exactly the live score
(pinned to the reported head, and to the key where there is one), and every
single edit, deletion, duplication, reordering, cut, re-chaining or re-sealing of
it, and its replay under any other case, is refused with ``LogIntegrityError``.
300 examples per property in CI; ``--hypothesis-profile=long`` runs 10,000.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchgate_gym import replay
from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.kernel.codec import ToolCall
from batchgate_gym.testing import cases, episodes, render_action, sql_budgets

from ..replay_checks import check_log_is_refused_under, check_log_replays_and_any_change_is_refused

SCALE = {"rows_per_batch": (1, 10), "batches": st.integers(2, 4), "defects_per_batch": st.integers(1, 2)}
KEYS = st.none() | st.binary(min_size=1, max_size=16)
BUDGETS = st.none() | sql_budgets()
# A few hundred examples in CI (the ci profile's default is smaller); the long profile's 10,000.
EXAMPLES = settings(max_examples=max(300, settings.default.max_examples))


def play(case: Any, steps: list[list[ToolCall]], budget: Any, key: bytes | None) -> BatchGateEnv:
    env = BatchGateEnv([case], sql_budget=budget, log_key=key)
    env.reset(seed=0)
    for calls in steps:
        *_, terminated, truncated, info = env.step(render_action(calls))
        if terminated or truncated:
            return env, info
    return env, env.step("submit_report([], [])")[4]


@EXAMPLES
@given(episodes(**SCALE), BUDGETS, KEYS, st.data())
@pytest.mark.slow  # hypothesis: drawn logs, every change
def test_every_genuine_log_replays_and_every_single_change_is_refused(
    episode: Any, budget: Any, key: bytes | None, data: st.DataObject
) -> None:
    case, steps = episode
    env, info = play(case, steps, budget, key)
    check_log_replays_and_any_change_is_refused(replay, case, env, info, key, data)


@EXAMPLES
@given(episodes(**SCALE), cases(**SCALE), KEYS)
@pytest.mark.slow  # hypothesis: drawn logs under other cases
def test_a_log_never_replays_under_another_case(episode: Any, other: Any, key: bytes | None) -> None:
    case, steps = episode
    env, info = play(case, steps, None, key)
    check_log_is_refused_under(replay, other, case, env, info, key)
