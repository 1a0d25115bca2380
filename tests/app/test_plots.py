"""batchgate report --plot DIR writes readable PNG charts of a sane size."""

from __future__ import annotations

import pytest
from conftest import FIXTURE_CASES

from batchgate_gym.app.cli import main
from batchgate_gym.app.plots import DAMAGE_BY_POLICY, KIND_COLOURS, REWARD_BY_FAMILY, write_charts
from batchgate_gym.desks import registry
from batchgate_gym.evaluation import EpisodeResult, EvaluationResult

image = pytest.importorskip("matplotlib.image")


def check_png(path) -> None:
    pixels = image.imread(path)
    height, width = pixels.shape[:2]
    assert 300 <= height <= 2000 and 500 <= width <= 4000
    assert len({tuple(p) for p in pixels.reshape(-1, pixels.shape[2])[::97]}) > 5  # not blank


def test_report_plot_writes_both_charts(tmp_path, capsys):
    out = tmp_path / "charts"
    assert main(["report", "--cases", str(FIXTURE_CASES), "--no-progress", "--plot", str(out)]) == 0
    assert "### Baselines" in capsys.readouterr().out  # the tables still print
    for name in (REWARD_BY_FAMILY, DAMAGE_BY_POLICY):
        check_png(out / name)


def test_report_plot_charts_any_desks_metrics(tmp_path, capsys):
    # The damage chart was the gate's alone (bad batches, revenue): the refund desk's
    # report --plot ended in AttributeError after printing its tables.
    out = tmp_path / "charts"
    assert main(["report", "--desk", "refund", "--no-progress", "--plot", str(out)]) == 0
    assert "duplicate payments" in capsys.readouterr().out
    for name in (REWARD_BY_FAMILY, DAMAGE_BY_POLICY):
        check_png(out / name)


def test_charts_need_results(tmp_path):
    with pytest.raises(ValueError):
        write_charts({}, tmp_path, registry.get("gate"))


def _results(names: list[str]) -> dict[str, EvaluationResult]:
    """Two episodes a policy, in two families, with made-up figures (only the charts read them)."""
    metrics = {"bad_batches_loaded": 1, "revenue_error_usd": 12.5, "defective_batches": 2}
    return {
        name: EvaluationResult(
            name,
            [
                EpisodeResult(i, f"c{i}", f"family-{i}", (n % 5) / 4, {}, metrics, 3, 3, True, False)
                for i in range(2)
            ],
        )
        for n, name in enumerate(names)
    }


def test_seventeen_policies_are_faceted_and_coloured_by_kind(tmp_path):
    """A panel per family, a bar per policy coloured by its kind (not 17 hues side by side)."""
    from matplotlib.colors import to_rgb

    gate = registry.get("gate")
    names = [
        *gate.policies.defaults,
        *(name for name in gate.policies.attacker_policies if name not in gate.policies.defaults),
    ]
    assert len(names) >= 16
    paths = write_charts(_results(names), tmp_path, gate)
    for path in paths:
        check_png(path)
        pixels = image.imread(path)[..., :3].reshape(-1, 3)
        seen = {tuple(round(float(c), 2) for c in p) for p in pixels[::3]}
        for kind in ("target", "reference", "attacker", "oracle", "baseline"):
            assert tuple(round(c, 2) for c in to_rgb(KIND_COLOURS[kind])) in seen, (path.name, kind)
