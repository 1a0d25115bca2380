"""A short, seeded MaskablePPO run on the refund desk's macro moves beats a random
policy on the held-out split; the reference policies spelled in macro moves score
as their text versions do; the learning-curve plot has both panels; the training
tickets' mix draws the partial family at its share and changes nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmark_scripts import load_script

from batchgate_gym.envs.refund.macro import RefundMacroEnv
from batchgate_gym.evaluation import evaluate
from batchgate_gym.policies.refund.reference import CarefulRefundPolicy, RefuseAllRefundPolicy

STEPS = 20_000  # about 10 s on one core of this machine class
MARGIN = 0.15


@pytest.fixture(scope="module")
def script():
    return load_script("refund_train_ppo")


@pytest.mark.slow
def test_brief_training_beats_random_on_held_out_cases(script) -> None:
    pytest.importorskip(
        "torch", reason="torch is not installed: pip install torch==2.13.0 'batchgate_gym[train]'"
    )
    pytest.importorskip(
        "sb3_contrib", reason="sb3-contrib is not installed: pip install 'batchgate_gym[train]'"
    )
    config = script.TrainConfig(steps=STEPS, seed=0, curve_every=0)
    run = script.train(config)
    assert run.model.num_timesteps >= STEPS
    learned = script.play(script.model_chooser(run.model), config, "ppo").overall
    random = script.play(script.random_chooser(0), config, "random").overall
    summary = f"learned {learned.mean('reward')}, random {random.mean('reward')}"
    assert learned.means["reward"] >= random.means["reward"] + MARGIN, summary
    assert learned.total("duplicate_effects") < random.total("duplicate_effects"), summary


def test_careful_and_refuse_all_in_macro_moves_score_as_their_text_versions(script) -> None:
    config = script.TrainConfig()
    for name, text_policy in (("careful", CarefulRefundPolicy), ("refuse-all", RefuseAllRefundPolicy)):
        macro = script.play(script.SCRIPTED[name], config, name)
        text = evaluate(text_policy, split=config.eval_split, desk="refund", progress=False)
        assert [r.reward for r in macro.episodes] == [r.reward for r in text.episodes], name
    naive = script.play(script.SCRIPTED["naive"], config, "naive").overall
    assert naive.total("duplicate_effects") > 0 and naive.means["reward"] < 0.6


def test_random_choices_depend_on_the_episode_not_on_what_ran_before(script) -> None:
    config = script.TrainConfig()
    choose = script.random_chooser(5)
    first = [r.reward for r in script.play(choose, config, "random").episodes]
    assert [r.reward for r in script.play(choose, config, "random").episodes] == first
    assert [r.reward for r in script.play(script.random_chooser(5), config, "random").episodes] == first
    assert [r.reward for r in script.play(script.random_chooser(6), config, "random").episodes] != first


def test_learning_curve_png_shows_both_panels(script, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="matplotlib is not installed: pip install 'batchgate_gym[plot]'")
    curve = [script.CurvePoint(0, 0.5, 12, 20, None), script.CurvePoint(1000, 0.9, 1, 2, 0.8)]
    path = tmp_path / "curve.png"
    script.plot_curve(curve, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 10_000


def _families(cases, seeds: range) -> list[str]:
    env = RefundMacroEnv(cases)
    try:
        return [env.reset(seed=seed)[1]["family"] for seed in seeds]
    finally:
        env.close()


def test_training_tickets_draw_the_partial_family_at_their_share_and_nothing_else_moves(script) -> None:
    seeds = range(400)
    plain = _families(None, seeds)
    mixed = _families(script.training_cases(script.TrainConfig(partial_share=0.5)), seeds)
    assert _families(script.training_cases(script.TrainConfig(partial_share=0.0)), seeds) == plain
    assert mixed == _families(script.training_cases(script.TrainConfig(partial_share=0.5)), seeds)
    share = mixed.count(script.PARTIAL_FAMILY) / len(seeds)
    assert 0.5 < share < 0.65, share  # half drawn from the family, and an eighth of the rest
    assert plain.count(script.PARTIAL_FAMILY) / len(seeds) < 0.2
    # A reset that names its knobs is the generator's own case, whatever the share.
    env = RefundMacroEnv(script.training_cases(script.TrainConfig(partial_share=1.0)))
    try:
        _vector, info = env.reset(seed=3, options={"family": "clean-single", "case_seed": 7})
        assert (info["family"], info["seed"]) == ("clean-single", 7)
    finally:
        env.close()


def test_partial_share_is_refused_off_procedural_tickets_and_outside_its_bounds(script) -> None:
    with pytest.raises(ValueError, match="only with --cases procedural"):
        script.training_cases(script.TrainConfig(cases="train", partial_share=0.5))
    with pytest.raises(ValueError, match=r"must be in \[0, 1\]"):
        script.training_cases(script.TrainConfig(partial_share=1.5))
    assert script.training_cases(script.TrainConfig(cases="train", partial_share=0.0)) == "train"
