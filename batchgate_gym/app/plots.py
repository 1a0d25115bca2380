"""PNG charts of a policy comparison, for ``batchgate report --plot DIR``.

Tables say the numbers; charts show at a glance where a policy breaks (which
family) and what it costs (the desk's metrics: bad batches in the warehouse, revenue
off, money paid twice ...). Policies are coloured by kind (target, reference,
attacker, oracle, baseline), so that the sixteen of ``--attackers`` read as groups. The charts
use matplotlib's non-interactive Agg backend, so they render on a headless
machine, and they are drawn from the same exact aggregates the tables print.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from batchgate_gym.evaluation import EvaluationResult
from batchgate_gym.kernel.extras import install_line

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


# One colour per kind of policy (Okabe-Ito: told apart in colour-blind vision and in
# greyscale), so that seventeen policies read as a few groups, not seventeen hues.
KIND_COLOURS = {
    "reference": "#0072B2",
    "target": "#009E73",
    "baseline": "#56B4E9",
    "attacker": "#D55E00",
    "oracle": "#CC79A7",
}
_PANELS_PER_ROW = 4


def _colours(names: list[str], kind: Callable[[str], str] | None) -> list[str]:
    return [KIND_COLOURS.get(kind(name) if kind else "reference", "#999999") for name in names]


def _kind_legend(figure: Any, names: list[str], kind: Callable[[str], str] | None) -> None:
    from matplotlib.patches import Patch

    kinds = list(dict.fromkeys(kind(name) if kind else "reference" for name in names))
    handles = [Patch(color=KIND_COLOURS.get(k, "#999999"), label=k) for k in kinds]
    # Below the panels, and kept in the picture by the tight bounding box it is saved with.
    figure.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncols=len(handles),
        fontsize="small",
        frameon=False,
    )


def reward_by_family(
    results: Mapping[str, EvaluationResult], path: Path, kind: Callable[[str], str] | None = None
) -> Path:
    """One panel per case family (faceted), each a horizontal bar per policy in the same
    order, coloured by the policy's kind: readable with seventeen policies and more."""
    plt = _pyplot()
    names = list(results)
    families = list(next(iter(results.values())).per_family)
    columns = min(_PANELS_PER_ROW, len(families))
    rows = -(-len(families) // columns)
    height = max(3.0, 0.22 * len(names) + 1.0)
    figure, grid = plt.subplots(
        rows,
        columns,
        figsize=(3.4 * columns + 1.8, height * rows + 0.6),
        sharex=True,
        sharey=True,
        squeeze=False,
    )
    colours = _colours(names, kind)
    positions = range(len(names))
    for axes, family in zip(grid.flat, families, strict=False):
        heights = [
            float(results[n].per_family[family].means["reward"]) if family in results[n].per_family else 0.0
            for n in names
        ]
        axes.barh(positions, heights, color=colours)
        axes.set_title(family or "all cases", fontsize="medium")
        axes.set_xlim(0, 1.05)
        axes.grid(axis="x", linewidth=0.5, alpha=0.5)
    for axes in grid.flat[len(families) :]:
        axes.set_visible(False)
    grid[0][0].set_yticks(positions, names)
    grid[0][0].invert_yaxis()  # the first policy on top, as in the tables
    for axes in grid.flat:
        axes.tick_params(axis="y", labelsize="small")
    for axes in grid[-1]:
        axes.set_xlabel("mean reward")
    figure.suptitle("Mean reward per family", x=0.02, ha="left")
    _kind_legend(figure, names, kind)
    return _save(plt, figure, path)


def damage_by_policy(results: Mapping[str, EvaluationResult], path: Path, desk: Any) -> Path:
    """One panel per metric the desk shows (the gate's: defective batches loaded, with the
    defective count as a dashed line, and the revenue error; the refund desk's duplicate
    payments, dollars paid twice and over the cap, false blocks ...), a horizontal bar per
    policy coloured by its kind, so that every name stays legible."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    names = list(results)
    first = next(iter(results.values())).overall
    metrics = [
        metric
        for metric in desk.scoring.shown_metrics
        if metric.name in first.counts or metric.name in first.cents
    ]
    columns = 2 if len(metrics) == 4 else min(3, max(len(metrics), 1))  # four as two by two
    rows = -(-len(metrics) // columns)
    figure, panels = plt.subplots(
        rows,
        columns,
        figsize=(3.8 * columns + 1.8, max(3.0, 0.3 * len(names) + 1.0) * rows),
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    colours = _colours(names, desk.kind_of)
    positions = range(len(names))
    for axes, metric in zip(panels.flat, metrics, strict=False):
        scale = 100 if metric.cents else 1
        axes.barh(positions, [results[n].overall.total(metric.name) / scale for n in names], color=colours)
        if metric.out_of is not None:
            whole = first.total(desk.scoring.metric(metric.out_of).name)
            label = f"{metric.out_of.replace('_', ' ')}: {whole}"
            axes.axvline(whole, color="grey", linestyle="--", linewidth=1, label=label)
            axes.legend(fontsize="small", loc="lower right")
        axes.set_title((metric.row or metric.name).format(cases=first.episodes), fontsize="medium")
        axes.xaxis.set_major_locator(MaxNLocator(4))  # dollar labels need the room
        if metric.money or metric.cents:
            axes.xaxis.set_major_formatter("${x:,.0f}")
        axes.grid(axis="x", linewidth=0.5, alpha=0.5)
    for axes in list(panels.flat)[len(metrics) :]:
        axes.set_visible(False)
    panels[0][0].set_yticks(positions, names)
    panels[0][0].invert_yaxis()  # the first policy on top, as in the tables
    for axes in panels.flat:
        axes.tick_params(axis="y", labelsize="small")
    _kind_legend(figure, names, desk.kind_of)
    return _save(plt, figure, path)


def _save(plt: Any, figure: Any, path: Path) -> Path:
    if figure.get_layout_engine() is None:  # the faceted charts lay themselves out
        figure.tight_layout()
    figure.savefig(path, dpi=_DPI, bbox_inches="tight")
    plt.close(figure)
    return path


def write_charts(results: Mapping[str, EvaluationResult], directory: str | Path, desk: Any) -> list[Path]:
    """Write every chart of ``desk``'s results into ``directory`` (created if needed); return
    the paths. Each policy is coloured by its kind (``desk.kind_of``)."""
    if not results:
        raise ValueError("no results to plot")
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    return [
        reward_by_family(results, out / REWARD_BY_FAMILY, desk.kind_of),
        damage_by_policy(results, out / DAMAGE_BY_POLICY, desk),
    ]
