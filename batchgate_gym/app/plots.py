"""PNG charts of a policy comparison, for ``batchgate report --plot DIR``.

Tables say the numbers; charts show at a glance where a policy breaks (which
family) and what it costs (bad batches in the warehouse, revenue off). The charts
use matplotlib's non-interactive Agg backend, so they render on a headless
machine, and they are drawn from the same exact aggregates the tables print.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from batchgate_gym.kernel.extras import install_line

from .evaluate import EvaluationResult

REWARD_BY_FAMILY = "reward_by_family.png"
DAMAGE_BY_POLICY = "damage_by_policy.png"
_DPI = 100


def require_matplotlib() -> Any:
    """matplotlib, or the command stops naming the extra that brings it (checked before
    the report's episodes run, not after)."""
    try:
        import matplotlib
    except ImportError as error:
        raise SystemExit(
            f"--plot needs matplotlib, not in the base install: {install_line('plot')}"
        ) from error
    return matplotlib


def _pyplot() -> Any:
    matplotlib = require_matplotlib()
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def reward_by_family(results: Mapping[str, EvaluationResult], path: Path) -> Path:
    """Grouped bars: mean reward per case family, one bar per policy."""
    plt = _pyplot()
    names = list(results)
    families = list(next(iter(results.values())).per_family)
    width = 0.8 / max(len(names), 1)
    colours = plt.get_cmap("tab20").colors  # 20 distinct colours: every attacker gets its own
    figure, axes = plt.subplots(figsize=(max(8.0, 1.1 * len(families) + 0.25 * len(names)), 5.6))
    for position, name in enumerate(names):
        per_family = results[name].per_family
        heights = [float(per_family[f].means["reward"]) if f in per_family else 0.0 for f in families]
        offsets = [i + (position - (len(names) - 1) / 2) * width for i in range(len(families))]
        axes.bar(offsets, heights, width=width, label=name, color=colours[position % len(colours)])
    axes.set_xticks(range(len(families)), families, rotation=30, ha="right")
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("mean reward")
    axes.set_title("Mean reward per family")
    # Beside the axes, so no bar is hidden behind it.
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(plt, figure, path)


def damage_by_policy(results: Mapping[str, EvaluationResult], path: Path, desk: Any) -> Path:
    """One panel per metric the desk shows (the gate's: defective batches loaded, with the
    defective count as a dashed line, and the revenue error; the refund desk's duplicate
    payments, dollars paid twice and over the cap, false blocks ...), a bar per policy."""
    plt = _pyplot()
    names = list(results)
    first = next(iter(results.values())).overall
    metrics = [
        metric for metric in desk.shown_metrics if metric.name in first.counts or metric.name in first.cents
    ]
    columns = min(3, max(len(metrics), 1))
    rows = -(-len(metrics) // columns)
    width = max(4.6 * columns, 0.7 * len(names) + 4)
    figure, panels = plt.subplots(rows, columns, figsize=(width, 4.4 * rows), squeeze=False)
    colours = plt.get_cmap("tab10").colors
    for index, (axes, metric) in enumerate(zip(panels.flat, metrics, strict=False)):
        dollars = metric.money or metric.cents
        scale = 100 if metric.cents else 1
        axes.bar(
            names, [results[n].overall.total(metric.name) / scale for n in names], color=colours[index % 10]
        )
        if metric.out_of is not None:
            whole = first.total(desk.metric(metric.out_of).name)
            axes.axhline(whole, color="grey", linestyle="--", linewidth=1, label=f"{metric.out_of}: {whole}")
            axes.legend(fontsize="small")
        axes.set_title((metric.row or metric.name).format(cases=first.episodes))
        if dollars:
            axes.yaxis.set_major_formatter("${x:,.0f}")
        axes.tick_params(axis="x", labelrotation=35)
        for label in axes.get_xticklabels():
            label.set_horizontalalignment("right")
    for axes in list(panels.flat)[len(metrics) :]:
        axes.set_visible(False)
    return _save(plt, figure, path)


def _save(plt: Any, figure: Any, path: Path) -> Path:
    figure.tight_layout()
    figure.savefig(path, dpi=_DPI)
    plt.close(figure)
    return path


def write_charts(results: Mapping[str, EvaluationResult], directory: str | Path, desk: Any) -> list[Path]:
    """Write every chart of ``desk``'s results into ``directory`` (created if needed); return the paths."""
    if not results:
        raise ValueError("no results to plot")
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    return [
        reward_by_family(results, out / REWARD_BY_FAMILY),
        damage_by_policy(results, out / DAMAGE_BY_POLICY, desk),
    ]
