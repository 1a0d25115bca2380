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


def damage_by_policy(results: Mapping[str, EvaluationResult], path: Path) -> Path:
    """Two panels: defective batches loaded, and total revenue error, per policy."""
    plt = _pyplot()
    names = list(results)
    loaded = [results[n].overall.bad_batches_loaded for n in names]
    revenue = [results[n].overall.revenue_error_usd for n in names]
    n_bad = next(iter(results.values())).overall.defective_batches
    figure, (left, right) = plt.subplots(1, 2, figsize=(max(9.0, 0.7 * len(names) + 4), 4.8))
    left.bar(names, loaded, color="tab:red")
    left.axhline(n_bad, color="grey", linestyle="--", linewidth=1, label=f"defective batches: {n_bad}")
    left.set_ylabel("defective batches loaded")
    left.set_title("Bad batches loaded")
    left.legend(fontsize="small")
    right.bar(names, revenue, color="tab:orange")
    right.set_ylabel("revenue error (USD)")
    right.yaxis.set_major_formatter("${x:,.0f}")
    right.set_title("Revenue error, all cases")
    for axes in (left, right):
        axes.tick_params(axis="x", labelrotation=35)
        for label in axes.get_xticklabels():
            label.set_horizontalalignment("right")
    return _save(plt, figure, path)


def _save(plt: Any, figure: Any, path: Path) -> Path:
    figure.tight_layout()
    figure.savefig(path, dpi=_DPI)
    plt.close(figure)
    return path


def write_charts(results: Mapping[str, EvaluationResult], directory: str | Path) -> list[Path]:
    """Write every chart into ``directory`` (created if needed); return the paths."""
    if not results:
        raise ValueError("no results to plot")
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    return [
        reward_by_family(results, out / REWARD_BY_FAMILY),
        damage_by_policy(results, out / DAMAGE_BY_POLICY),
    ]
