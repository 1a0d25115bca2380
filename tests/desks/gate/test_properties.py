"""Properties of the environment and grader over drawn cases and drawn play.

Cases come from the generator at varied scale; play is random tool calls (some
with unknown ids, refused SQL, wrong columns) and random text. Bounded by the
``ci`` hypothesis profile; ``pytest tests/desks/gate/test_properties.py
--hypothesis-profile=long`` runs 10,000 examples per property.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from batchgate_gym.desks.gate.contract import DEFECT_TYPES, TABLE_COLUMNS
from batchgate_gym.desks.gate.grader import TERMS, read_facts
from batchgate_gym.desks.gate.replay import replay
from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.kernel.codec import ToolCall
from batchgate_gym.kernel.ledger import verify_chain
from batchgate_gym.testing import GateMachine, action_strings, case_names, cases, episodes, render_action

SCALE = {"rows_per_batch": (1, 12), "batches": st.integers(2, 4), "defects_per_batch": st.integers(1, 2)}
Steps = list[list[ToolCall]]


def play(
    case: Any, steps: Steps, *, max_turns: int = 30, seed: int = 0
) -> tuple[BatchGateEnv, dict[str, Any]]:
    """Run the steps (JSON and call syntax alternating); stop early if the episode ends."""
    env = BatchGateEnv([case], max_turns=max_turns, render_mode="ansi")
    env.reset(seed=seed)
    info: dict[str, Any] = {}
    for number, calls in enumerate(steps):
        _obs, _reward, terminated, truncated, info = env.step(render_action(calls, as_json=number % 2 == 1))
        if terminated or truncated:
            break
    return env, info


def finish(env: BatchGateEnv, info: dict[str, Any]) -> dict[str, Any]:
    """The final info: submit an empty report if the steps left the episode open."""
    if "score" in info:
        return info
    return env.step("submit_report(loaded=[], quarantined=[])")[4]


@given(episodes(**SCALE))
def test_reward_and_every_term_lie_in_the_unit_interval(episode: tuple[Any, Steps]) -> None:
    case, steps = episode
    env, info = play(case, steps)
    score = finish(env, info)["score"]
    for name in ("reward", *TERMS):
        assert 0.0 <= score[name] <= 1.0, name
    assert score["bad_batches_loaded"] <= case.n_defective


@given(episodes(report=False, **SCALE))
def test_no_report_gives_zero_on_every_term(episode: tuple[Any, Steps]) -> None:
    case, steps = episode
    steps = steps or [[ToolCall("list_batches")]]
    _env, info = play(case, steps, max_turns=len(steps))
    assert info["score"]["reported"] is False
    assert all(info["score"][name] == 0.0 for name in ("reward", *TERMS))


@given(episodes(**SCALE))
def test_replaying_the_log_reproduces_the_live_score(episode: tuple[Any, Steps]) -> None:
    case, steps = episode
    env, info = play(case, steps)
    info = finish(env, info)
    log = env.export_log()
    verify_chain(log, head=info["log_head"], case_digest=case.digest)
    assert replay(case, log, head=info["log_head"]).as_dict() == info["score"]


@given(episodes(**SCALE), st.integers(0, 2**32 - 1))
def test_same_seed_and_actions_give_the_same_transcript(episode: tuple[Any, Steps], seed: int) -> None:
    case, steps = episode
    runs = [play(case, steps, seed=seed) for _ in range(2)]
    (first, first_info), (second, second_info) = runs
    assert first.render() == second.render()
    assert first.export_log() == second.export_log()
    assert first_info == second_info


def _first_actions(log: list[dict[str, Any]]) -> dict[str, str]:
    """Per batch, the first executed load or quarantine."""
    first: dict[str, str] = {}
    for entry in log:
        if entry["executed"] and entry["action"] in ("load_batch", "quarantine_batch"):
            first.setdefault(entry["args"]["batch_id"], entry["action"])
    return first


@given(episodes(**SCALE))
def test_a_batch_quarantined_before_any_load_never_counts_as_loaded(episode: tuple[Any, Steps]) -> None:
    case, steps = episode
    env, info = play(case, steps)
    info = finish(env, info)
    log = env.export_log()
    world = env.unwrapped.world
    facts = read_facts(case, log)
    held = [b for b, action in _first_actions(log).items() if action == "quarantine_batch"]
    for batch_id in held:
        assert world.load_counts.get(batch_id, 0) == 0
        assert facts.loads.get(batch_id, 0) == 0
    bad_held = sum(1 for b in held if case.batch(b).truth.defective)
    assert info["score"]["bad_batches_loaded"] <= case.n_defective - bad_held


@st.composite
def quarantine_instead(draw: st.DrawFn) -> tuple[Any, Steps, Steps]:
    """An episode, and the same episode with every load of one defective batch a quarantine."""
    case, steps = draw(episodes(report=True, **SCALE))
    defective = [b for b in case.batches if b.truth.defective]
    assume(defective)
    batch = draw(st.sampled_from(defective))
    column = draw(st.sampled_from(TABLE_COLUMNS[batch.table]))
    citation = {
        "batch_id": batch.batch_id,
        "column": column,
        "defect_type": draw(st.sampled_from(DEFECT_TYPES)),
    }
    swapped = [
        [
            ToolCall("quarantine_batch", citation)
            if call.name == "load_batch" and call.args["batch_id"] == batch.batch_id
            else call
            for call in calls
        ]
        for calls in steps
    ]
    return case, steps, swapped


@given(quarantine_instead())
def test_quarantining_a_defective_batch_instead_of_loading_it_never_lowers_disposition_or_evidence(
    drawn: tuple[Any, Steps, Steps],
) -> None:
    case, steps, swapped = drawn
    before = play(case, steps)[1]["score"]
    after = play(case, swapped)[1]["score"]
    assert after["disposition"] >= before["disposition"]
    assert after["evidence"] >= before["evidence"]


def _claims(draw: st.DrawFn, truth: list[str], ids: list[str]) -> list[str]:
    """The truthful list, or one perturbation of it (a perturbation may leave it exact)."""
    claim = draw(st.permutations(truth))
    kind = draw(st.sampled_from(("exact", "duplicate", "extra", "drop", "case", "swap-in")))
    if kind == "duplicate" and claim:
        claim.append(draw(st.sampled_from(claim)))
    elif kind == "extra":
        claim.append(draw(st.sampled_from([*ids, "B-UNKNOWN", ""])))
    elif kind == "drop" and claim:
        claim.pop(draw(st.integers(0, len(claim) - 1)))
    elif kind == "case" and claim:
        claim[0] = claim[0].lower() if claim[0] != claim[0].lower() else claim[0].upper()
    elif kind == "swap-in":
        claim = draw(st.lists(st.sampled_from(ids), max_size=len(ids)))
    return claim


@given(episodes(report=False, **SCALE), st.data())
def test_the_report_term_is_one_only_for_the_exact_truthful_lists(
    episode: tuple[Any, Steps], data: st.DataObject
) -> None:
    case, steps = episode
    env, _info = play(case, steps)
    world = env.unwrapped.world  # the world's own counters, not the grader's reading of the log
    loaded = sorted(b for b, n in world.load_counts.items() if n)
    quarantined = sorted(world.quarantined)
    ids = case_names(case)[0]
    claim_loaded = data.draw(st.composite(lambda draw: _claims(draw, loaded, ids))())
    claim_quarantined = data.draw(st.composite(lambda draw: _claims(draw, quarantined, ids))())
    report = ToolCall("submit_report", {"loaded": claim_loaded, "quarantined": claim_quarantined})
    info = env.step(render_action([report]))[4]
    exact = Counter(claim_loaded) == Counter(loaded) and Counter(claim_quarantined) == Counter(quarantined)
    assert info["score"]["report"] == (1.0 if exact else 0.0)


@given(cases(rows_per_batch=(1, 6)), st.data())
def test_the_env_never_raises_and_every_observation_lies_in_its_space(case: Any, data: st.DataObject) -> None:
    env = BatchGateEnv([case], max_turns=6)
    observation, _info = env.reset(seed=0)
    assert env.observation_space.contains(observation)
    actions = data.draw(st.lists(action_strings(*case_names(case)), min_size=1, max_size=6))
    for action in actions:
        observation, reward, terminated, truncated, _info = env.step(action)
        assert env.observation_space.contains(observation)
        assert 0.0 <= reward <= 1.0
        if terminated or truncated:
            break


TestGateMachine = pytest.mark.slow(GateMachine.TestCase)  # a hypothesis state machine
