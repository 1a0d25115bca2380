"""Procedural cases and named splits through the environment (issue: case families)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from batchgate_gym import evaluate
from batchgate_gym.desks.gate.generator import FAMILIES
from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.policies.gate.reference import CarefulPolicy, NaivePolicy, RefuseAllPolicy


def test_default_env_draws_procedural_cases_from_every_family():
    env = BatchGateEnv()
    families = set()
    for seed in range(80):
        env.reset(seed=seed)
        families.add(env.world.case.family)
    assert families == set(FAMILIES)


def test_seeds_give_distinct_cases_and_repeat_exactly():
    env = BatchGateEnv()
    first = [env.reset(seed=s)[0] + json.dumps([b.rows for b in env.world.case.batches]) for s in range(30)]
    again = [env.reset(seed=s)[0] + json.dumps([b.rows for b in env.world.case.batches]) for s in range(30)]
    assert first == again
    ids = set()
    for s in range(30):
        env.reset(seed=s)
        ids.add(env.world.case.case_id)
    assert len(ids) == 30


_PROBE = """
import json, sys
from batchgate_gym.envs import BatchGateEnv
env = BatchGateEnv()
env.reset(seed=int(sys.argv[1]))
print(json.dumps([[b.batch_id, b.rows, b.truth.defective] for b in env.world.case.batches]))
"""


def test_same_seed_same_case_in_another_process():
    outs = [
        subprocess.run(
            [sys.executable, "-c", _PROBE, "123"],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": h},
        ).stdout
        for h in ("0", "7")
    ]
    assert outs[0] == outs[1] and json.loads(outs[0])


def test_reset_options_fix_family_variant_and_scale():
    env = BatchGateEnv()
    env.reset(seed=4, options={"family": "label-drift", "variant": 1})
    assert (env.world.case.family, env.world.case.variant) == ("label-drift", 1)
    env.reset(seed=4, options={"batches": 12, "rows_per_batch": 50})
    case = env.world.case
    assert len(case.batches) == 12 and all(len(b.rows) == 50 for b in case.batches)
    assert 1 < case.n_defective < 12
    with pytest.raises(ValueError):
        env.reset(seed=4, options={"case_index": 3})  # fixed-case option on a procedural env


def test_constructor_knobs_and_split_arguments():
    env = BatchGateEnv(batches=6, rows_per_batch=(30, 40), defects_per_batch=2)
    env.reset(seed=9)
    case = env.world.case
    assert len(case.batches) == 6 and all(30 <= len(b.rows) <= 40 for b in case.batches)
    assert any(len(b.truth.citations) >= 2 for b in case.batches if b.truth.defective)
    assert len(BatchGateEnv(split="eval").source) == 32
    assert len(BatchGateEnv(split="train").source) == 320
    with pytest.raises(ValueError):
        BatchGateEnv(cases="eval", split="train")
    with pytest.raises(ValueError):
        BatchGateEnv(split="eval", batches=4)  # knobs shape procedural cases only


@pytest.mark.slow  # sweep: procedural cases at scale
def test_careful_is_perfect_on_procedural_cases_at_scale():
    assert evaluate(CarefulPolicy, seeds=range(300), progress=False).overall.means["reward"] == 1
    big = evaluate(
        CarefulPolicy, seeds=range(20), progress=False, env_kwargs={"batches": 12, "rows_per_batch": 1000}
    )
    assert big.overall.means["reward"] == 1 and big.overall.bad_batches_loaded == 0


def test_baselines_have_the_original_shape_on_our_eval_split():
    naive = evaluate(NaivePolicy, split="eval", progress=False)
    refuse = evaluate(RefuseAllPolicy, split="eval", progress=False)
    careful = evaluate(CarefulPolicy, split="eval", progress=False)
    assert careful.overall.means["reward"] == 1
    controls = ("clean-control", "legit-edge")
    for family, result in naive.per_family.items():
        high = family in controls
        assert (result.mean("reward") > 0.6) == high, family
    lowest = min(refuse.per_family.values(), key=lambda a: a.means["reward"]).means["reward"]
    for family in controls:
        assert refuse.per_family[family].means["reward"] == lowest
    assert naive.overall.bad_batches_loaded == 24 and refuse.overall.bad_batches_loaded == 0
