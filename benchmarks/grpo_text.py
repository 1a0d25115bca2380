"""GRPO on a desk's text interface: a small language model, built here, learns from the desk's reward.

``python benchmarks/grpo_text.py --desk refund --out benchmarks/results/grpo_text/refund``

1. **Transcripts.** A mix of the desk's scripted policies (on the refund desk
   ``careful``, ``naive`` and ``careful-without-history``, in equal parts) plays
   procedural cases through the desk's TRL environment
   (:mod:`batchgate_gym.llm.trl_env`), one tool call a message; each episode is a chat
   in TRL's shape (the reset observation as the user message, every call an assistant
   message, every observation a tool message), rendered by the Qwen 2.5 chat template
   TRL parses.
2. **Tokenizer and model.** A byte-level BPE tokenizer is trained on those transcripts,
   digits one token each and spaces not a boundary (the brief and the JSON around the
   values merge into long tokens; an order's digits stay digits, to be copied); the model
   is a ``transformers`` Llama of a few million parameters, seeded, on the CPU.
3. **Supervised start.** The model is fitted to the transcripts (loss on the assistant's
   tokens only): it plays roughly as the mix does, well below careful.
4. **GRPO.** TRL's ``GRPOTrainer`` trains it with ``environment_factory`` on procedural
   cases whose seeds are far from every held-out case: the model's own samples choose
   every tool call, and the desk's score of the episode is the reward. Every rollout's
   calls are recorded, and after training each is replayed on a fresh environment in
   this process: its ``get_reward()`` must equal the reward the trainer used.
5. **Held-out evaluation** every ``--eval-every`` steps and at the start: the model is
   served by a minimal chat-completions server in this process (:class:`LearnedModelServer`,
   greedy decoding) and ``batchgate run-model --mode text`` plays the desk's eval split
   against it, so its rows, report and certificates are any model's; the model is named
   ``grpo-text-<desk>-step<N>``. The server renders a conversation exactly as the model
   was trained on it (the system message, which ``--system-prompt`` sets to the brief
   of the reset observation, joined to the case; each observation as a tool response)
   and answers with the model's call as a JSON call in the message's text.

The result folder holds the curve (held-out mean reward with its 95% bootstrap interval
at each evaluation), the start and end rows, the behaviour that changed (refund:
duplicate payments; gate: the share of episodes that profile a batch before loading
it), the wall time, the reward parity check, each evaluation's results file and every
training rollout's calls and reward (``rollouts.jsonl``).

``--learning-check`` runs the same loop at the size CI runs it
(``tests/bench/test_grpo_learning.py``): sixteen refund tickets about one order, a
tokenizer with one token for each whole call, GRPO on eight tickets, the other eight held
out and each scored as the mean of seeded sampled episodes in this process; it writes
``learning_check.json`` and ``learning_check.md``. With ``--no-reward`` the trainer is
paid 0 for every episode: the control, under which nothing may be learned.

Needs the ``trl`` extra (torch, transformers, trl, datasets).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from batchgate_gym.llm.summary import bootstrap_ci95
from batchgate_gym.llm.trl_env import DeskToolEnv, episode_rows, keep_trained_rewards, tool_env_class

HERE = Path(__file__).resolve().parent
TRAIN_SEED_BASE = 50_000_000  # procedural training cases: far from every split's seeds
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>")
TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


@dataclass(frozen=True)
class DeskPlan:
    """What a desk's run needs: its scripted mix and the behaviour to count."""

    mix: tuple[str, ...]
    behaviour: str  # what :func:`behaviour_of` counts on a row
    max_calls: int  # tool-calling turns a rollout may take


PLANS: dict[str, DeskPlan] = {
    "refund": DeskPlan(("careful", "naive", "careful-without-history"), "duplicate payments", 8),
    "gate": DeskPlan(("profile-only", "naive", "refuse-all"), "profiled before loading", 14),
}


@dataclass(frozen=True)
class RunConfig:
    desk: str = "refund"
    seed: int = 0
    transcripts: int = 600  # episodes of each scripted policy for the supervised start
    vocab: int = 1500
    width: int = 192
    layers: int = 4
    pretrain_steps: int = 1500  # steps of loss on every token of the transcripts, before the supervised fit
    sft_steps: int = 300
    sft_batch: int = 16
    sft_lr: float = 2e-3
    grpo_steps: int = 60
    grpo_batch: int = 16  # rollouts a step
    generations: int = 8  # rollouts of each case, the group GRPO compares
    grpo_lr: float = 2e-4
    temperature: float = 1.0
    beta: float = 0.0  # GRPO's KL penalty towards the supervised start (0: no reference model)
    eval_every: int = 20
    eval_split: str = "eval"
    eval_cases: int = 0  # N cases of the split drawn by run-model's --sample (seed 0; 0: all)
    max_completion: int = 1024
    threads: int = 2  # torch's threads (two runs side by side on two cores: 1 each)
    start: str = ""  # an earlier run's start_model folder: its fitted model, instead of fitting again


# The options that shape the supervised start: with --start, they are the start folder's.
FIT_FIELDS = ("transcripts", "vocab", "width", "layers", "pretrain_steps", "sft_steps", "sft_batch", "sft_lr")


# -- 1. transcripts -----------------------------------------------------------------------


def scripted_policy(desk: str, name: str) -> Any:
    """One of the desk's scripted policies by the name the commands use."""
    from batchgate_gym.desks import registry

    policies = registry.get(desk).policies
    base, _, checks = name.partition("-without-")
    if checks:
        reference = policies.reference_policies[base]
        return reference.without(*checks.split("+"))
    known = {**policies.reference_policies, **policies.attacker_policies}
    return known[name]()


def calls_of(text_action: str) -> list[dict[str, Any]]:
    """The calls of a scripted policy's JSON action."""
    parsed = json.loads(text_action)
    return parsed if isinstance(parsed, list) else [parsed]


def transcript(
    env: DeskToolEnv, policy: Any, seed: int | None, max_calls: int, case_index: int | None = None
) -> tuple[list[dict[str, Any]], float]:
    """One episode of ``policy`` through the TRL environment, one call a message: the chat and its
    reward. An episode that ended closes with an empty assistant message, the turn with no call
    that ends a TRL rollout (else the model learns to call on after the episode is over)."""
    observation = env.reset(seed=seed, case_index=case_index)
    policy.reset(observation, {})
    messages: list[dict[str, Any]] = [{"role": "user", "content": observation}]
    seen = observation
    while not env.done and len(messages) < 2 * max_calls:
        answered = []
        for call in calls_of(policy.act(seen)):
            if env.done:
                break
            name, arguments = call["name"], call.get("arguments", {})
            answer = getattr(env, name)(**arguments)
            messages += [assistant_call(name, arguments), {"role": "tool", "name": name, "content": answer}]
            answered.append(answer)
        seen = "\n".join(answered)
    if env.done:
        messages.append({"role": "assistant", "content": ""})
    return messages, env.get_reward()


def assistant_call(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": {"name": name, "arguments": dict(arguments)}}],
    }


def play_mix(config: RunConfig) -> tuple[list[list[dict[str, Any]]], dict[str, float]]:
    """The scripted mix's transcripts and each policy's mean reward on them."""
    plan = PLANS[config.desk]
    env = tool_env_class(config.desk)()
    chats, rewards = [], {}
    for name in plan.mix:
        policy, scores = scripted_policy(config.desk, name), []
        for seed in range(config.transcripts):
            chat, reward = transcript(env, policy, TRAIN_SEED_BASE + seed, plan.max_calls)
            chats.append(chat)
            scores.append(reward)
        rewards[name] = round(sum(scores) / len(scores), 4)
    return chats, rewards


def tool_schemas(desk: str) -> list[dict[str, Any]]:
    """The tools as TRL shows them to the model: ``get_json_schema`` of each tool method, in
    the order ``GRPOTrainer`` lists an environment's methods (by name). The transcripts,
    the served model and the trainer's rollouts must render one prompt: in the desk's own
    order, every training rollout opened on a tool list the model was never fitted on."""
    from transformers.utils import get_json_schema

    cls = tool_env_class(desk)
    return [get_json_schema(getattr(cls, name)) for name in sorted(cls.tool_specs)]


# -- 2. tokenizer and model -----------------------------------------------------------------


def build_tokenizer(texts: Sequence[str], vocab: int, specials: Sequence[str] = SPECIALS) -> Any:
    """Byte-level BPE trained on ``texts``: digits one token each, spaces no boundary."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen2_5_chat_template

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=list(specials),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        max_token_length=64,
    )
    bpe.train_from_iterator(texts, trainer=trainer)
    made = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=list(specials[1:]),
        padding_side="left",
    )
    made.add_tokens(["<tool_response>", "</tool_response>"])
    made.chat_template = qwen2_5_chat_template
    return made


def build_model(tokenizer: Any, config: RunConfig) -> Any:
    """A Llama sized by ``width`` and ``layers``, seeded."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(config.seed)
    model_config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=config.width,
        intermediate_size=config.width * 8 // 3,
        num_hidden_layers=config.layers,
        num_attention_heads=max(1, config.width // 32),
        num_key_value_heads=max(1, config.width // 64),
        max_position_embeddings=4096,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(model_config)


def parameters(model: Any) -> int:
    return sum(p.numel() for p in model.parameters())


# -- 3. supervised start ----------------------------------------------------------------------


def training_examples(
    tokenizer: Any, chats: Iterable[list[dict[str, Any]]], tools: list[dict[str, Any]]
) -> list[Any]:
    """Each chat's token ids and the mask of the assistant's tokens (TRL's training template)."""
    from trl.chat_template_utils import get_training_chat_template

    template = get_training_chat_template(tokenizer)
    examples = []
    for chat in chats:
        rendered = tokenizer.apply_chat_template(
            chat,
            tools=tools,
            chat_template=template,
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
        )
        examples.append((list(rendered["input_ids"]), list(rendered["assistant_masks"])))
    return examples


def every_token(examples: Iterable[Any]) -> list[Any]:
    """The examples with every token in the loss: the tools' answers echo each call, and a
    ticket's identifiers recur through its episode, so this stage teaches a model built
    from nothing to copy them, which the assistant's turns alone are too few to teach."""
    return [(ids, [1] * len(ids)) for ids, _ in examples]


def fit_supervised(
    model: Any, examples: list[Any], config: RunConfig, pad_id: int, steps: int | None = None
) -> list[float]:
    """AdamW on the cross-entropy of the tokens each example's mask keeps, for ``steps``
    (default ``config.sft_steps``); the loss every 25 steps."""
    import torch

    steps = config.sft_steps if steps is None else steps
    rng = random.Random(config.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.sft_lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=config.sft_lr, total_steps=steps, pct_start=0.1
    )
    model.train()
    losses = []
    for step in range(steps):
        batch = rng.sample(examples, config.sft_batch)
        width = max(len(ids) for ids, _ in batch)
        ids = torch.full((len(batch), width), pad_id)
        labels = torch.full((len(batch), width), -100)
        attention = torch.zeros((len(batch), width), dtype=torch.long)
        for row, (tokens, mask) in enumerate(batch):
            ids[row, : len(tokens)] = torch.tensor(tokens)
            attention[row, : len(tokens)] = 1
            labels[row, : len(tokens)] = torch.tensor(
                [t if m else -100 for t, m in zip(tokens, mask, strict=True)]
            )
        loss = model(input_ids=ids, attention_mask=attention, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        if step % 25 == 0 or step == steps - 1:
            losses.append(round(loss.item(), 4))
            print(f"supervised step {step} of {steps}: loss {losses[-1]:.4f}", flush=True)
    model.eval()
    return losses


# -- 4. serving the model to batchgate run-model ---------------------------------------------


def conversation_of(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A ``run-model --mode text`` chat as the model was trained on it: the system message
    joined to the case as one user message (the reset observation), each assistant text
    read as its call, each later user message (a step observation) as that call's tool
    response."""
    system, case, *rest = messages
    chat: list[dict[str, Any]] = [{"role": "user", "content": f"{system['content']}\n\n{case['content']}"}]
    last_call = ""
    for message in rest:
        if message["role"] == "assistant":
            call = call_in(str(message.get("content") or ""))
            if call is None:
                chat.append({"role": "assistant", "content": str(message.get("content") or "")})
                continue
            last_call = call["name"]
            chat.append(assistant_call(call["name"], call.get("arguments") or {}))
        else:
            chat.append({"role": "tool", "name": last_call, "content": str(message.get("content") or "")})
    return chat


def call_in(text: str) -> dict[str, Any] | None:
    """The JSON call an answer's text holds, if it holds one."""
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) and isinstance(parsed.get("name"), str) else None


class LearnedModelServer:
    """Greedy (or seeded, sampled) answers of the model to chat-completions requests."""

    def __init__(self, model: Any, tokenizer: Any, tools: list[dict[str, Any]], name: str) -> None:
        self.model, self.tokenizer, self.tools, self.name = model, tokenizer, tools, name
        self.lock = threading.Lock()

    def answer(self, body: Mapping[str, Any]) -> dict[str, Any]:
        import torch

        chat = conversation_of(body["messages"])
        ids = self.tokenizer.apply_chat_template(
            chat, tools=self.tools, add_generation_prompt=True, tokenize=True
        )
        ids = list(ids["input_ids"]) if isinstance(ids, Mapping) else list(ids)
        temperature = float(body.get("temperature") or 0.0)
        limit = int(body.get("max_tokens") or 160)
        with self.lock, torch.no_grad():
            torch.manual_seed(int(body.get("seed") or 0))
            out = self.model.generate(
                torch.tensor([ids]),
                attention_mask=torch.ones((1, len(ids)), dtype=torch.long),
                max_new_tokens=limit,
                do_sample=temperature > 0,
                temperature=temperature if temperature > 0 else None,
                top_p=None,
                top_k=None,
                eos_token_id=self.tokenizer.eos_token_id,
                pad_token_id=self.tokenizer.pad_token_id,
            )[0][len(ids) :].tolist()
        ended = self.tokenizer.eos_token_id in out
        text = self.tokenizer.decode(out, skip_special_tokens=False).split("<|im_end|>")[0]
        found = TOOL_CALL.search(text)
        content = found.group(1) if found else text
        return {
            "id": f"grpo-text-{len(body['messages'])}",
            "object": "chat.completion",
            "created": 0,
            "model": self.name,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop" if ended else "length",
                }
            ],
            "usage": {
                "prompt_tokens": len(ids),
                "completion_tokens": len(out),
                "total_tokens": len(ids) + len(out),
            },
        }


def serving_app(server: LearnedModelServer) -> Any:
    from aiohttp import web

    async def completions(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if body.get("model") != server.name:
            return web.json_response(
                {"error": {"message": "unknown model", "code": "model_not_found"}}, status=404
            )
        return web.json_response(server.answer(body))

    async def models(request: web.Request) -> web.StreamResponse:
        return web.json_response({"object": "list", "data": [{"id": server.name, "object": "model"}]})

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_get("/v1/models", models)
    return app


def brief_of(desk: str) -> str:
    """The reset observation's brief (everything before the case), which ``--system-prompt`` sends."""
    observation = tool_env_class(desk)().reset(seed=TRAIN_SEED_BASE)
    return observation.rpartition("\n\n")[0]


@dataclass(frozen=True)
class Evaluation:
    step: int
    mean: float
    ci95: list[float] | None
    rewards: list[float]
    behaviour: float
    rows: int
    results: str


def evaluate_served(model: Any, tokenizer: Any, config: RunConfig, step: int, out: Path) -> Evaluation:
    """``batchgate run-model --mode text`` on the held-out split against the served model."""
    from batchgate_gym.llm.server import serve_app_in_thread

    name = f"grpo-text-{config.desk}-step{step}"
    results = out / f"eval_step{step}.jsonl"
    for stale in (results, Path(f"{results}.meta.json")):
        stale.unlink(missing_ok=True)
    brief = out / "brief.txt"
    brief.write_text(brief_of(config.desk))
    server = LearnedModelServer(model, tokenizer, tool_schemas(config.desk), name)
    with serve_app_in_thread(serving_app(server)) as base_url:
        command = [sys.executable, "-m", "batchgate_gym", "run-model", "--desk", config.desk]
        command += ["--split", config.eval_split, "--model", name, "--base-url", base_url, "--mode", "text"]
        command += ["--system-prompt", str(brief), "--temperature", "0", "--max-tokens", "160"]
        command += ["--concurrency", "1", "--out", str(results), "--quiet", "--timeout", "600"]
        if config.eval_cases:
            command += ["--sample", str(config.eval_cases), "--sample-seed", "0"]
        subprocess.run(command, check=True, env={**os.environ, "OPENAI_API_KEY": "local"})
    rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    rows.sort(key=lambda row: row["case_index"])
    rewards = [float(row["score"]["reward"]) if row.get("score") else 0.0 for row in rows]
    return Evaluation(
        step=step,
        mean=round(sum(rewards) / len(rewards), 4),
        ci95=bootstrap_ci95(rewards),
        rewards=rewards,
        behaviour=behaviour_of(config.desk, rows),
        rows=len(rows),
        results=results.name,
    )


def behaviour_of(desk: str, rows: Sequence[Mapping[str, Any]]) -> float:
    """Refund: duplicate payments in all; gate: the share of episodes that profile a batch before loading it."""
    if desk == "refund":
        return float(sum(int((row.get("score") or {}).get("duplicate_effects", 0)) for row in rows))
    profiled = 0
    for row in rows:
        names = [entry.get("action") for entry in row.get("log") or []]
        loads = [i for i, name in enumerate(names) if name == "load_batch"]
        profiled += bool(loads) and "profile_batch" in names[: loads[0]]
    return round(profiled / max(1, len(rows)), 4)


# -- 5. GRPO --------------------------------------------------------------------------------


@dataclass
class RolloutLog:
    """Every rollout the trainer scored: its case, its calls and the reward ``get_reward()`` gave."""

    rollouts: list[dict[str, Any]] = field(default_factory=list)


def recording_factory(
    desk: str, log: RolloutLog, cases: Any = None, pays_reward: bool = True
) -> Callable[[], DeskToolEnv]:
    """The desk's TRL environment (over ``cases``, if given), keeping each episode's calls
    and reward in ``log``. With ``pays_reward`` off, the trainer is paid 0 for every
    episode, whatever the desk scored: the control that shows learning comes from the reward."""
    base = tool_env_class(desk)

    class Recorded(base):  # type: ignore[misc, valid-type]
        def reset(self, seed: int | None = None, case_index: int | None = None, **row: Any) -> str:
            self._calls: list[tuple[str, dict[str, Any]]] = []
            self._case = {"seed": seed, "case_index": case_index}
            return str(super().reset(seed=seed, case_index=case_index, **row))

        def _send(self, name: str, arguments: Mapping[str, Any]) -> str:
            if not self._done:
                self._calls.append((name, dict(arguments)))
            return str(super()._send(name, arguments))

        def get_reward(self) -> float:
            reward = float(super().get_reward())
            log.rollouts.append({**self._case, "calls": self._calls, "reward": reward})
            return reward if pays_reward else 0.0

    Recorded.__name__ = f"Recorded{base.__name__}"
    return functools.partial(Recorded, cases)


def replayed_reward(
    desk: str,
    seed: int | None,
    calls: Sequence[tuple[str, Mapping[str, Any]]],
    cases: Any = None,
    case_index: int | None = None,
) -> float:
    """The desk's score of the same calls on a fresh environment in this process."""
    env = tool_env_class(desk)(cases)
    env.reset(seed=seed, case_index=case_index)
    for name, arguments in calls:
        if env.done:
            break
        env._send(name, arguments)
    return env.get_reward()


@dataclass(frozen=True)
class GrpoSettings:
    """What TRL's ``GRPOConfig`` is given, in both loops."""

    steps: int
    batch: int  # rollouts a step
    generations: int  # rollouts of each case, the group GRPO compares
    lr: float
    temperature: float
    max_calls: int
    max_completion: int
    seed: int
    beta: float  # KL penalty towards the model's saved start (``config._name_or_path``); 0: none


def grpo_trainer(
    model: Any,
    tokenizer: Any,
    settings: GrpoSettings,
    out: Path,
    rows: list[dict[str, Any]],
    factory: Callable[[], DeskToolEnv],
    callbacks: Sequence[Any] = (),
) -> tuple[Any, list[list[float]]]:
    """TRL's ``GRPOTrainer`` over ``rows`` with ``factory`` as its ``environment_factory``,
    and the rewards it will train on, kept step by step."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    args = GRPOConfig(
        output_dir=str(out / "trainer"),
        max_steps=settings.steps,
        per_device_train_batch_size=settings.batch,
        num_generations=settings.generations,
        max_completion_length=settings.max_completion,
        max_tool_calling_iterations=settings.max_calls,
        learning_rate=settings.lr,
        temperature=settings.temperature,
        beta=settings.beta,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,  # on, generation runs without its cache: every token re-reads the prompt
        seed=settings.seed,
        shuffle_dataset=True,
        disable_tqdm=True,
    )
    trainer = GRPOTrainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        environment_factory=factory,
        callbacks=list(callbacks),
    )
    return trainer, keep_trained_rewards(trainer)


def grpo(model: Any, tokenizer: Any, config: RunConfig, out: Path, curve: list[Evaluation]) -> dict[str, Any]:
    """TRL's GRPOTrainer on procedural training cases; held-out evaluations every ``eval_every`` steps."""
    from transformers import TrainerCallback

    log = RolloutLog()
    cases = config.grpo_steps * config.grpo_batch // config.generations
    rows = episode_rows(range(TRAIN_SEED_BASE + 1_000_000, TRAIN_SEED_BASE + 1_000_000 + cases))
    settings = GrpoSettings(
        steps=config.grpo_steps,
        batch=config.grpo_batch,
        generations=config.generations,
        lr=config.grpo_lr,
        temperature=config.temperature,
        max_calls=PLANS[config.desk].max_calls,
        max_completion=config.max_completion,
        seed=config.seed,
        beta=config.beta,
    )

    class HeldOut(TrainerCallback):  # type: ignore[misc]
        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if state.global_step % config.eval_every == 0 or state.global_step == config.grpo_steps:
                model.eval()
                curve.append(evaluate_served(model, tokenizer, config, state.global_step, out))
                print(f"step {state.global_step}: held-out {curve[-1].mean} {curve[-1].ci95}", flush=True)
                model.train()

    factory = recording_factory(config.desk, log)
    trainer, trained_on = grpo_trainer(model, tokenizer, settings, out, rows, factory, [HeldOut()])
    began = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - began
    with (out / "rollouts.jsonl").open("w") as kept:  # what each rollout called, and what it earned
        kept.writelines(json.dumps(rollout, sort_keys=True) + "\n" for rollout in log.rollouts)
    return {"train_seconds": round(seconds, 1), **parity(config.desk, log, trained_on)}


def parity(desk: str, log: RolloutLog, trained_on: list[list[float]], cases: Any = None) -> dict[str, Any]:
    """Every reward TRL trained on against the desk's score of the same calls replayed here."""
    replayed = [replayed_reward(desk, r["seed"], r["calls"], cases, r["case_index"]) for r in log.rollouts]
    same_episode = all(r["reward"] == again for r, again in zip(log.rollouts, replayed, strict=True))
    used = sorted(value for step in trained_on for value in step)
    paid = sorted(r["reward"] for r in log.rollouts)
    same_rewards = len(used) == len(paid) and all(abs(a - b) < 1e-6 for a, b in zip(used, paid, strict=True))
    return {
        "rollouts_scored": len(log.rollouts),
        "replayed_equal_get_reward": same_episode,
        "trainer_rewards_are_the_desks": same_rewards,
        "train_reward_by_step": [round(sum(step) / len(step), 4) for step in trained_on],
    }


# -- the learning check: the same loop on a handful of fixed cases -----------------------------
#
# tests/bench/test_grpo_learning.py runs it in CI. Sixteen refund tickets about one order
# share every identifier, so each whole call the desk needs can be one token and the
# policy is a small choice per turn: the check is about the reward reaching the model,
# not about a tiny model learning to copy an order id (the benchmark's run above is).

CHECK_LINES = ({"sku": "KETL-1", "amount_cents": 2400}, {"sku": "TOWL-2", "amount_cents": 1300})
CHECK_ORDER = {
    "order_id": "ORD-10001",
    "customer_id": "CUS-1001",
    "total_cents": 3700,
    "lines": list(CHECK_LINES),
}
CHECK_PAID: tuple[tuple[str, ...], ...] = ((), ("KETL-1",), ("KETL-1", "TOWL-2"), ("TOWL-2",))
CHECK_FAULTS: tuple[dict[str, Any], ...] = (
    {},
    {"issue_refund": "timeout_but_executes", "refund_history": "stale_after_write"},
    {"issue_refund": "succeeds_but_note_write_fails", "refund_history": "stale_after_write"},
    {"issue_refund": "timeout_but_executes", "unsent_payments": 1},
)
CHECK_TICKETS = (
    "Please refund my order ORD-10001.",
    "The kettle on ORD-10001 arrived broken; I want my money back.",
    "Refund for ORD-10001, please. I no longer need it.",
    "I returned the items from ORD-10001 last week. Where is my refund?",
)
WHOLE_CALL = re.compile(r"<tool_call>\n.*?\n</tool_call>", re.S)
TURN_MARK = re.compile(r"<\|im_start\|>|<\|im_end\|>")
CHECK_FAULT_FAMILY = {
    "timeout_but_executes": "timeout-then-retry",
    "succeeds_but_note_write_fails": "partial-failure",
}


def check_case(paid: int, fault: int) -> dict[str, Any]:
    """One ticket about the check's order: lines ``CHECK_PAID[paid]`` refunded three days ago,
    the tools' faults ``CHECK_FAULTS[fault]``; its expectation is the desk's own rule's."""
    from batchgate_gym.desks.refund.generator.audit import derive_expect

    skus = CHECK_PAID[paid]
    ledger = [
        {
            "order_id": "ORD-10001",
            "amount_cents": line["amount_cents"],
            "sku": line["sku"],
            "idempotency_key": f"rf-{line['sku'].lower()}",
            "day": -3,
        }
        for line in CHECK_LINES
        if line["sku"] in skus
    ]
    faults = CHECK_FAULTS[fault]
    if len(skus) == len(CHECK_LINES):
        family = "duplicate-ticket"
    elif skus:
        family = "legit-partial-refund"
    else:
        family = CHECK_FAULT_FAMILY.get(faults.get("issue_refund", ""), "clean-single")
    case = {
        "case_id": f"grpo-check-paid{paid}-fault{fault}",
        "family": family,
        "prompt": CHECK_TICKETS[(2 * paid + fault) % len(CHECK_TICKETS)],
        "order": CHECK_ORDER,
        "ledger": ledger,
        "tool_faults": faults,
        "notes": "A ticket of the GRPO learning check: one order, two lines.",
        "split": "train" if (paid + fault) % 2 == 0 else "held-out",
        "seed": None,
    }
    return {**case, "expect": derive_expect(case)}


def check_cases() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The check's training and held-out tickets: every pairing of what the ledger holds with
    a fault, in two halves like a chessboard's colours, so each held-out ticket's ledger and
    fault are each met in training, never together; every ticket text is in both halves."""
    cases = [check_case(paid, fault) for paid in range(len(CHECK_PAID)) for fault in range(len(CHECK_FAULTS))]
    return [c for c in cases if c["split"] == "train"], [c for c in cases if c["split"] == "held-out"]


def whole_call_tokenizer(rendered: Sequence[str], vocab: int) -> Any:
    """:func:`build_tokenizer`, plus one token for each whole tool call in ``rendered``
    (``<tool_call>`` to ``</tool_call>``) and one for each line (with its newline) met in at
    least two transcripts: a turn is one choice among the calls seen, and the brief, the
    tool schemas and the tools' usual answers are a few tokens each."""
    from collections import Counter

    tokenizer = build_tokenizer(rendered, vocab, specials=SPECIALS[:3])  # the call tags inside whole calls
    calls = sorted({found.group(0) for text in rendered for found in WHOLE_CALL.finditer(text)})
    lines: Counter[str] = Counter()
    for text in rendered:
        parts = TURN_MARK.split(WHOLE_CALL.sub("", text))
        lines.update({line for part in parts for line in part.split("\n")})
    recurring = sorted(f"{line}\n" for line, count in lines.items() if count >= 2 and len(line) >= 4)
    tokenizer.add_tokens(calls + recurring)
    return tokenizer


@dataclass(frozen=True)
class LearningCheck:
    """The check's sizes: a Llama of about 120,000 parameters, minutes of one CPU core."""

    seed: int = 0
    vocab: int = 400  # BPE tokens besides the whole calls and lines
    width: int = 64
    layers: int = 2
    sft_steps: int = 200
    sft_batch: int = 16
    sft_lr: float = 3e-3
    grpo_steps: int = 20
    grpo_batch: int = 16
    generations: int = 8
    grpo_lr: float = 1e-3
    samples: int = 4  # sampled episodes of each held-out ticket per evaluation, each from its own seed
    pays_reward: bool = True  # off: the trainer is paid 0 for every episode (the control)


def sampled_reward(
    model: Any, tokenizer: Any, tools: list[dict[str, Any]], env: DeskToolEnv, case_index: int, seed: int
) -> float:
    """One episode of the model on the case, each turn sampled at temperature 1 from
    ``seed`` and the turn's number, played as TRL plays a rollout: the model's call is made,
    an error becomes ``{"error": ...}``, an answer with no call ends the rollout."""
    import torch

    chat: list[dict[str, Any]] = [{"role": "user", "content": env.reset(case_index=case_index)}]
    for turn in range(PLANS[env.desk_name].max_calls):
        ids = tokenizer.apply_chat_template(chat, tools=tools, add_generation_prompt=True, tokenize=True)
        ids = list(ids["input_ids"]) if isinstance(ids, Mapping) else list(ids)
        torch.manual_seed(seed * 1000 + turn)
        with torch.no_grad():
            out = model.generate(
                torch.tensor([ids]),
                attention_mask=torch.ones((1, len(ids)), dtype=torch.long),
                max_new_tokens=16,
                do_sample=True,
                temperature=1.0,
                top_p=None,
                top_k=None,
                eos_token_id=tokenizer.eos_token_id,
                pad_token_id=tokenizer.pad_token_id,
            )[0][len(ids) :].tolist()
        found = TOOL_CALL.search(tokenizer.decode(out, skip_special_tokens=False))
        call = call_in(found.group(1)) if found else None
        if call is None:
            break
        name, arguments = call["name"], call.get("arguments") or {}
        try:
            if name not in env.tool_specs:
                raise ValueError(f"Tool {name} not found.")
            answer: Any = getattr(env, name)(**arguments)
        except Exception as error:  # TRL shows the model the error, as here
            answer = {"error": str(error)}
        chat += [assistant_call(name, arguments), {"role": "tool", "name": name, "content": str(answer)}]
        if env.done:
            break
    return env.get_reward()


CHECK_METRICS = ("duplicate_effects", "false_blocks", "overpaid_cents")  # summed over the held-out episodes
CHECK_METRIC_ROWS = {
    "duplicate_effects": "duplicate payments",
    "false_blocks": "false blocks",
    "overpaid_cents": "cents paid beyond what was owed",
}


def held_out_play(
    model: Any, tokenizer: Any, tools: list[dict[str, Any]], cases: list[dict[str, Any]], samples: int
) -> tuple[list[float], dict[str, int]]:
    """Each held-out ticket's mean reward over ``samples`` seeded episodes, and the desk's
    metrics of :data:`CHECK_METRICS` summed over every episode."""
    model.eval()
    env = tool_env_class("refund")(cases)
    rewards, metrics = [], dict.fromkeys(CHECK_METRICS, 0)
    for case_index in range(len(cases)):
        played = []
        for seed in range(samples):
            played.append(sampled_reward(model, tokenizer, tools, env, case_index, seed))
            for name in CHECK_METRICS:
                metrics[name] += int(env.final_info["score"][name])
        rewards.append(round(sum(played) / samples, 4))
    return rewards, metrics


def learning_check(check: LearningCheck, out: Path) -> dict[str, Any]:
    """The loop on the check's tickets: the scripted mix's transcripts, the whole-call
    tokenizer, a seeded Llama fitted to them, held-out rewards, GRPO through TRL on the
    training tickets, held-out rewards again; the gain with its paired bootstrap interval."""
    import torch

    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)  # one core, and the same sums in any process
    torch.use_deterministic_algorithms(True)
    try:
        return _learning_check(check, out)
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)


def _learning_check(check: LearningCheck, out: Path) -> dict[str, Any]:
    from batchgate_gym.llm.testing import tiny_tokenizer

    began = time.process_time()
    train, held_out = check_cases()
    plan = PLANS["refund"]
    env, chats, mix = tool_env_class("refund")(train), [], {}
    for name in plan.mix:
        played = [
            transcript(env, scripted_policy("refund", name), None, plan.max_calls, i)
            for i in range(len(train))
        ]
        chats += [chat for chat, _ in played]
        mix[name] = round(sum(reward for _, reward in played) / len(played), 4)
    tools = tool_schemas("refund")
    rendered = [tiny_tokenizer().apply_chat_template(chat, tools=tools, tokenize=False) for chat in chats]
    tokenizer = whole_call_tokenizer(rendered, check.vocab)
    sizes = RunConfig(
        seed=check.seed,
        width=check.width,
        layers=check.layers,
        sft_steps=check.sft_steps,
        sft_batch=check.sft_batch,
        sft_lr=check.sft_lr,
    )
    model = build_model(tokenizer, sizes)
    losses = fit_supervised(model, training_examples(tokenizer, chats, tools), sizes, tokenizer.pad_token_id)
    before, metrics_before = held_out_play(model, tokenizer, tools, held_out, check.samples)
    settings = GrpoSettings(
        steps=check.grpo_steps,
        batch=check.grpo_batch,
        generations=check.generations,
        lr=check.grpo_lr,
        temperature=1.0,
        max_calls=plan.max_calls,
        max_completion=160,
        seed=check.seed,
        beta=0.0,
    )
    log = RolloutLog()
    factory = recording_factory("refund", log, train, check.pays_reward)
    visits = check.grpo_steps * check.grpo_batch // check.generations
    rows = episode_rows(range(len(train)), case_indices=True) * -(-visits // len(train))
    trainer, trained_on = grpo_trainer(model, tokenizer, settings, out, rows, factory)
    trainer.train()
    after, metrics_after = held_out_play(model, tokenizer, tools, held_out, check.samples)
    gains = [b - a for a, b in zip(before, after, strict=True)]
    return {
        "check": asdict(check),
        "parameters": parameters(model),
        "vocabulary": len(tokenizer),
        "mix_rewards_on_training_tickets": mix,
        "supervised_losses": losses,
        "before": before,
        "after": after,
        "metrics_before": metrics_before,
        "metrics_after": metrics_after,
        "mean_before": round(sum(before) / len(before), 4),
        "mean_after": round(sum(after) / len(after), 4),
        "gain": round(sum(gains) / len(gains), 4),
        "gain_ci95_paired": bootstrap_ci95(gains),
        "cpu_seconds": round(time.process_time() - began, 1),
        **parity("refund", log, trained_on, train),
    }


def check_markdown(result: Mapping[str, Any]) -> str:
    """``learning_check.md``: the held-out tickets' rewards before and after GRPO, and the gain."""
    check, paired = result["check"], result["gain_ci95_paired"]
    mix = ", ".join(
        f"{name} {reward:.4f}" for name, reward in result["mix_rewards_on_training_tickets"].items()
    )
    _, held_out = check_cases()
    paid = "the desk's reward" if check["pays_reward"] else "0 for every episode"
    lines = [
        f"`python benchmarks/grpo_text.py --learning-check{'' if check['pays_reward'] else ' --no-reward'}`",
        "",
        f"Llama of {result['parameters']:,} parameters, a vocabulary of {result['vocabulary']} tokens;"
        f" supervised for {check['sft_steps']} steps on the mix's transcripts of the 8 training tickets"
        f" ({mix} on them), then GRPO for {check['grpo_steps']} steps of {check['grpo_batch']} rollouts"
        f" ({check['generations']} a ticket), the trainer paid"
        f" {paid}."
        f" Each held-out ticket: the mean of {check['samples']} sampled episodes, seeds 0 to {check['samples'] - 1}."
        f" {result['cpu_seconds']:.0f} s of CPU (one thread). Rewards trained on equal the desk's replay of"
        f" the same calls: {result['trainer_rewards_are_the_desks']} ({result['rollouts_scored']} rollouts).",
        "",
        "| held-out ticket | ticket's family | before GRPO | after GRPO |",
        "|---|---|---:|---:|",
    ]
    for case, before, after in zip(held_out, result["before"], result["after"], strict=True):
        lines.append(f"| {case['case_id']} | {case['family']} | {before:.4f} | {after:.4f} |")
    lines += [
        f"| mean | | {result['mean_before']:.4f} | {result['mean_after']:.4f} |",
        *(
            f"| {CHECK_METRIC_ROWS[name]} (all {len(held_out) * check['samples']} episodes) | |"
            f" {result['metrics_before'][name]:,} | {result['metrics_after'][name]:,} |"
            for name in CHECK_METRICS
        ),
        "",
        f"Gain {result['gain']:+.4f}, paired bootstrap 95% interval over the 8 tickets"
        f" {paired[0]:+.4f} to {paired[1]:+.4f}: the test passes when it lies above 0.",
    ]
    return "\n".join(lines) + "\n"


# -- the run --------------------------------------------------------------------------------


def fitted_start(config: RunConfig, out: Path) -> tuple[Any, Any, dict[str, Any]]:
    """Stages 1 to 3: the mix's transcripts, the tokenizer, the model fitted to them. The
    fitted model is saved to ``out/start_model`` and read back from there, so that GRPO's
    reference model (``--beta``) and a later ``--start`` load the same weights."""
    from transformers import LlamaForCausalLM

    chats, mix_rewards = play_mix(config)
    tools = tool_schemas(config.desk)
    from batchgate_gym.llm.testing import tiny_tokenizer

    rendered = [tiny_tokenizer().apply_chat_template(chat, tools=tools, tokenize=False) for chat in chats]
    tokenizer = build_tokenizer(rendered[:: max(1, len(rendered) // 400)], config.vocab)
    model = build_model(tokenizer, config)
    examples = training_examples(tokenizer, chats, tools)
    began = time.perf_counter()
    pretrain_losses = []
    if config.pretrain_steps:
        pretrain_losses = fit_supervised(
            model, every_token(examples), config, tokenizer.pad_token_id, config.pretrain_steps
        )
    losses = fit_supervised(model, examples, config, tokenizer.pad_token_id) if config.sft_steps else []
    facts = {
        "desk": config.desk,
        "fit": {name: getattr(config, name) for name in ("seed", *FIT_FIELDS)},
        "fitted_by": command_of(asdict(config)),
        "parameters": parameters(model),
        "vocabulary": len(tokenizer),
        "tokens_per_transcript": round(sum(len(ids) for ids, _ in examples) / len(examples), 1),
        "mix_rewards_on_training_cases": mix_rewards,
        "pretrain_losses": pretrain_losses,
        "supervised_losses": losses,
        "supervised_seconds": round(time.perf_counter() - began, 1),
    }
    folder = out / "start_model"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / "start.json").write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
    return LlamaForCausalLM.from_pretrained(folder).eval(), tokenizer, facts


def start_facts(folder: Path) -> dict[str, Any]:
    """What :func:`fitted_start` wrote of a start beside its weights (``start.json``)."""
    facts: dict[str, Any] = json.loads((folder / "start.json").read_text())
    return facts


def saved_start(folder: Path) -> tuple[Any, Any, dict[str, Any]]:
    """A start that :func:`fitted_start` saved: its model, tokenizer and facts."""
    from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast.from_pretrained(folder)
    return LlamaForCausalLM.from_pretrained(folder).eval(), tokenizer, start_facts(folder)


def run(config: RunConfig, out: Path) -> dict[str, Any]:
    import torch

    torch.set_num_threads(max(1, min(config.threads, os.cpu_count() or 1)))
    out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    if config.start:
        model, tokenizer, facts = saved_start(Path(config.start))
    else:
        model, tokenizer, facts = fitted_start(config, out)
    curve: list[Evaluation] = [evaluate_served(model, tokenizer, config, 0, out)]
    print(f"supervised start: held-out {curve[0].mean} {curve[0].ci95}", flush=True)
    trained = grpo(model, tokenizer, config, out, curve) if config.grpo_steps else {}
    start, end = curve[0], curve[-1]
    gains = [b - a for a, b in zip(start.rewards, end.rewards, strict=True)]
    return {
        "command": command_of(asdict(config)),
        "config": asdict(config),
        **{name: value for name, value in facts.items() if name not in ("desk", "fit")},
        "curve": [asdict(point) for point in curve],
        "start": {"mean": start.mean, "ci95": start.ci95, "behaviour": start.behaviour},
        "end": {"mean": end.mean, "ci95": end.ci95, "behaviour": end.behaviour},
        "gain": round(end.mean - start.mean, 4),
        "gain_ci95_paired": bootstrap_ci95(gains),
        "behaviour": PLANS[config.desk].behaviour,
        "wall_seconds": round(time.perf_counter() - began, 1),
        **trained,
    }


def model_table(out: Path, desk: str, first: str, last: str) -> str:
    """``batchgate report --results`` of the start's and the end's results files: the rows
    of the desk's model table, every row re-graded from its saved log."""
    command = [sys.executable, "-m", "batchgate_gym", "report", "--desk", desk, "--results"]
    command += [str(out / first), str(out / last)]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def command_of(config: Mapping[str, Any]) -> str:
    """The command that runs ``config``: the options that differ from the defaults, in the
    order ``--help`` lists them (a ``summary.json`` holds its config with sorted keys)."""
    options = [
        f"--{name.replace('_', '-')} {config.get(name, default)}"
        for name, default in asdict(RunConfig()).items()
        if name != "desk"
        and config.get(name, default) != default
        and not (config.get("start") and name in FIT_FIELDS)
    ]
    return " ".join([f"python benchmarks/grpo_text.py --desk {config['desk']}", *options])


def markdown(result: Mapping[str, Any], table: str) -> str:
    """``summary.md``: what was trained, the held-out curve, the start and end rows."""
    config = result["config"]
    mix = ", ".join(
        f"{name} {reward:.4f}" for name, reward in result["mix_rewards_on_training_cases"].items()
    )
    read_from = ""
    if config.get("start"):  # the fit ran earlier, in the command that saved the start
        read_from = f" (read from {config['start']}, saved by `{result.get('fitted_by')}`)"
    kl = f", KL penalty {config['beta']} towards the start" if config.get("beta") else ""
    lines = [
        f"`{command_of(config)}`",
        "",
        f"{config['desk']}: Llama of {result['parameters']:,} parameters, a vocabulary of"
        f" {result['vocabulary']} tokens ({result['tokens_per_transcript']} a transcript on average);"
        f" fitted to {len(PLANS[config['desk']].mix) * config['transcripts']} transcripts ({mix} on those cases),"
        f" {config.get('pretrain_steps', 0)} steps on every token and {config['sft_steps']} on the assistant's"
        f"{read_from},"
        f" then GRPO for {config['grpo_steps']} steps of"
        f" {config['grpo_batch']} rollouts ({config['generations']} a case), temperature {config['temperature']}"
        f"{kl}."
        f" Wall time {result['wall_seconds']:.0f} s on 2 shared CPU cores. Rewards trained on equal the"
        f" desk's replay of the same calls: {result.get('trainer_rewards_are_the_desks')}"
        f" ({result.get('rollouts_scored', 0)} rollouts).",
        "",
        f"| GRPO step | held-out mean reward | 95% interval | {result['behaviour']} |",
        "|---:|---:|---|---:|",
    ]
    for point in result["curve"]:
        interval = "n/a" if point["ci95"] is None else f"{point['ci95'][0]:.4f} to {point['ci95'][1]:.4f}"
        lines.append(f"| {point['step']} | {point['mean']:.4f} | {interval} | {point['behaviour']:g} |")
    paired = result["gain_ci95_paired"]
    lines += [
        "",
        f"Gain, end minus start: {result['gain']:+.4f} (paired bootstrap 95% interval over the same"
        f" {len(result['curve'][0]['rewards'])} cases: {paired[0]:+.4f} to {paired[1]:+.4f}).",
        "",
        table,
    ]
    return "\n".join(lines) + "\n"


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = RunConfig()
    parser.add_argument("--desk", choices=sorted(PLANS), default=defaults.desk)
    for name, value in asdict(defaults).items():
        if name != "desk":
            parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    parser.add_argument("--out", type=Path, default=None, help="result folder (default out/grpo_text/<desk>)")
    parser.add_argument(
        "--tables-only", action="store_true", help="write summary.md again from the folder's summary.json"
    )
    parser.add_argument(
        "--learning-check",
        action="store_true",
        help="run tests/bench/test_grpo_learning.py's loop (refund, fixed tickets) and write learning_check.json",
    )
    parser.add_argument(
        "--no-reward",
        action="store_true",
        help="with --learning-check: the trainer is paid 0 for every episode",
    )
    args = parser.parse_args(argv)
    if args.no_reward and not args.learning_check:
        parser.error("--no-reward goes with --learning-check")
    if args.start:
        fit_given = [
            f"--{name.replace('_', '-')}"
            for name in FIT_FIELDS
            if getattr(args, name) != getattr(defaults, name)
        ]
        if fit_given or args.learning_check or args.tables_only:
            taken = fit_given or ["--learning-check" if args.learning_check else "--tables-only"]
            parser.error(f"--start reads the fitted start from its folder; {' '.join(taken)} not taken")
        if not (Path(args.start) / "start.json").is_file():
            parser.error(f"--start {args.start}: no start.json there (a run's out/start_model folder)")
        if start_facts(Path(args.start))["desk"] != args.desk:
            parser.error(f"--start {args.start} was fitted on another desk than --desk {args.desk}")
    if args.learning_check:
        given = [
            f"--{name.replace('_', '-')}"
            for name, value in asdict(defaults).items()
            if getattr(args, name) != value
        ]
        if given or args.tables_only:
            parser.error(
                f"--learning-check runs at its own sizes; {' '.join(given or ['--tables-only'])} not taken"
            )
    return args


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    args = _arguments(argv)
    config = RunConfig(**{name: getattr(args, name) for name in asdict(RunConfig())})
    if config.start:  # the fit's options are the start's, so the summary says what was fitted
        fit = start_facts(Path(config.start))["fit"]
        config = replace(config, **{name: fit[name] for name in FIT_FIELDS})
    out = args.out or Path("out/grpo_text") / ("learning_check" if args.learning_check else config.desk)
    if args.learning_check:
        out.mkdir(parents=True, exist_ok=True)
        result = learning_check(LearningCheck(pays_reward=not args.no_reward), out)
        (out / "learning_check.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
        (out / "learning_check.md").write_text(check_markdown(result))
        print(json.dumps(result, indent=1))
        return 0
    if args.tables_only:
        result = json.loads((out / "summary.json").read_text())
    else:
        result = run(config, out)
        (out / "summary.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    first, last = result["curve"][0]["results"], result["curve"][-1]["results"]
    (out / "summary.md").write_text(markdown(result, model_table(out, result["config"]["desk"], first, last)))
    print(json.dumps({k: v for k, v in result.items() if k not in ("curve", "config")}, indent=1))
    ok = result.get("replayed_equal_get_reward", True) and result.get("trainer_rewards_are_the_desks", True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
