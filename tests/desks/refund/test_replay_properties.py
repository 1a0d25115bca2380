"""Replay on the refund desk is exact and unforgeable, over drawn cases, rules, keys and play.

Cases come from the original's eval fixture, our two splits and the generator
(seeds and knobs); play is well-formed and hostile calls in call syntax and JSON
(:mod:`batchgate_gym.desks.refund.testing`), under either rule set, with or
without a log key. Whatever is drawn, the exported log replays to exactly the live
score (pinned to the reported head, and to the key alone where there is one), and
every single change the gate's ``tampered_logs`` draws (an edit, deletion,
duplicate, swap or cut, a re-chained edit, a re-sealed cut) and replay under any
other case is refused with ``LogIntegrityError``. 300 examples per property in CI;
``--hypothesis-profile=long`` runs 10,000.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchgate_gym.desks.refund.replay import replay
from batchgate_gym.desks.refund.testing import cases, episodes, render_action
from batchgate_gym.envs.refund.text import RefundDeskEnv
from batchgate_gym.kernel.codec import ToolCall

from ..replay_checks import check_log_is_refused_under, check_log_replays_and_any_change_is_refused

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "dsed_eval_curated.jsonl"
KNOBS: dict[str, Any] = {
    "lines": st.none() | st.integers(1, 4),
    "prior_rows": st.none() | st.integers(0, 6),
    "fault_rate": st.none() | st.sampled_from((0.0, 0.5, 1.0)),
}
CASES = cases(FIXTURE, "eval", "train", "procedural", **KNOBS)
# Half the play well-formed and without an early reply, so that many episodes pay.
EPISODES = st.one_of(episodes(CASES, hostile=False, reply=False), episodes(CASES))
RULES = st.sampled_from(("default", "original"))
KEYS = st.none() | st.binary(min_size=1, max_size=16)
# A few hundred examples in CI (the ci profile's default is smaller); the long profile's 10,000.
EXAMPLES = settings(max_examples=max(300, settings.default.max_examples))


def play(case: Any, steps: list[list[ToolCall]], rules: str, key: bytes | None) -> tuple[Any, dict[str, Any]]:
    """Play ``steps`` on ``case`` (call syntax and JSON in turn); reply if the steps did not end it."""
    env = RefundDeskEnv([case], rules=rules, log_key=key)
    env.reset(seed=0)
    for position, calls in enumerate(steps):
        *_, terminated, truncated, info = env.step(render_action(calls, position % 2 == 1))
        if terminated or truncated:
            return env, info
    *_, terminated, truncated, info = env.step('reply("done")')
    assert terminated or truncated
    return env, info


@EXAMPLES
@given(EPISODES, RULES, KEYS, st.data())
@pytest.mark.slow  # hypothesis: drawn logs, every change
def test_every_genuine_log_replays_and_every_single_change_is_refused(
    episode: Any, rules: str, key: bytes | None, data: st.DataObject
) -> None:
    case, steps = episode
    env, info = play(case, steps, rules, key)
    check_log_replays_and_any_change_is_refused(replay, case, env, info, key, data)


@EXAMPLES
@given(EPISODES, CASES, RULES, KEYS)
@pytest.mark.slow  # hypothesis: drawn logs under other cases
def test_a_log_never_replays_under_another_case(
    episode: Any, other: Any, rules: str, key: bytes | None
) -> None:
    case, steps = episode
    env, info = play(case, steps, rules, key)
    check_log_is_refused_under(replay, other, case, env, info, key)
