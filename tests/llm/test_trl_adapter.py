"""The desks as TRL environments, checked with TRL's own machinery.

* TRL's tool discovery and ``transformers.utils.get_json_schema`` turn each
  desk's class into exactly the desk's ``tool_schemas()``.
* ``GRPOTrainer(environment_factory=...)`` drives the gate through its real
  rollout path (reset per row, tool calls parsed from the completion text, each
  run through the environment, ``get_reward`` as the reward) with a tiny model
  (:mod:`batchgate_gym.llm.testing`): a byte-level BPE tokenizer trained on the desks' own texts, the
  Qwen 2.5 chat template TRL ships (so its tool-call parser applies) and a
  randomly initialised two-layer Llama. One run scripts the completions (a random
  model calls no tool), the other samples from the model for two GRPO steps.

Everything is built on the CPU in the test; nothing is downloaded.
"""

from __future__ import annotations

import functools
import json
import os
import re
from typing import Any

import pytest

from batchgate_gym.desks.analyst.tools import tool_schemas as analyst_schemas
from batchgate_gym.desks.gate.tools import tool_schemas as gate_schemas
from batchgate_gym.desks.refund.replay import replay
from batchgate_gym.desks.refund.tools import tool_schemas as refund_schemas
from batchgate_gym.envs.analyst.trl import AnalystToolEnv
from batchgate_gym.envs.gate.trl import GateToolEnv
from batchgate_gym.envs.refund.trl import RefundRecoveryToolEnv, RefundToolEnv
from batchgate_gym.llm.testing import tiny_model, tiny_tokenizer
from batchgate_gym.llm.trl_env import (
    UNFINISHED,
    DeskToolEnv,
    desk_tools,
    environment_factory,
    episode_rows,
)

trl = pytest.importorskip("trl", reason="TRL is not installed (pip install -e '.[trl]')")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")
datasets = pytest.importorskip("datasets")

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

DESKS = [("gate", GateToolEnv, gate_schemas), ("refund", RefundToolEnv, refund_schemas)]
# Every class, with the settings that make it: the schema tests cover each.
EVERY_CLASS = [
    ("gate", {}, GateToolEnv, gate_schemas),
    ("refund", {}, RefundToolEnv, refund_schemas),
    ("refund", {"recovery": True}, RefundRecoveryToolEnv, functools.partial(refund_schemas, recovery=True)),
    ("analyst", {}, AnalystToolEnv, analyst_schemas),
]


def trl_tools(env: Any) -> list[Any]:
    """The methods TRL offers as tools, found the way GRPOTrainer finds them (on the class, public, not reset/get_reward)."""
    import inspect

    return [
        getattr(env, name)
        for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]


def comparable(schema: dict[str, Any]) -> dict[str, Any]:
    """A function schema without what only one side writes (the desk's defaults and closed objects, TRL's return)."""
    function = schema["function"]
    parameters = function["parameters"]
    return {
        "name": function["name"],
        "description": function["description"],
        "properties": {
            name: {key: value for key, value in prop.items() if key != "default"}
            for name, prop in parameters["properties"].items()
        },
        "required": parameters.get("required", []),
    }


# --- schemas -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("desk", "options", "cls", "schemas"), EVERY_CLASS, ids=lambda v: getattr(v, "__name__", None)
)
def test_trl_builds_the_desks_own_tool_schemas(
    desk: str, options: dict[str, Any], cls: type[DeskToolEnv], schemas: Any
) -> None:
    from transformers.utils import get_json_schema

    env = environment_factory(desk, "eval", **options)()
    assert type(env) is cls
    built = {
        schema["function"]["name"]: comparable(schema) for schema in map(get_json_schema, trl_tools(env))
    }
    own = {schema["function"]["name"]: comparable(schema) for schema in schemas()}
    assert built == own
    for schema in schemas():  # the same parameters in the same order, and what is optional is optional
        function = schema["function"]
        made = get_json_schema(getattr(env, function["name"]))["function"]["parameters"]
        assert list(made["properties"]) == list(function["parameters"]["properties"])
        assert made.get("required", []) == function["parameters"]["required"]


@pytest.mark.parametrize(("desk", "cls", "schemas"), DESKS)
@pytest.mark.slow  # builds TRL's GRPO trainer
def test_trainer_probe_finds_the_tools_reset_and_reward(
    desk: str, cls: type[DeskToolEnv], schemas: Any
) -> None:
    trainer = make_trainer(environment_factory(desk), rows=episode_rows(range(2)), max_steps=1)
    env_tools = trainer._env_tools[None]
    assert sorted(tool.__name__ for tool in env_tools) == sorted(s["function"]["name"] for s in schemas())
    assert cls.__name__ in trainer.reward_func_names  # get_reward became a reward source


def test_a_declaration_that_is_not_the_desks_is_refused() -> None:
    with pytest.raises(TypeError, match="not annotated"):

        @desk_tools
        class WrongType(DeskToolEnv):  # a batch id is a string
            tool_specs = {"load_batch": GateToolEnv.tool_specs["load_batch"]}

            def load_batch(self, batch_id: int) -> str:
                return ""

    with pytest.raises(TypeError, match="are not the desk's"):

        @desk_tools
        class Extra(DeskToolEnv):  # a public helper would be offered to the model as a tool
            tool_specs = {}

            def helper(self) -> str:
                return ""


# --- the adapter through the environment ------------------------------------------------------------------


def test_calls_step_the_environment_and_the_reward_is_the_terminal_score() -> None:
    env = GateToolEnv()
    task = env.reset(seed=5, prompt=[{"role": "user", "content": ""}])
    direct = environment_factory("gate")().env
    observation, _ = direct.reset(seed=5)
    assert task == observation
    listed = env.list_batches()
    assert listed == direct.step(json.dumps([{"name": "list_batches", "arguments": {}}]))[0]
    ids = re.findall(r'"batch_id":"([^"]+)"', listed)
    assert ids and not env.done
    ended = env.submit_report(loaded=ids, quarantined=[])
    *_, reward, terminated, _truncated, info = direct.step(
        json.dumps([{"name": "submit_report", "arguments": {"loaded": ids, "quarantined": []}}])
    )
    assert terminated and env.done and ended.endswith("The episode is over.")
    assert env.get_reward() == reward == info["score"]["reward"]
    assert env.final_info["log_head"] == info["log_head"]
    with pytest.raises(RuntimeError, match="already ended"):
        env.load_batch(batch_id=ids[0])
    env.reset(seed=5)
    assert not env.done and env.final_info == {}


def test_ill_fitting_calls_reach_the_codec_and_the_log() -> None:
    env = RefundToolEnv()
    env.reset(seed=1)
    assert "missing argument 'order_id'" in env.lookup_order()
    assert "unknown argument 'note'" in env.escalate(order_id="x", reason="needs a human", note="n")
    assert "amount_cents" in env.issue_refund(
        order_id="x", amount_cents="12", idempotency_key="k", reason="r"
    )
    refused = [entry for entry in env.env.unwrapped.export_log() if not entry["executed"]]
    assert [entry["action"] for entry in refused] == ["invalid_action"] * 3


def test_the_turn_limit_pays_the_score() -> None:
    env = RefundToolEnv(max_turns=2)
    env.reset(seed=3)
    env.lookup_order(order_id="nothing")
    assert not env.done
    env.lookup_order(order_id="nothing")
    assert env.done and env.final_info["score"]["reward"] == env.get_reward()


def test_a_rollout_over_before_its_episode_is_scored_as_the_desk_scores_it_unfinished() -> None:
    # A refund paid twice behind the lying timeout, then no reply: the rollout is over (the
    # model stopped calling tools) with the episode still running.
    env = RefundToolEnv("eval")
    env.reset(case_index=0)
    case = env.env.unwrapped.world.case
    order_id, line = case.order.order_id, case.order.lines[0]
    env.lookup_order(order_id=order_id)
    env.refund_history(order_id=order_id)
    for key in ("k-1", "k-2"):
        env.issue_refund(
            order_id=order_id,
            amount_cents=line.amount_cents,
            idempotency_key=key,
            reason="owed",
            sku=line.sku,
        )
    assert not env.done
    reward = env.get_reward()
    assert env.done and reward == env.final_info["score"]["reward"] < 0, "paid twice: below 0, never a flat 0"
    log = env.env.unwrapped.export_log()
    assert log[-1]["action"] == "seal" and log[-1]["args"]["reason"] == UNFINISHED
    assert replay(case, log, head=env.final_info["log_head"]).as_dict()["reward"] == reward
    assert env.get_reward() == reward, "asked again, the same reward"


def test_fixed_cases_by_index_and_rows() -> None:
    from batchgate_gym.desks import registry

    cases = registry.get("refund").fixed_cases(split="eval")
    env = environment_factory("refund", cases)()
    rows = episode_rows([3], case_indices=True)
    assert rows == [{"prompt": [{"role": "user", "content": ""}], "seed": 3, "case_index": 3}]
    env.reset(**rows[0])
    env.reply(message="done")
    assert env.final_info["case_id"] == cases[3].case_id


# --- GRPOTrainer with a tiny local model ----------------------------------------------------------------


def make_trainer(
    factory: Any, rows: list[dict[str, Any]], max_steps: int, cls: Any = None, **config: Any
) -> Any:
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = tiny_tokenizer()
    settings: dict[str, Any] = {
        "output_dir": "/tmp/batchgate-trl-test",
        "per_device_train_batch_size": 4,
        "num_generations": 2,
        "max_completion_length": 16,
        "learning_rate": 1e-2,
        "beta": 0.0,
        "logging_steps": 1,
        "report_to": "none",
        "save_strategy": "no",
        "use_cpu": True,
        "bf16": False,
        "seed": 0,
        "shuffle_dataset": False,
        "max_tool_calling_iterations": 4,
        **config,
    }
    return (cls or GRPOTrainer)(
        model=tiny_model(tokenizer),
        args=GRPOConfig(max_steps=max_steps, **settings),
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        environment_factory=factory,
    )


def scripted_turn(text: str, variant: int | None) -> str:
    """The next assistant turn after ``text`` (the conversation so far), as a model would write it.

    Variant 0 lists the batches and reports them all loaded; variant 1 reads the
    contract first, then lists them and reports none loaded. Later turns read the
    variant back from the conversation; after the report the turn is plain text.
    """
    if variant is None:
        variant = 1 if '<tool_call>\n{"name": "read_contract"' in text else 0
    responses = text.count("<tool_response>")
    if '<tool_call>\n{"name": "submit_report"' in text:
        return "Reported.<|im_end|>"  # no call: the rollout ends here
    if variant == 1 and responses == 0:
        call: dict[str, Any] = {"name": "read_contract", "arguments": {}}
    elif responses == variant:
        call = {"name": "list_batches", "arguments": {}}
    else:
        ids = list(dict.fromkeys(re.findall(r'"batch_id":"([^"]+)"', text)))
        call = {
            "name": "submit_report",
            "arguments": {"loaded": ids if variant == 0 else [], "quarantined": []},
        }
    return f"<tool_call>\n{json.dumps(call)}\n</tool_call><|im_end|>"


def scripted_trainer_class() -> type:
    from trl import GRPOTrainer

    class ScriptedGRPOTrainer(GRPOTrainer):
        """GRPO whose completions are written by :func:`scripted_turn`; everything else is TRL's."""

        def _generate_single_turn(self, prompt_ids: Any, *args: Any, **kwargs: Any) -> Any:
            first = all("<tool_response>" not in self.processing_class.decode(ids) for ids in prompt_ids)
            completions = []
            for index, ids in enumerate(prompt_ids):
                text = self.processing_class.decode(ids)
                turn = scripted_turn(text, index % 2 if first else None)
                completions.append(self.processing_class.encode(turn, add_special_tokens=False))
            return completions, None

    return ScriptedGRPOTrainer


def played_directly(seed: int, variant: int) -> tuple[float, list[str]]:
    """The reward and call names of the scripted episode, played on the environment without TRL."""
    env = GateToolEnv()
    env.reset(seed=seed)
    if variant == 1:
        env.read_contract()
    ids = list(dict.fromkeys(re.findall(r'"batch_id":"([^"]+)"', env.list_batches())))
    env.submit_report(loaded=ids if variant == 0 else [], quarantined=[])
    return env.get_reward(), [e["action"] for e in env.env.unwrapped.export_log()]


@pytest.mark.slow  # training: GRPO rollouts
def test_grpo_rollouts_call_the_desk_through_trl_and_read_its_reward(tmp_path: Any) -> None:
    made: list[GateToolEnv] = []

    def factory() -> GateToolEnv:
        made.append(GateToolEnv())
        return made[-1]

    seeds = [11, 12]
    trainer = make_trainer(
        factory,
        episode_rows(seeds),
        max_steps=1,
        cls=scripted_trainer_class(),
        output_dir=str(tmp_path),
        max_completion_length=4096,
    )
    rewards_seen: list[list[float]] = []
    original = trainer._calculate_rewards

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        rewards_seen.append(out[:, -1].tolist())
        return out

    trainer._calculate_rewards = spy
    before = [p.detach().clone() for p in trainer.model.parameters()]
    trainer.train()
    assert trainer.state.global_step == 1
    rollouts = trainer.environments
    assert len(rollouts) == 4 and all(isinstance(env, GateToolEnv) for env in rollouts)
    for index, env in enumerate(rollouts):
        seed, variant = seeds[index // 2], index % 2
        reward, actions = played_directly(seed, variant)
        logged = [e["action"] for e in env.env.unwrapped.export_log()]
        assert env.done and logged == actions, (index, logged)
        assert env.get_reward() == reward
    expected = [played_directly(seeds[i // 2], i % 2)[0] for i in range(4)]
    assert len(rewards_seen) == 1 and rewards_seen[0] == pytest.approx(expected)  # float32 in TRL
    assert len(set(expected)) > 1  # the group's rewards differ, so the step has advantages to follow
    logs = trainer.state.log_history[0]
    assert logs["tools/failure_frequency"] == 0.0
    assert logs["tools/call_frequency"] == pytest.approx((2 + 3 + 2 + 3) / 4)
    assert logs["rewards/GateToolEnv/mean"] == pytest.approx(sum(expected) / 4)
    assert any(
        not torch.equal(a, b.detach()) for a, b in zip(before, trainer.model.parameters(), strict=True)
    )


@pytest.mark.slow  # training: two GRPO steps
def test_two_grpo_steps_on_a_tiny_random_model(tmp_path: Any) -> None:
    resets: list[dict[str, Any]] = []

    class Recording(RefundToolEnv):
        def reset(self, seed: int | None = None, case_index: int | None = None, **row: Any) -> str:
            resets.append({"seed": seed, **row})
            return super().reset(seed=seed, case_index=case_index, **row)

    trainer = make_trainer(Recording, episode_rows(range(4)), max_steps=2, output_dir=str(tmp_path))
    trainer.train()
    assert trainer.state.global_step == 2
    assert sorted({r["seed"] for r in resets}) == [0, 1, 2, 3]
    assert all(r["prompt"][0]["role"] == "user" for r in resets)
    # Sixteen random tokens call no tool: each episode is ended unfinished and scored as the
    # desk scores a ticket left untouched (nothing done, no harm done), never a flat 0.
    untouched = []
    for seed in range(4):
        env = RefundToolEnv()
        env.reset(seed=seed)
        untouched.append(env.get_reward())
    assert min(untouched) > 0
    for logs in trainer.state.log_history[:2]:
        assert "rewards/Recording/mean" in logs
        mean = logs["rewards/Recording/mean"]  # float32 in TRL
        assert min(untouched) - 1e-6 <= mean <= max(untouched) + 1e-6


def test_the_analyst_and_recovery_classes_play_their_desks() -> None:
    analyst = environment_factory("analyst", "eval")()
    analyst.reset(case_index=0)
    assert '"tables"' in analyst.list_tables("sqlite")
    analyst.decline("the data cannot say")
    assert analyst.done and analyst.final_info["score"]["reward"] == analyst.get_reward()
    refund = environment_factory("refund", "eval", recovery=True)()
    refund.reset(case_index=0)
    assert "no payment of this episode" in refund.void_refund("ORD-1", "k", "testing the void")
    assert not hasattr(environment_factory("refund", "eval")(), "void_refund")
    with pytest.raises(ValueError, match="recovery on"):
        RefundRecoveryToolEnv("eval", recovery=False)
