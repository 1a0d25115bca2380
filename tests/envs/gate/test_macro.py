"""The macro-action wrapper: Gymnasium's checker, the action mask, and that every
move is a real text action whose reward is the text environment's."""

from __future__ import annotations

import json
import warnings

import gymnasium
import numpy as np
import pytest
from conftest import FIXTURE_CASES
from gymnasium.utils.env_checker import check_env

from batchgate_gym.envs import MACRO_ENV_ID, BatchGateEnv
from batchgate_gym.envs.gate.macro import SLOT_MOVES, GateMacroEnv, GateMacroLayout
from batchgate_gym.evaluation import evaluate
from batchgate_gym.policies.gate.learned import MacroPolicy


@pytest.fixture
def env() -> GateMacroEnv:
    macro = GateMacroEnv(FIXTURE_CASES)
    yield macro
    macro.close()


def _mask_of(env: GateMacroEnv, slot: int) -> dict[str, bool]:
    mask = env.action_masks()
    return {move: bool(mask[env.layout.index(slot, move)]) for move in SLOT_MOVES}


def test_check_env_passes_with_warnings_as_errors() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        made = gymnasium.make(MACRO_ENV_ID, cases=FIXTURE_CASES)
        check_env(made.unwrapped)
        made.close()


def test_layout_round_trips_every_index() -> None:
    layout = GateMacroLayout(3)
    assert layout.n_actions == 3 * len(SLOT_MOVES) + 1
    for index in range(layout.n_actions):
        slot, move = layout.decode(index)
        assert layout.index(slot, move) == index
    with pytest.raises(ValueError):
        layout.decode(layout.n_actions)


def test_mask_after_reset_allows_own_table_moves_only(env: GateMacroEnv) -> None:
    _obs, info = env.reset(seed=0, options={"case_index": 0})
    assert np.array_equal(info["action_mask"], env.action_masks())
    assert env.action_masks()[env.layout.submit]
    for slot, state in enumerate(env.tracker.slots):
        allowed = _mask_of(env, slot)
        own = set(state.rules)
        for move, ok in allowed.items():
            kind, _, rule = move.partition(":")
            assert ok == (kind in ("profile", "load") or rule in own), move
    for slot in range(len(env.tracker.slots), env.layout.slots):
        assert not any(_mask_of(env, slot).values())


def test_answered_checks_and_profiles_are_masked_until_the_warehouse_changes(env: GateMacroEnv) -> None:
    env.reset(seed=0, options={"case_index": 0})
    first_rule = next(iter(env.tracker.slots[1].rules))
    env.step(env.layout.index(1, "profile"))
    env.step(env.layout.index(1, f"check:{first_rule}"))
    assert not _mask_of(env, 1)["profile"]
    assert not _mask_of(env, 1)[f"check:{first_rule}"]
    _obs, _reward, _term, _trunc, info = env.step(env.layout.index(0, "load"))
    assert not any(_mask_of(env, 0).values()), "a loaded batch takes no more moves"
    assert _mask_of(env, 1)[f"check:{first_rule}"], "a load makes earlier answers stale"
    assert not _mask_of(env, 1)["profile"], "a profile reads staging only"
    assert np.array_equal(info["action_mask"], env.action_masks())


def test_each_move_is_the_matching_logged_tool_call(env: GateMacroEnv) -> None:
    env.reset(seed=0, options={"case_index": 3})
    batch = env.tracker.slots[0].batch
    rule = next(iter(env.tracker.slots[0].rules.values()))
    env.step(env.layout.index(0, f"check:{rule.name}"))
    env.step(env.layout.index(0, f"quarantine:{rule.name}"))
    log = env.text_env.export_log()
    check, quarantine = log[-2], log[-1]
    assert check["action"] == "run_sql" and check["executed"]
    assert batch["staging_table"] in check["args"]["tables_read"]
    assert quarantine["action"] == "quarantine_batch"
    assert quarantine["args"] == {
        "batch_id": batch["batch_id"],
        "column": rule.column,
        "defect_type": rule.defect_type,
    }


def test_a_move_on_an_empty_slot_costs_a_turn_and_does_nothing(env: GateMacroEnv) -> None:
    env.reset(seed=0, options={"case_index": 0})
    entries = len(env.text_env.export_log())
    _obs, reward, terminated, truncated, info = env.step(env.layout.index(3, "load"))
    assert info["text_action"] == "" and info["turn"] == 2
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert all(not entry["executed"] for entry in env.text_env.export_log()[entries:])


def _play_careful(env: GateMacroEnv, sent: list[str]) -> tuple[float, dict]:
    """Customers first; each rule checked until one fails; quarantine citing it, else
    load; then report. Every text action the wrapper sent is appended to ``sent``."""

    def step(move: int) -> tuple:
        out = env.step(move)
        sent.append(out[4]["text_action"])
        return out

    slots = env.tracker.slots
    for slot in sorted(range(len(slots)), key=lambda s: slots[s].batch["table"] != "customers"):
        state, failing = slots[slot], None
        for name in state.rules:
            step(env.layout.index(slot, f"check:{name}"))
            if state.checks[name][0] > 0:
                failing = name
                break
        step(env.layout.index(slot, f"quarantine:{failing}" if failing else "load"))
    _obs, reward, terminated, _truncated, info = step(env.layout.submit)
    assert terminated
    return reward, info


def test_reward_is_the_text_environments_for_the_same_text_actions(env: GateMacroEnv) -> None:
    text_env = BatchGateEnv(FIXTURE_CASES)
    for index in range(0, 32, 3):
        reset = {"seed": index, "options": {"case_index": index}}
        _obs, info = env.reset(**reset)
        sent = [info["text_action"]]
        reward, final = _play_careful(env, sent)
        assert reward == final["score"]["reward"] == 1.0, "careful-style macro play scores like careful"
        text_env.reset(**reset)
        for text_action in sent:
            _o, text_reward, _term, _trunc, _info = text_env.step(text_action)
        assert text_reward == reward
        assert [e["hash"] for e in text_env.export_log()] == [e["hash"] for e in env.text_env.export_log()]


def test_observations_do_not_depend_on_truth_labels() -> None:
    cases = [json.loads(line) for line in FIXTURE_CASES.read_text().splitlines() if line.strip()]
    for case in cases:
        for batch in case["batches"]:
            flipped_to_bad = not batch["truth"]["defective"]
            planted = [{"column": "customer_id", "type": "invalid_value"}] if flipped_to_bad else []
            batch["truth"] = {"defective": flipped_to_bad, "defects": planted}
    truthful, flipped = GateMacroEnv(FIXTURE_CASES), GateMacroEnv(cases)
    rng = np.random.default_rng(7)
    for index in range(0, 32, 5):
        a, info_a = truthful.reset(seed=index, options={"case_index": index})
        b, info_b = flipped.reset(seed=index, options={"case_index": index})
        for _ in range(12):
            assert np.array_equal(a, b) and np.array_equal(info_a["action_mask"], info_b["action_mask"])
            move = int(rng.choice(np.flatnonzero(info_a["action_mask"])))
            a, _ra, done_a, _ta, info_a = truthful.step(move)
            b, _rb, done_b, _tb, info_b = flipped.step(move)
            assert done_a == done_b
            if done_a:
                break


def _first_allowed(vector: np.ndarray, mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def test_text_level_adapter_plays_the_same_game_as_the_wrapper(env: GateMacroEnv) -> None:
    via_text = evaluate(MacroPolicy(_first_allowed), cases=FIXTURE_CASES, progress=False)
    for result in via_text.episodes[:8]:
        vector, info = env.reset(seed=result.index, options={"case_index": result.index})
        while True:
            vector, reward, terminated, truncated, info = env.step(
                _first_allowed(vector, info["action_mask"])
            )
            if terminated or truncated:
                break
        assert reward == result.reward and info["turn"] == result.turns


def test_kept_features_and_masks_match_a_fresh_reading_at_every_move(env: GateMacroEnv) -> None:
    """The tracker keeps each slot's features until a result or a load changes them, and
    the wrapper works the mask out once a move: after every random masked move, both
    equal what a fresh reading of the same state gives, and a mask handed out is the
    caller's own to change."""
    rng = np.random.default_rng(3)
    observation, info = env.reset(seed=0)
    for _ in range(400):
        tracker = env.tracker
        seen = observation.copy()
        observation[:] = 0  # the caller's copy: the tracker's next vector is unchanged
        assert np.array_equal(tracker.vector(), seen)
        kept_mask = tracker.mask()
        for slot in tracker.slots:
            slot.features_epoch = slot.mask_epoch = -1  # every slot written afresh
        assert np.array_equal(tracker.vector(), seen)
        assert np.array_equal(tracker.mask(), kept_mask)
        assert np.array_equal(info["action_mask"], tracker.mask())
        mask = env.action_masks()
        assert np.array_equal(mask, tracker.mask())
        mask[:] = 0  # the caller's copy: the env's next answer is unchanged
        info["action_mask"][:] = 0
        allowed = env.action_masks()
        assert allowed.any() and np.array_equal(allowed, tracker.mask())
        observation, _reward, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(allowed)))
        if terminated or truncated:
            observation, info = env.reset()


def test_a_kept_move_is_the_call_made_afresh_and_read_only(env: GateMacroEnv) -> None:
    """A slot move's call and text, made once per case and handed out again in its later
    episodes, equal the ones made afresh at every random move, and the call refuses changes."""
    rng = np.random.default_rng(5)
    env.reset(seed=0)
    kept = 0
    for _ in range(300):
        index = int(rng.integers(env.layout.n_actions))
        tracker = env.tracker
        calls, text = tracker.move_action(index)
        afresh = tracker.move_calls(index)
        assert calls == afresh and text == (json.dumps(afresh) if afresh else "")
        if calls and index != env.layout.submit:
            assert tracker.move_action(index)[0][0] is calls[0]
            with pytest.raises(TypeError):
                calls[0]["arguments"]["batch_id"] = "B-other"
            kept += 1
        *_, terminated, truncated, _info = env.step(index)
        if terminated or truncated:
            env.reset()
    assert kept > 100
