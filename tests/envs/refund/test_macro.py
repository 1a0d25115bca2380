"""The refund desk's macro wrapper: Gymnasium's checker, the action mask, and that every
move is a real text action whose reward is the text environment's."""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from batchgate_gym.desks.refund import MACRO_ENV_ID
from batchgate_gym.desks.refund.sources import split_cases
from batchgate_gym.envs.refund.macro import RefundMacroEnv, RefundMacroLayout
from batchgate_gym.envs.refund.macro_codec import DESK_MOVES, GLOBAL_FEATURES, LINE_MOVES
from batchgate_gym.envs.refund.text import RefundDeskEnv

EVAL = split_cases("eval")


def _index_of(family: str, lines: int = 1) -> int:
    """The first eval case of ``family`` whose order has ``lines`` lines."""
    return next(i for i, c in enumerate(EVAL) if c.family == family and len(c.order.lines) == lines)


@pytest.fixture
def env() -> Any:
    macro = RefundMacroEnv("eval")
    yield macro
    macro.close()


def _finish(env: RefundMacroEnv, *moves: tuple[int, str]) -> tuple[float, dict[str, Any]]:
    reward, info = 0.0, {}
    for line, move in (*moves, (-1, "reply")):
        _obs, reward, terminated, _truncated, info = env.step(env.layout.index(line, move))
    assert terminated
    return reward, info


@pytest.mark.parametrize("recovery", [False, True])
@pytest.mark.parametrize("cases", [None, "eval"])
def test_check_env_passes_with_warnings_as_errors(cases: str | None, recovery: bool) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        made = gymnasium.make(MACRO_ENV_ID, cases=cases, recovery=recovery)
        check_env(made.unwrapped)
        made.close()


@pytest.mark.parametrize("recovery", [False, True])
def test_layout_round_trips_every_index(recovery: bool) -> None:
    layout = RefundMacroLayout(3, recovery=recovery)
    moves = LINE_MOVES + (("void",) if recovery else ())
    assert layout.n_actions == len(DESK_MOVES) + 3 * len(moves)
    assert layout.n_features == GLOBAL_FEATURES + 3 * (10 if recovery else 9)
    for index in range(layout.n_actions):
        line, move = layout.decode(index)
        assert layout.index(line, move) == index
    with pytest.raises(ValueError):
        layout.decode(layout.n_actions)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lines": 0},
        {"lines": True},
        {"lines": 21},
        {"max_observation_chars": 4096},
        {"tickets": 2, "cases": None},
    ],
)
def test_bad_arguments_are_refused_before_anything_is_built(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        RefundMacroEnv(**{"cases": "eval", **kwargs})


def test_a_queue_of_tickets_is_refused_at_reset() -> None:
    env = RefundMacroEnv()
    with pytest.raises(ValueError, match="one ticket"):
        env.reset(seed=0, options={"tickets": 3})


def test_an_order_with_more_lines_than_slots_is_an_error() -> None:
    env = RefundMacroEnv("eval", lines=1)
    with pytest.raises(ValueError, match="line slots"):
        env.reset(seed=0, options={"case_index": _index_of("legit-partial-refund", 2)})


def test_mask_after_reset(env: RefundMacroEnv) -> None:
    index = _index_of("legit-partial-refund", 2)
    _obs, info = env.reset(seed=0, options={"case_index": index})
    mask = env.action_masks()
    assert mask.dtype == np.int8 and np.array_equal(info["action_mask"], mask)
    allowed = {env.describe(i) for i in np.flatnonzero(mask)}
    assert allowed == {"history", "escalate", "reply", "line 0: pay", "line 1: pay"}
    assert "lookup_order" in info["text_action"], "reset sends the opening lookup"


def test_history_is_masked_until_a_payment_and_a_second_payment_only_after_an_error(
    env: RefundMacroEnv,
) -> None:
    env.reset(seed=0, options={"case_index": _index_of("timeout-then-retry")})
    env.step(env.layout.index(-1, "history"))
    assert not env.action_masks()[env.layout.index(-1, "history")]
    env.step(env.layout.index(0, "pay"))
    mask = env.action_masks()
    assert mask[env.layout.index(-1, "history")], "a payment makes the last read stale"
    # The same payment again (its own key: it pays once) or one under a new key.
    assert mask[env.layout.index(0, "pay")] and mask[env.layout.index(0, "repay")]
    assert env.observation_space.contains(env.tracker.vector())
    env.reset(seed=0, options={"case_index": _index_of("clean-single")})
    env.step(env.layout.index(0, "pay"))
    mask = env.action_masks()
    assert not mask[env.layout.index(0, "pay")] and not mask[env.layout.index(0, "repay")], "no error"


def test_each_move_is_the_matching_logged_tool_call(env: RefundMacroEnv) -> None:
    env.reset(seed=0, options={"case_index": _index_of("clean-single")})
    case = env.text_env.world.case
    line = case.order.lines[0]
    env.step(env.layout.index(-1, "history"))
    env.step(env.layout.index(0, "pay"))
    history, payment = env.text_env.export_log()[-2:]
    assert history["action"] == "refund_history" and history["args"] == {"order_id": case.order.order_id}
    assert payment["action"] == "issue_refund" and payment["executed"]
    assert payment["args"]["amount_cents"] == line.amount_cents and payment["args"]["sku"] == line.sku
    assert payment["args"]["idempotency_key"] == f"{case.order.order_id}:{line.sku}:{line.amount_cents}"


def test_a_move_on_an_empty_slot_costs_a_turn_and_does_nothing(env: RefundMacroEnv) -> None:
    env.reset(seed=0, options={"case_index": _index_of("clean-single")})
    entries = len(env.text_env.export_log())
    _obs, reward, terminated, truncated, info = env.step(env.layout.index(3, "pay"))
    assert info["text_action"] == "" and info["turn"] == 2
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert all(not entry["executed"] for entry in env.text_env.export_log()[entries:])


def test_repay_pays_twice_and_pay_again_is_replayed(env: RefundMacroEnv) -> None:
    reset = {"seed": 0, "options": {"case_index": _index_of("timeout-then-retry")}}
    env.reset(**reset)
    reward, info = _finish(env, (-1, "history"), (0, "pay"), (0, "repay"))
    assert info["score"]["duplicate_effects"] == 1 and reward < 1.0
    env.reset(**reset)
    env.step(env.layout.index(-1, "history"))
    env.step(env.layout.index(0, "pay"))
    env.step(env.layout.index(0, "pay"))  # masked, still legal: the same key pays nothing new
    reward, info = _finish(env)
    assert info["score"]["duplicate_effects"] == 0 and reward == 1.0


def test_the_vector_shows_the_lagging_history_only_once_it_catches_up(env: RefundMacroEnv) -> None:
    env.reset(seed=0, options={"case_index": _index_of("timeout-then-retry")})
    feature = GLOBAL_FEATURES + 5  # line 0's sixth feature: the history shows a key this episode sent
    env.step(env.layout.index(-1, "history"))
    env.step(env.layout.index(0, "pay"))
    lagging, *_ = env.step(env.layout.index(-1, "history"))
    env.step(env.layout.index(-1, "lookup"))  # masked, legal: a read that changes nothing
    caught_up, *_ = env.step(env.layout.index(-1, "history"))
    assert lagging[feature] == 0.0 and caught_up[feature] == 1.0


def test_a_void_waits_for_the_history_to_show_the_duplicate_and_earns_half_back() -> None:
    env = RefundMacroEnv("eval", recovery=True)
    reset = {"seed": 0, "options": {"case_index": _index_of("timeout-then-retry")}}
    env.reset(**reset)
    void = env.layout.index(0, "void")
    masks = []
    for line, move in ((-1, "history"), (0, "pay"), (0, "repay")):
        _obs, _r, _t, _tr, info = env.step(env.layout.index(line, move))
        masks.append(info["action_mask"][void])
    for _ in range(6):  # read until the lagging history shows both payments standing
        _obs, _r, _t, _tr, info = env.step(env.layout.index(-1, "history"))
        if info["action_mask"][void]:
            break
    assert masks == [0, 0, 0] and info["action_mask"][void] == 1
    _obs, _r, _t, _tr, info = env.step(void)
    assert '"void_refund"' in info["text_action"] and ":retry-" in info["text_action"]
    assert info["action_mask"][void] == 0
    reward, info = _finish(env)
    assert info["score"]["duplicate_effects"] == 1 and info["score"]["recovered_cents"] > 0
    env.reset(**reset)
    kept, _ = _finish(env, (-1, "history"), (0, "pay"), (0, "repay"))
    assert kept < reward < 1.0
    env.close()


@pytest.mark.parametrize("recovery", [False, True])
def test_reward_is_the_text_environments_for_the_same_text_actions(recovery: bool) -> None:
    """Random masked play (with recovery, a void whenever one is allowed: random play alone
    seldom sees a duplicate in the history) sent again as text gives the same episode."""
    macro, text_env = RefundMacroEnv("eval", recovery=recovery), RefundDeskEnv("eval", recovery=recovery)
    voids = [macro.layout.index(line, "void") for line in range(macro.layout.lines)] if recovery else []
    rng, voided = np.random.default_rng(5), 0  # a stream whose play reaches voids on eval (6)
    for index in range(len(EVAL)):
        reset = {"seed": index, "options": {"case_index": index}}
        _obs, info = macro.reset(**reset)
        sent, done = [info["text_action"]], False
        while not done:
            allowed = np.flatnonzero(info["action_mask"])
            wanted = [move for move in voids if move in allowed]
            move = wanted[0] if wanted else int(rng.choice(allowed))
            _obs, reward, terminated, truncated, info = macro.step(move)
            sent.append(info["text_action"])
            voided += '"void_refund"' in info["text_action"]
            done = terminated or truncated
        text_env.reset(**reset)
        for text_action in sent:
            _o, text_reward, _term, _trunc, text_info = text_env.step(text_action)
        assert text_reward == reward and text_info["score"] == info["score"]
        assert text_info["log_head"] == info["log_head"]
    assert (voided > 0) == recovery


def test_observations_do_not_depend_on_what_only_the_grader_reads() -> None:
    """Cases that differ only in their expectations, notes and family read the same."""
    relabelled = []
    for case in EVAL:
        data = case.as_dict()
        data["family"], data["notes"] = "clean-single", "relabelled"
        pay, escalate = data["expect"]["should_execute_new_refund"], data["expect"]["should_escalate"]
        data["expect"] = {  # pay -> hold, hold -> escalate, escalate -> pay
            "should_execute_new_refund": escalate,
            "correct_amount_cents": 1,
            "duplicate_risk": False,
            "should_escalate": not pay and not escalate,
        }
        relabelled.append(data)
    truthful, other = RefundMacroEnv("eval"), RefundMacroEnv(relabelled)
    rng = np.random.default_rng(7)
    for index in range(len(EVAL)):
        a, info_a = truthful.reset(seed=index, options={"case_index": index})
        b, info_b = other.reset(seed=index, options={"case_index": index})
        done = False
        while not done:
            assert np.array_equal(a, b) and np.array_equal(info_a["action_mask"], info_b["action_mask"])
            move = int(rng.choice(np.flatnonzero(info_a["action_mask"])))
            a, _ra, done, trunc_a, info_a = truthful.step(move)
            b, _rb, done_b, trunc_b, info_b = other.step(move)
            assert (done, trunc_a) == (done_b, trunc_b)
            done = done or trunc_a


def test_same_seed_same_episode_in_a_fresh_env() -> None:
    def episode(seed: int) -> list[np.ndarray]:
        env = RefundMacroEnv()
        vector, info = env.reset(seed=seed)
        out, done = [vector], False
        while not done:
            vector, _r, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
            out.append(vector)
            done = terminated or truncated
        env.close()
        return out

    first, again, other = episode(11), episode(11), episode(12)
    assert len(first) == len(again) and all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert len(first) != len(other) or not all(
        np.array_equal(a, b) for a, b in zip(first, other, strict=True)
    )
