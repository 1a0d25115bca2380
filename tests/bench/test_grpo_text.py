"""benchmarks/grpo_text.py's plumbing: the served model reads a ``run-model --mode text`` chat
exactly as TRL trained it, and the rewards the trainer used are checked by replaying calls.

The learning itself is the benchmark's (minutes of CPU); these tests take about a second.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from benchmark_scripts import load_script

pytest.importorskip("transformers")
grpo_text = load_script("grpo_text")


def _careful_chat(seed: int) -> tuple[list[dict[str, Any]], float]:
    env = grpo_text.tool_env_class("refund")()
    policy = grpo_text.scripted_policy("refund", "careful")
    return grpo_text.transcript(env, policy, seed, grpo_text.PLANS["refund"].max_calls)


def _as_run_model_text_chat(chat: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same episode as ``run-model --mode text --system-prompt BRIEF`` sends it."""
    brief, _, case = chat[0]["content"].rpartition("\n\n")
    messages = [{"role": "system", "content": brief}, {"role": "user", "content": case}]
    for message in chat[1:]:
        if message["role"] == "assistant":
            (call,) = message["tool_calls"]
            content = json.dumps(
                {"name": call["function"]["name"], "arguments": call["function"]["arguments"]}
            )
            messages.append({"role": "assistant", "content": content})
        else:
            messages.append({"role": "user", "content": message["content"]})
    return messages


@pytest.mark.parametrize("seed", [3, 11])
def test_the_server_rebuilds_the_chat_trl_trained_on(seed: int) -> None:
    chat, reward = _careful_chat(seed)
    assert reward == 1.0 and len(chat) >= 5
    # the reply ended the episode; the closing turn with no call is TRL's, run-model never asks for it
    *played, closing = chat
    assert closing == {"role": "assistant", "content": ""}
    assert grpo_text.conversation_of(_as_run_model_text_chat(played)) == played


def test_a_text_that_is_no_call_stays_text() -> None:
    chat, _ = _careful_chat(3)
    messages = _as_run_model_text_chat(chat[:-1])[:2] + [{"role": "assistant", "content": "I will look."}]
    assert grpo_text.conversation_of(messages)[-1] == {"role": "assistant", "content": "I will look."}
    assert grpo_text.call_in('["lookup_order"]') is None and grpo_text.call_in("{") is None


def test_the_recorded_rollout_replays_to_the_reward_it_paid() -> None:
    log = grpo_text.RolloutLog()
    env = grpo_text.recording_factory("refund", log)()
    policy = grpo_text.scripted_policy("refund", "naive")
    _chat, reward = grpo_text.transcript(env, policy, 5, grpo_text.PLANS["refund"].max_calls)
    (rollout,) = log.rollouts
    assert rollout["reward"] == reward < 1.0
    assert grpo_text.replayed_reward("refund", 5, rollout["calls"]) == reward
    # One call changed (the amount paid) is another episode, scored otherwise.
    changed = [(name, dict(args)) for name, args in rollout["calls"]]
    paid = next(args for name, args in changed if name == "issue_refund")
    paid["amount_cents"] = 1
    assert grpo_text.replayed_reward("refund", 5, changed) != reward


def test_pretraining_fits_every_token_and_the_supervised_fit_the_calls_alone() -> None:
    """The stage that teaches copying (``--pretrain-steps``) puts the tools' answers, which
    echo each call, in the loss; the supervised fit after it only the assistant's turns."""
    from batchgate_gym.llm.testing import tiny_tokenizer

    chats = [_careful_chat(seed)[0] for seed in (3, 11)]
    tools = grpo_text.tool_schemas("refund")
    rendered = [tiny_tokenizer().apply_chat_template(chat, tools=tools, tokenize=False) for chat in chats]
    tokenizer = grpo_text.build_tokenizer(rendered, 300)
    examples = grpo_text.training_examples(tokenizer, chats, tools)
    for (ids, calls_only), (same_ids, every) in zip(examples, grpo_text.every_token(examples), strict=True):
        assert same_ids == ids and every == [1] * len(ids)
        assert 0 < sum(calls_only) < len(ids) / 2
        kept = tokenizer.decode([t for t, m in zip(ids, calls_only, strict=True) if m])
        assert "lookup_order" in kept and "Ticket for order" not in kept
    config = grpo_text.RunConfig(pretrain_steps=600)
    assert "--pretrain-steps 600" in grpo_text.command_of(grpo_text.asdict(config))


@pytest.mark.parametrize("desk", ["refund", "gate"])
def test_the_tools_are_listed_as_the_trainer_lists_them(desk: str) -> None:
    """TRL's ``GRPOTrainer`` shows the model an environment's public methods in the order
    ``inspect.getmembers`` gives them (by name): the transcripts the model is fitted on and
    the served model must list the tools in that order, or every training rollout opens on
    a prompt the model never saw."""
    import inspect

    cls = grpo_text.tool_env_class(desk)
    trainer_order = [
        name
        for name, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
        if not name.startswith("_") and name not in ("reset", "get_reward")
    ]
    assert [tool["function"]["name"] for tool in grpo_text.tool_schemas(desk)] == trainer_order


def test_a_saved_start_reads_back_as_the_fitted_model(tmp_path: Any) -> None:
    """A run saves its fitted start; ``--start`` reads that folder back instead of fitting
    again, so GRPO's settings can be compared from one start: the read-back model gives the
    fitted model's logits, and its tokenizer the same ids."""
    import torch

    config = grpo_text.RunConfig(
        transcripts=2, vocab=400, width=32, layers=1, pretrain_steps=2, sft_steps=2, sft_batch=2
    )
    model, tokenizer, facts = grpo_text.fitted_start(config, tmp_path)
    again, same_tokenizer, same_facts = grpo_text.saved_start(tmp_path / "start_model")
    text = "<|im_start|>user\nTicket for order 12<|im_end|>"
    ids = tokenizer(text, return_tensors="pt").input_ids
    assert same_tokenizer(text, return_tensors="pt").input_ids.tolist() == ids.tolist()
    with torch.no_grad():
        assert torch.equal(model(ids).logits, again(ids).logits)
    assert same_facts == facts and facts["fit"]["width"] == 32 and facts["desk"] == "refund"
    assert str(again.config._name_or_path) == str(tmp_path / "start_model")  # GRPO's reference model (--beta)


def test_start_refuses_the_fit_options_it_would_ignore(tmp_path: Any, capsys: Any) -> None:
    folder = tmp_path / "start_model"
    folder.mkdir()
    (folder / "start.json").write_text(json.dumps({"desk": "refund", "fit": {}}))
    for argv, said in (
        (["--start", str(folder), "--width", "64"], "--width not taken"),
        (["--desk", "gate", "--start", str(folder)], "fitted on another desk"),
        (["--start", str(tmp_path)], "no start.json"),
    ):
        with pytest.raises(SystemExit):
            grpo_text._arguments(argv)
        assert said in capsys.readouterr().err
    assert grpo_text._arguments(["--start", str(folder), "--beta", "0.04"]).beta == 0.04
    config = grpo_text.RunConfig(start=str(folder), width=64, beta=0.04)
    command = grpo_text.command_of(grpo_text.asdict(config))  # the fit's options are the start's
    assert command.endswith(f"--beta 0.04 --start {folder}") and "--width" not in command
