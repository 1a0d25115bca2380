"""A tiny chat model built on the spot, for testing a trainer's plumbing with no download.

:func:`tiny_tokenizer` trains a byte-level BPE tokenizer on the desks' own texts
(task texts, tool schemas, a tool call: of every desk that needs no extra, read from
the desk registry) and gives it the Qwen 2.5 chat template
TRL ships, so TRL's tool-call parser applies; :func:`tiny_model` is a randomly
initialised two-layer Llama sized to it. Both build on the CPU in seconds. Needs
the ``llm`` extra (transformers, tokenizers, trl); a test helper, so outside the
core, as :mod:`batchgate_gym.testing` is.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from batchgate_gym.desks import registry

from .results import desk_tools


def core_desks() -> list[str]:
    """The desks that need no extra, in the registry's order: what the tokenizer learns
    from, so that it builds with the ``llm`` extra alone."""
    return [name for name in registry.names() if registry.extra_of(name) is None]


def corpus() -> list[str]:
    """A few hundred strings the tokenizer learns from: the core desks' task texts (the
    resets of each one's TRL class), their tool schemas and a call."""
    desks = core_desks()
    schemas = [json.dumps(schema) for desk in desks for schema in desk_tools(desk)]
    texts: list[str] = []
    for desk in desks:
        trl_env = registry.get(desk).trl_env
        if trl_env is not None:
            env = registry.load(trl_env)()
            for seed in range(6):
                texts += env.reset(seed=seed).split("\n")
        texts += schemas
    texts += ['<tool_call>\n{"name": "list_batches", "arguments": {}}\n</tool_call>'] * 20
    return texts


@functools.lru_cache(maxsize=1)
def tiny_tokenizer() -> Any:
    """A byte-level BPE tokenizer trained here, with the Qwen 2.5 chat template TRL ships and parses."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen2_5_chat_template

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=700,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(corpus(), trainer=trainer)
    made = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
        padding_side="left",
    )
    made.add_tokens(["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"])
    made.chat_template = qwen2_5_chat_template
    return made


def tiny_model(tokenizer: Any) -> Any:
    """A two-layer Llama with random weights (seeded), sized to the tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=16384,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    return LlamaForCausalLM(config)


__all__ = ["corpus", "tiny_model", "tiny_tokenizer"]
