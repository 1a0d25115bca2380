"""The benchmark's result as the Markdown tables the README shows."""

from __future__ import annotations

from typing import Any

from ..tables import markdown_table


def _num(value: float | None, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def markdown(result: dict[str, Any]) -> str:
    """The small tables the README shows."""
    return "\n\n".join([_headline_table(result), _vector_table(result), _scaling_table(result)])


def _headline_table(result: dict[str, Any]) -> str:
    episodes, steps, reset, memory = (result[k] for k in ("episodes", "steps_per_second", "reset", "memory"))
    targets = {name: t["target"] for name, t in result["targets"].items()}
    rows = [
        (
            "careful, episodes/s (eval split, text interface, graded)",
            _num(episodes["careful"]["episodes_per_second"]),
            f">= {targets['careful_episodes_per_second']:,.0f}",
        ),
        ("naive, episodes/s", _num(episodes["naive"]["episodes_per_second"]), ""),
        ("list_batches, steps/s", _num(steps["list_batches"]), ""),
        ("profile_batch, steps/s", _num(steps["profile_batch"]), ""),
        ("run_sql (GROUP BY on a batch), steps/s", _num(steps["run_sql"]), ""),
        ("reset, built case (µs)", _num(reset["reset_built_us"], 1), f"<= {targets['reset_built_us']:.0f}"),
        (
            "reset, fresh procedural case (ms)",
            _num(reset["reset_procedural_ms"], 3),
            f"<= {targets['reset_procedural_ms']:g}",
        ),
        (
            f"memory of 1,000 live envs (MB, from {memory['envs']:,})",
            _num(memory["projected_1000_envs_mb"], 1),
            f"<= {targets['memory_1000_envs_mb']:.0f}",
        ),
    ]
    return markdown_table(["measure (median)", "value", "target"], rows)


def _vector_table(result: dict[str, Any]) -> str:
    sizes = list(result["vector"]["sync"])
    header = ["careful, steps/s", *(f"{n} env{'s' * (n != '1')}" for n in sizes)]
    rows = [
        [label, *(_num(result["vector"][kind][n]["steps_per_second"]) for n in sizes)]
        for kind, label in (("sync", "SyncVectorEnv"), ("async", "AsyncVectorEnv"))
    ]
    return markdown_table(header, rows)


def _scaling_table(result: dict[str, Any]) -> str:
    measures = ["new case reset (ms)", "built reset (µs)", "first profile (ms)", "careful episode (ms)"]
    tables = []
    for key, label in (("rows", "rows per batch"), ("batches", "batches per case")):
        rows = [
            [
                f"{point['rows_per_batch' if key == 'rows' else 'batches']:,}",
                _num(point["reset_new_ms"], 2),
                _num(point["reset_built_us"], 1),
                _num(point["profile_first_ms"], 2),
                _num(point["careful_episode_ms"], 2),
            ]
            for point in result["scaling"][key]
        ]
        tables.append(markdown_table([label, *measures], rows, first="---:"))
    return "\n\n".join(tables)
