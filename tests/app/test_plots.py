"""batchgate report --plot DIR writes readable PNG charts of a sane size."""

from __future__ import annotations

import pytest
from conftest import FIXTURE_CASES

from batchgate_gym.app import desks
from batchgate_gym.app.cli import main
from batchgate_gym.app.plots import DAMAGE_BY_POLICY, REWARD_BY_FAMILY, write_charts

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
        write_charts({}, tmp_path, desks.get("gate"))
