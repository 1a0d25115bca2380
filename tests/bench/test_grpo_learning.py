"""GRPO learns from the refund desk's reward: benchmarks/grpo_text.py's loop, at a size CI can run.

A Llama of about 120,000 parameters is fitted to transcripts of the scripted mix (careful,
naive, careful-without-history) on eight training tickets, then trained by TRL's
GRPOTrainer with the desk's environment as its ``environment_factory``; its reward on
eight held-out tickets (each ticket's mean over four seeded, sampled episodes) must rise
by more than the evaluation's noise: the paired bootstrap interval of the gain over the
same tickets lies above 0. With the reward not passed back (the trainer paid 0 for every
episode) the same run changes nothing and this test fails: ``python
benchmarks/grpo_text.py --learning-check --no-reward`` shows it.

The learning test takes about a minute of one CPU core (55 to 63 s measured, one thread);
the others a second or two, after the imports.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from benchmark_scripts import load_script

pytest.importorskip("trl")
grpo_text = load_script("grpo_text")


def _played(policy: str, cases: list[dict[str, Any]]) -> list[float]:
    env = grpo_text.tool_env_class("refund")(cases)
    plan = grpo_text.PLANS["refund"]
    return [
        grpo_text.transcript(env, grpo_text.scripted_policy("refund", policy), None, plan.max_calls, i)[1]
        for i in range(len(cases))
    ]


def test_the_tickets_are_sound_and_held_out() -> None:
    from batchgate_gym.desks.refund.generator.audit import audit_case

    train, held_out = grpo_text.check_cases()
    assert len(train) == len(held_out) == 8
    assert all(audit_case(case) == [] for case in train + held_out)

    def pairing(case: dict[str, Any]) -> tuple[str, str]:
        return json.dumps(case["ledger"]), json.dumps(case["tool_faults"])

    seen = {pairing(case) for case in train}
    for case in held_out:
        ledger, faults = pairing(case)
        assert (ledger, faults) not in seen
        assert any(ledger == other[0] for other in seen) and any(faults == other[1] for other in seen)
    assert {case["prompt"] for case in held_out} == {case["prompt"] for case in train}
    # careful earns everything; the mix the model starts from, far less
    assert _played("careful", held_out) == [1.0] * 8
    for policy in ("naive", "careful-without-history"):
        assert sum(_played(policy, held_out)) / 8 < 0.5


def test_each_call_the_mix_makes_is_one_token_that_trl_parses_back() -> None:
    from trl.chat_template_utils import add_response_schema, parse_response

    from batchgate_gym.llm.testing import tiny_tokenizer

    train, _ = grpo_text.check_cases()
    env = grpo_text.tool_env_class("refund")(train)
    plan = grpo_text.PLANS["refund"]
    chat, _ = grpo_text.transcript(
        env, grpo_text.scripted_policy("refund", "careful"), None, plan.max_calls, 3
    )
    tools = grpo_text.tool_schemas("refund")
    rendered = tiny_tokenizer().apply_chat_template(chat, tools=tools, tokenize=False)
    tokenizer = add_response_schema(grpo_text.whole_call_tokenizer([rendered, rendered], 300))  # as TRL does
    *played, closing = chat
    assert closing == {"role": "assistant", "content": ""}  # the turn with no call that ends a TRL rollout
    for message in played:
        if message["role"] != "assistant":
            continue
        (call,) = message["tool_calls"]
        text = grpo_text.WHOLE_CALL.search(tokenizer.apply_chat_template([message], tokenize=False)).group(0)
        ids = tokenizer(text + "<|im_end|>")["input_ids"]
        assert len(ids) == 2
        assert parse_response(tokenizer, ids, prefix=[], tools=tools)["tool_calls"] == [call]
    # the brief, the schemas and the tools' answers are a token a line: what keeps the check fast
    assert len(tokenizer(rendered)["input_ids"]) * 20 < len(rendered)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--learning-check", "--width", "8"], "--width not taken"),
        (["--learning-check", "--tables-only"], "--tables-only not taken"),
        (["--no-reward"], "--no-reward goes with --learning-check"),
    ],
)
def test_the_check_refuses_options_it_would_not_use(argv: list[str], said: str, capsys: Any) -> None:
    with pytest.raises(SystemExit) as stopped:
        grpo_text.main(argv)
    assert stopped.value.code == 2 and said in capsys.readouterr().err


@pytest.mark.slow
def test_grpo_raises_the_held_out_reward_beyond_the_noise(tmp_path: Any) -> None:
    result = grpo_text.learning_check(grpo_text.LearningCheck(), tmp_path)
    assert result["mean_before"] < 0.5  # the supervised start is the mix's, far below careful's 1.0
    low, _high = result["gain_ci95_paired"]
    assert low > 0, result
    # what it learned is the desk's point: it pays twice far less often than the mix it started from
    assert result["metrics_after"]["duplicate_effects"] < result["metrics_before"]["duplicate_effects"] / 2
    # every reward the trainer used is the desk's score of the same calls, replayed here
    assert result["replayed_equal_get_reward"] and result["trainer_rewards_are_the_desks"], result
    assert result["rollouts_scored"] == 20 * 16
