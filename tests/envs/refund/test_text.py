"""RefundDeskEnv's Gymnasium interface: the checker, determinism, how episodes end,
its arguments, and hostile actions answered as observations, never exceptions."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

from batchgate_gym.desks.refund import ENV_ID
from batchgate_gym.envs.refund.text import RefundDeskEnv
from batchgate_gym.policies.refund.reference import REFERENCE_POLICIES

CASES = Path(__file__).resolve().parents[2] / "data" / "dsed_eval_curated.jsonl"
CASE_IDS = [json.loads(line)["case_id"] for line in CASES.read_text().splitlines() if line.strip()]


@pytest.fixture
def env():
    environment = RefundDeskEnv(str(CASES))
    yield environment
    environment.close()


def play(env: RefundDeskEnv, policy_class: type, **reset: Any) -> tuple[list[str], float, dict[str, Any]]:
    policy = policy_class()
    observation, info = env.reset(**reset)
    policy.reset(observation, info)
    seen = [observation]
    terminated = truncated = False
    reward = 0.0
    while not (terminated or truncated):
        observation, reward, terminated, truncated, info = env.step(policy.act(observation))
        seen.append(observation)
    return seen, reward, info


def payments(env: RefundDeskEnv) -> list[dict[str, Any]]:
    return [e for e in env.export_log() if e["action"] == "issue_refund" and e["executed"] is True]


def test_check_env_passes_with_warnings_as_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for settings in ({}, {"rules": "original", "hints": True}):
            made = gymnasium.make(ENV_ID, cases=str(CASES), **settings)
            assert isinstance(made.unwrapped, RefundDeskEnv)
            check_env(made.unwrapped)
            made.close()
        for knobs in ({"tickets": 3}, {"tickets": 2, "recovery": True}, {"recovery": True}):
            # A queue, recovery: the checker holds for both (a queue's budget given to make).
            made = gymnasium.make(ENV_ID, max_episode_steps=12 * knobs.get("tickets", 1), **knobs)
            check_env(made.unwrapped)
            made.close()


def test_same_seed_same_case_same_transcript_and_log():
    runs = []
    for _ in range(2):
        environment = RefundDeskEnv(str(CASES), render_mode="ansi")
        seen, reward, info = play(environment, REFERENCE_POLICIES["naive"], seed=11)
        runs.append((seen, reward, info, environment.render(), environment.export_log()))
        environment.close()
    assert runs[0] == runs[1]
    drawn = set()
    environment = RefundDeskEnv(str(CASES))
    for seed in range(40):
        environment.reset(seed=seed)
        assert environment.case is not None
        drawn.add(environment.case.case_id)
    assert len(drawn) > 10  # seeds draw different cases


def test_reset_observation_is_the_task_and_info_names_only_the_case(env):
    observation, info = env.reset(options={"case_id": "cur-timeout-01"})
    assert env.observation_space.contains(observation)
    assert observation.rstrip().endswith(
        'Ticket for order ORD-1041: "I returned the blender last week and still have not seen my money."'
    )
    for tool in ("lookup_order(", "refund_history(", "issue_refund(", "escalate(", "reply("):
        assert tool in observation
    assert "5000" in observation
    assert info == {
        "turn": 0,
        "calls": 0,
        "case_id": "cur-timeout-01",
        "family": "timeout-then-retry",
        "cases": str(CASES),
    }
    observation, reward, terminated, truncated, info = env.step('lookup_order("ORD-1041")')
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info == {"turn": 1, "calls": 1}
    assert observation.startswith("turn 1 of 12\n> lookup_order(")
    assert '"total_cents":4200' in observation


def test_hints_add_the_two_warnings():
    plain, _ = RefundDeskEnv(str(CASES)).reset(options={"case_index": 0})
    hinted, _ = RefundDeskEnv(str(CASES), hints=True).reset(options={"case_index": 0})
    assert len(hinted) > len(plain)
    assert "no proof" in hinted and "no proof" not in plain


def test_reply_ends_the_episode_and_pays_the_score(env):
    env.reset(options={"case_id": "cur-clean-01"})
    observation, reward, terminated, truncated, info = env.step(
        'lookup_order("ORD-8810"); refund_history("ORD-8810")'
    )
    assert not terminated and reward == 0.0
    observation, reward, terminated, truncated, info = env.step(
        'issue_refund("ORD-8810", 1200, "ORD-8810:SOCK-4:1200", "line unpaid", sku="SOCK-4")\n'
        'reply("Your refund is on its way.")\n'
        'issue_refund("ORD-8810", 1200, "again", "after the reply", sku="SOCK-4")'
    )
    assert terminated and not truncated
    assert "not run" in observation.split("> reply(")[1]  # the call after the reply ran nothing
    assert reward == info["score"]["reward"] == 1.0
    assert info["case_id"] == "cur-clean-01" and info["family"]
    assert info["log_intact"] is True and info["log_entries"] == len(env.export_log())
    assert info["log_head"] == env.export_log()[-1]["hash"]
    assert len(payments(env)) == 1
    with pytest.raises(RuntimeError):
        env.step('lookup_order("ORD-8810")')


def test_turn_limit_truncates_and_grades_the_log_as_it_stands():
    environment = RefundDeskEnv(str(CASES), max_turns=3)
    environment.reset(options={"case_id": "cur-dupticket-01"})
    outcomes = [environment.step('lookup_order("ORD-2210"); refund_history("ORD-2210")') for _ in range(3)]
    assert [(o[2], o[3]) for o in outcomes] == [(False, False), (False, False), (False, True)]
    _, reward, _, _, info = outcomes[-1]
    assert "Turn limit reached" in outcomes[-1][0]
    assert reward == info["score"]["reward"] == 1.0  # settled ticket, read and left alone


def test_default_episode_length_is_twelve_turns(env):
    env.reset(options={"case_index": 0})
    for turn in range(1, 13):
        _, _, terminated, truncated, _ = env.step('lookup_order("nope")')
        assert not terminated and truncated == (turn == 12)


HOSTILE_ACTIONS: list[Any] = [
    "",
    "nonsense(",
    "unknown_tool()",
    "issue_refund()",
    'issue_refund("ORD-8810", "1200", "k", "r")',
    'issue_refund("ORD-8810", True, "k", "r")',
    'issue_refund("ORD-8810", 1200.0, "k", "r")',
    'issue_refund("ORD-8810", 10**30, "k", "r")',
    'issue_refund("ORD-8810", 1e400, "k", "r")',
    'issue_refund(["ORD-8810"], 1200, "k", "r")',
    'issue_refund(8810, 1200, "k", "r")',
    'issue_refund("ORD-8810", 1200, 1, "r")',
    'issue_refund("ORD-8810", 1200, "k", 5)',
    'issue_refund("ORD-8810", 1200, "k", "r", sku=None)',
    'issue_refund("ORD-8810", 1200, "k", "r", sku=["SOCK-4"], extra=1)',
    'issue_refund("ORD-8810", 0, "k0", "zero", sku="SOCK-4")',
    'issue_refund("ORD-8810", -1200, "k-neg", "negative", sku="SOCK-4")',
    'issue_refund("ORD-0000", 1200, "k-other", "another order", sku="SOCK-4")',
    'issue_refund("ORD-8810", 1200, "", "blank key", sku="SOCK-4")',
    'issue_refund("ORD-8810", 1200, "k-sku", "wrong line", sku="lamp-7")',
    'issue_refund(" ORD-8810", 1200, "k-space", "spelling", sku="SOCK-4")',
    'lookup_order({"a": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]})',
    'lookup_order("' + "\u2603" * 50 + '")',
    'escalate("ORD-8810", "")',
    'escalate("ORD-8810", 12345678)',
    "escalate(None, None)",
    'reply(["not", "a", "string"])',
    '{"name": "issue_refund", "arguments": "{not json"}',
    '[{"name": "issue_refund", "arguments": {"order_id": "ORD-8810", "amount_cents": {"cents": 1}}}]',
    "x" * 70_000,
    "lookup_order('ORD-8810')\n" * 40,
    None,
    b'lookup_order("ORD-8810")',
    {"name": "lookup_order"},
    12,
]


@pytest.mark.parametrize("rules", ["default", "original"])
def test_hostile_actions_become_error_observations_never_exceptions(rules):
    environment = RefundDeskEnv(str(CASES), rules=rules, max_turns=len(HOSTILE_ACTIONS) + 1)
    environment.reset(options={"case_id": "cur-clean-01"})
    for hostile in HOSTILE_ACTIONS:
        observation, reward, terminated, truncated, info = environment.step(hostile)
        assert environment.observation_space.contains(observation), hostile
        assert (reward, terminated, truncated) == (0.0, False, False), hostile
        if rules == "default":
            assert "error" in observation, (hostile, observation)
    observation, reward, terminated, truncated, info = environment.step('reply("done")')
    assert terminated and 0.0 <= reward <= 1.0 and info["log_intact"]
    if rules == "default":
        # Only the ticket's order, a positive int amount, a key, a string reason and
        # one of its lines can move money: not one hostile payment went through.
        assert payments(environment) == []
        assert info["score"]["false_blocks"] == 1


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("rules", "strict"),
        ("rules", None),
        ("hints", 1),
        ("max_turns", 0),
        ("max_turns", True),
        ("max_calls_per_step", 1001),
        ("max_observation_chars", 255),
        ("log_key", b""),
        ("log_key", "secret"),
        ("render_mode", "rgb_array"),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(argument, value):
    with pytest.raises(ValueError, match=argument.split("_")[0]):
        RefundDeskEnv(str(CASES), **{argument: value})


def test_without_cases_each_reset_draws_a_fresh_case_from_its_seed():
    env = RefundDeskEnv()
    first = [env.reset(seed=seed)[0] for seed in range(3)]
    assert len(set(first)) == 3  # three seeds, three tickets
    assert [env.reset(seed=seed)[0] for seed in range(3)] == first


def test_a_log_key_chains_with_hmac():
    keyed = RefundDeskEnv(str(CASES), log_key=b"secret")
    plain = RefundDeskEnv(str(CASES))
    _, _, keyed_info = play(keyed, REFERENCE_POLICIES["careful"], options={"case_id": "cur-clean-02"})
    _, _, plain_info = play(plain, REFERENCE_POLICIES["careful"], options={"case_id": "cur-clean-02"})
    assert keyed_info["score"] == plain_info["score"]
    assert keyed_info["log_intact"] and keyed_info["log_head"] != plain_info["log_head"]
    assert len(CASE_IDS) == 32


def test_an_episode_end_walks_the_live_log_once_for_the_info_not_again_to_grade(env, monkeypatch):
    """The live log is not re-verified to grade it: the last step's only pass over the
    chain is the one that states ``log_intact``; the hashes are recomputed on export."""
    from batchgate_gym.kernel.ledger import Ledger

    walks = []
    real = Ledger._holds
    monkeypatch.setattr(Ledger, "_holds", lambda ledger, rehash: walks.append(rehash) or real(ledger, rehash))
    env.reset(options={"case_id": "cur-clean-01"})
    env.step('lookup_order("ORD-8810"); refund_history("ORD-8810")')
    *_, terminated, _truncated, info = env.step('reply("Nothing more is owed.")')
    assert terminated and info["log_intact"] is True and info["score"]["log_replayable"] == 1.0
    assert walks == [False]
    env.export_log()
    assert walks == [False, True]
