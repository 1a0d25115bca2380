"""A short, seeded MaskablePPO run learns: on held-out cases it clearly beats a
random macro policy and the naive baseline."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmark_scripts import load_script

from batchgate_gym.evaluation import evaluate
from batchgate_gym.policies.gate.learned import random_macro_policy
from batchgate_gym.policies.gate.reference import NaivePolicy

pytest.importorskip(
    "torch", reason="torch is not installed: pip install torch==2.13.0 'batchgate_gym[train]'"
)
pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed: pip install 'batchgate_gym[train]'")

STEPS = 40_000  # about 30 s on one core of this machine class
MARGIN = 0.10


@pytest.mark.slow
def test_brief_training_beats_random_and_naive_on_held_out_cases() -> None:
    train_ppo = load_script("gate_train_ppo")
    config = train_ppo.TrainConfig(steps=STEPS, seed=0, curve_every=0)
    run = train_ppo.train(config)
    assert run.model.num_timesteps >= STEPS
    learned = train_ppo.play(run.model, config, "ppo").overall
    random = evaluate(random_macro_policy(0), split="eval", progress=False).overall
    naive = evaluate(NaivePolicy, split="eval", progress=False).overall
    summary = (
        f"learned {learned.mean('reward')}, random {random.mean('reward')}, naive {naive.mean('reward')}"
    )
    assert learned.means["reward"] >= random.means["reward"] + MARGIN, summary
    assert learned.means["reward"] >= naive.means["reward"] + MARGIN, summary


def test_learning_curve_png_shows_both_panels(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="matplotlib is not installed: pip install 'batchgate_gym[plot]'")
    train_ppo = load_script("gate_train_ppo")
    curve = [train_ppo.CurvePoint(0, 0.5, 20, None), train_ppo.CurvePoint(1000, 0.8, 6, 0.7)]
    path = tmp_path / "curve.png"
    train_ppo.plot_curve(curve, path, n_defective=24)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 10_000
