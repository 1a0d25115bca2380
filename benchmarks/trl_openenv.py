"""TRL over OpenEnv: two GRPO steps whose rollouts play the gate in a ``serve-env`` process.

``python benchmarks/trl_openenv.py`` starts ``batchgate serve-env --desk gate`` on
127.0.0.1, builds a tiny model on the CPU (:mod:`batchgate_gym.llm.testing`, nothing
downloaded) and runs ``GRPOTrainer`` for two steps with
``environment_factory=remote_environment_factory("gate", URL)``: every tool call
of every rollout is a step of an OpenEnv session in the server process, and every
reward is the one the server paid. A random two-layer model calls no tool, so the
completions are written by a short script (two variants per dataset row, which
earn different rewards), through TRL's own tool-call parsing and rollout loop;
the model's weights are trained on them. Then every episode is played again in this
process, with the same calls on the desk's local TRL environment: its
``get_reward()`` must equal the server's reward, and the rewards TRL trained on
must be those. The run's figures go to ``benchmarks/results/trl_openenv.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from batchgate_gym.envs.gate.trl import GateToolEnv
from batchgate_gym.llm.testing import tiny_model, tiny_tokenizer
from batchgate_gym.llm.trl_env import episode_rows, keep_trained_rewards
from batchgate_gym.serving.processes import started
from batchgate_gym.serving.remote import RemoteDeskEnv, remote_environment_factory

RESULTS = Path(__file__).resolve().parent / "results"
SEEDS = (3, 4, 5, 6)  # one dataset row each; two completions per row


def scripted_turn(conversation: str, first_variant: int | None) -> str:
    """The next assistant turn of one of two scripts, as a model would write it.

    Variant 0 lists the batches and reports them all loaded; variant 1 reads the
    contract, lists them and reports none loaded (on these cases a bad batch is
    always among them, so the two earn different rewards). The first turn is given
    its variant; later turns read it back from the conversation.
    """
    variant = first_variant if first_variant is not None else int(_called("read_contract", conversation))
    answers = conversation.count("<tool_response>")
    if _called("submit_report", conversation):
        return "Reported.<|im_end|>"  # no call: the rollout ends
    if variant == 1 and answers == 0:
        call: dict[str, Any] = {"name": "read_contract", "arguments": {}}
    elif answers == variant:
        call = {"name": "list_batches", "arguments": {}}
    else:
        listed = list(dict.fromkeys(re.findall(r'"batch_id":"([^"]+)"', conversation)))
        call = {
            "name": "submit_report",
            "arguments": {"loaded": listed if variant == 0 else [], "quarantined": []},
        }
    return f"<tool_call>\n{json.dumps(call)}\n</tool_call><|im_end|>"


def _called(tool: str, conversation: str) -> bool:
    return f'<tool_call>\n{{"name": "{tool}"' in conversation


def scripted_trainer(**kwargs: Any) -> Any:
    """TRL's ``GRPOTrainer`` with :func:`scripted_turn` writing each completion (the two
    completions of a dataset row take the two variants)."""
    from trl import GRPOTrainer

    class ScriptedGRPOTrainer(GRPOTrainer):  # type: ignore[misc]
        def _generate_single_turn(self, prompt_ids: Any, *args: Any, **kw: Any) -> Any:
            texts = [self.processing_class.decode(ids) for ids in prompt_ids]
            opening = all("<tool_response>" not in text for text in texts)
            turns = [scripted_turn(text, index % 2 if opening else None) for index, text in enumerate(texts)]
            return [self.processing_class.encode(turn, add_special_tokens=False) for turn in turns], None

    return ScriptedGRPOTrainer(**kwargs)


def train(base_url: str, output_dir: str, seeds: tuple[int, ...] = SEEDS) -> tuple[Any, list[list[float]]]:
    """Two GRPO steps over the server, half the seeds' rows each; the trainer and the rewards
    TRL computed at each step."""
    from datasets import Dataset
    from trl import GRPOConfig

    config = GRPOConfig(
        output_dir=output_dir,
        max_steps=2,
        per_device_train_batch_size=len(seeds),  # two completions per row, two steps
        num_generations=2,
        max_completion_length=4096,
        max_tool_calling_iterations=4,
        learning_rate=1e-2,
        beta=0.0,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        bf16=False,
        seed=0,
        shuffle_dataset=False,
    )
    tokenizer = tiny_tokenizer()
    trainer = scripted_trainer(
        model=tiny_model(tokenizer),
        args=config,
        train_dataset=Dataset.from_list(episode_rows(seeds)),
        processing_class=tokenizer,
        environment_factory=remote_environment_factory("gate", base_url),
    )
    seen = keep_trained_rewards(trainer)
    trainer.train()
    return trainer, seen


def played_here(seed: int, actions: list[str]) -> float:
    """The same calls on the desk's local TRL environment: its ``get_reward()``."""
    env = GateToolEnv()
    env.reset(seed=seed)
    for action in actions:
        (call,) = json.loads(action)
        getattr(env, call["name"])(**call["arguments"])
    return env.get_reward()


def same_floats(trained: list[float], paid: list[float]) -> bool:
    """The same rewards in any order, up to TRL's float32 (the server pays float64)."""
    return len(trained) == len(paid) and all(
        abs(a - b) < 1e-6 for a, b in zip(sorted(trained), sorted(paid), strict=True)
    )


def run(output_dir: str, seeds: tuple[int, ...] = SEEDS) -> dict[str, Any]:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    began = time.perf_counter()
    with started(("--desk", "gate", "--max-sessions", "64")) as (server,):
        trainer, seen = train(server.url(), output_dir, seeds)
        opened = server.sessions()["opened"]
    rollouts = []
    for env in trainer.environments:
        remote: RemoteDeskEnv = env.env
        rollouts.append(
            {
                "seed": remote.opened_seed,
                "calls": [json.loads(action)[0]["name"] for action in remote.actions],
                "server_reward": env.get_reward(),
                "in_process_reward": played_here(remote.opened_seed, remote.actions),
            }
        )
    return {
        "command": "python benchmarks/trl_openenv.py",
        "steps": trainer.state.global_step,
        "sessions_opened_on_the_server": opened,
        "rewards_trl_trained_on": seen,
        "last_step_rollouts": rollouts,
        "server_equals_in_process": all(r["server_reward"] == r["in_process_reward"] for r in rollouts),
        "trl_rewards_are_the_servers": same_floats(seen[-1], [r["server_reward"] for r in rollouts]),
        "rewards_differ": len({r["server_reward"] for r in rollouts}) > 1,
        "tool_failures": [logs.get("tools/failure_frequency") for logs in trainer.state.log_history[:2]],
        "wall_s": round(time.perf_counter() - began, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for trl_openenv.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        results = run(scratch)
    print(json.dumps(results, indent=1))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "trl_openenv.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    ok = (
        results["server_equals_in_process"]
        and results["trl_rewards_are_the_servers"]
        and results["steps"] == 2
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
