"""Entry 0 carries the episode's nonce, so a keyed log of one episode never verifies as
another's, even of the same case played alike; the same seed gives the same nonce.

On every desk, through the kernel's ledger and replay driver: two episodes of one
case with the same actions write different chains, and a replay by key with one
episode's ``log_nonce`` refuses the other's log.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from batchgate_gym.desks.analyst.replay import replay as replay_analyst
from batchgate_gym.desks.gate.replay import replay as replay_gate
from batchgate_gym.desks.refund.replay import grade_exported
from batchgate_gym.desks.refund.replay import replay as replay_refund
from batchgate_gym.envs.analyst.text import AnalystDeskEnv
from batchgate_gym.envs.gate.text import BatchGateEnv
from batchgate_gym.envs.refund.text import RefundDeskEnv
from batchgate_gym.kernel.ledger import LogIntegrityError

KEY = b"desk key"
DESKS: dict[str, tuple[Callable[[], Any], list[str], Callable[..., Any]]] = {
    "gate": (
        lambda: BatchGateEnv(split="eval", log_key=KEY),
        ["list_batches()", "submit_report([], [])"],
        replay_gate,
    ),
    "refund": (lambda: RefundDeskEnv("eval", log_key=KEY), ['reply("looking into it")'], replay_refund),
    "analyst": (lambda: AnalystDeskEnv("eval", log_key=KEY), ['decline("no data")'], replay_analyst),
}


def _episode(
    env: Any, actions: list[str], seed: int | None
) -> tuple[Any, list[dict[str, Any]], dict[str, Any]]:
    env.reset(seed=seed, options={"case_index": 0})
    for action in actions:
        _, _, terminated, _, info = env.step(action)
    assert terminated
    return env.unwrapped.case, env.unwrapped.export_log(), info


@pytest.mark.parametrize("desk", DESKS)
def test_a_keyed_log_of_another_episode_of_the_same_case_never_verifies(desk: str) -> None:
    make, actions, replay = DESKS[desk]
    env = make()
    try:
        case, first, first_info = _episode(env, actions, 7)
        _, second, second_info = _episode(env, actions, None)  # the next episode of the stream
        _, again, again_info = _episode(env, actions, 7)
    finally:
        env.close()
    assert first_info["log_nonce"] != second_info["log_nonce"]
    assert first_info["log_head"] != second_info["log_head"]
    assert (again, again_info["log_nonce"]) == (first, first_info["log_nonce"])  # seeded: the same
    assert first[0]["args"]["nonce"] == first_info["log_nonce"] and len(first_info["log_nonce"]) == 32
    mine = replay(case, first, key=KEY, nonce=first_info["log_nonce"]).as_dict()
    assert mine == first_info["score"]
    with pytest.raises(LogIntegrityError, match="nonce differs"):
        replay(case, second, key=KEY, nonce=first_info["log_nonce"])
    with pytest.raises(TypeError, match="nonce="):
        replay(case, second, key=KEY)


def test_an_exported_refund_log_graded_by_key_must_carry_the_episodes_nonce() -> None:
    make = DESKS["refund"][0]
    env = make()
    case, first, first_info = _episode(env, ['lookup_order("x")', 'reply("done")'], 3)
    _, second, _ = _episode(env, ['lookup_order("x")', 'reply("done")'], None)
    grade = lambda log, **pin: grade_exported(case, log, "default", key=KEY, **pin).as_dict()  # noqa: E731
    assert grade(first, nonce=first_info["log_nonce"]) == first_info["score"]
    assert grade(second, nonce=first_info["log_nonce"])["reward"] == 0.0
    assert grade(first)["reward"] == 0.0  # a key alone pins no episode
