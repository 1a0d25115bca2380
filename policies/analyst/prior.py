"""A prior: the answer each template most often has on the train split, learned without the eval data.

What a model that learned the train split by heart would answer, reading no data
at all: for a number the median of the template's train answers (the value closest
to the most of them), for a report each metric's median, for anything else the
answer seen most often (the first of the most common). The train split is the
package's public case file, read as text; nothing of the environment is used.
"""

from __future__ import annotations

import functools
import json
import statistics
from collections import Counter, defaultdict
from importlib import resources
from typing import Any

TRAIN = ("batchgate_gym.desks.analyst", "data/train.jsonl")


@functools.lru_cache(maxsize=1)
def _train_answers() -> dict[str, list[Any]]:
    package, path = TRAIN
    answers: dict[str, list[Any]] = defaultdict(list)
    with resources.files(package).joinpath(path).open(encoding="utf-8") as lines:
        for line in lines:
            case = json.loads(line)
            if case["answerable"]:
                answers[case["family"]].append(case["expected"])
    return dict(answers)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _typical(values: list[Any]) -> Any:
    if values and all(_number(v) for v in values):
        return statistics.median_low(sorted(values))
    if values and all(isinstance(v, dict) for v in values):
        return {k: _typical([v[k] for v in values if k in v]) for k in values[0]}
    counts = Counter(json.dumps(v, sort_keys=True) for v in values)
    return json.loads(counts.most_common(1)[0][0]) if counts else 0


@functools.cache
def _prior(kind: str) -> str:
    return json.dumps(_typical(_train_answers().get(kind, [])))


def prior_answer(kind: str) -> Any:
    """The prior's answer to a question of template ``kind`` (0 for a template train never asks)."""
    return json.loads(_prior(kind))


__all__ = ["prior_answer"]
