"""The gate's benchmark result as the Markdown tables the docs show."""

from __future__ import annotations

from typing import Any

from batchgate_gym.tables import markdown_table


def _num(value: float | None, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def markdown(result: dict[str, Any]) -> str:
    """The small tables the docs show."""
    return "\n\n".join([_headline_table(result), _vector_table(result), _scaling_table(result)])


def _headline_table(result: dict[str, Any]) -> str:
    episodes, steps, reset, memory = (result[k] for k in ("episodes", "steps_per_second", "reset", "memory"))
    targets = result["targets"]

    def target(name: str, digits: int = 0) -> list[str]:
        if name not in targets:
            return ["", ""]
        goal = targets[name]
        sign = ">=" if goal.get("at_least") else "<="
        met = {True: "met", False: "not met", None: "n/a"}[goal["met"]]
        return [f"{sign} {goal['target']:,.{digits}f}", met]

    rows = [
        (
            "careful, episodes/s (eval split, text interface, graded)",
            _num(episodes["careful"]["episodes_per_second"]),
            *target("careful_episodes_per_second"),
        ),
        (
            "naive, episodes/s",
            _num(episodes["naive"]["episodes_per_second"]),
            *target("naive_episodes_per_second"),
        ),
        ("list_batches, steps/s", _num(steps["list_batches"]), *target("list_batches_steps_per_second")),
        ("profile_batch, steps/s", _num(steps["profile_batch"]), "", ""),
        ("run_sql (GROUP BY on a batch), steps/s", _num(steps["run_sql"]), "", ""),
        ("reset, built case (µs)", _num(reset["reset_built_us"], 1), *target("reset_built_us")),
        (
            "reset, fresh procedural case (ms)",
            _num(reset["reset_procedural_ms"], 3),
            *target("reset_procedural_ms", 1),
        ),
        (
            f"memory of 1,000 live envs (MB, from {memory['envs']:,})",
            _num(memory["projected_1000_envs_mb"], 1),
            *target("memory_1000_envs_mb"),
        ),
        (
            "reset, new case of two 100,000-row batches (s)",
            _num(targets.get("reset_100k_rows_s", {}).get("measured"), 3),
            *target("reset_100k_rows_s", 1),
        ),
    ]
    return markdown_table(["measure (median)", "value", "target", ""], rows)


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
