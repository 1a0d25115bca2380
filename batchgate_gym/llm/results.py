"""Result files of ``batchgate run-model``: reading, re-grading and summing them up.

A results file is JSONL, one row per rollout (:data:`.runner.ROW_FIELDS`). Nothing
in a row is taken on trust: :func:`load_results` re-grades every scored row from
its saved log alone, with the desk's ``replay`` and the row's pinned ``head``, on
the case the row names, and refuses (:class:`ResultsError`, naming the file and
line) a row whose log or head was edited, whose score is not what its log replays
to, or that is not a row of this desk. A last line without its newline (a run
killed while writing) is left out, as the next run of ``run-model`` drops it.

Per model, the summary takes each (case, rollout) once (a scored row over an infra
error, else the last row), averages the scored rollouts of each case, and then
the cases: a case with no scored rollout has no mean and is counted apart. Infra
errors are counted, never scored. ``timing`` is never read.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from batchgate_gym.kernel.ledger import LogIntegrityError

Desk = Any  # batchgate_gym.app.desks.Desk: the registry is wiring, imported only when results are read

REWARD_BINS = ((1.0, 1.01, "1.0"), (0.75, 1.0, "0.75 to <1"), (0.5, 0.75, "0.5 to <0.75"), (0.25, 0.5, "0.25 to <0.5"), (0.0, 0.25, "0 to <0.25"))  # fmt: skip


class ResultsError(ValueError):
    """A results file that cannot be read or a row that does not re-grade; names the file and line."""


def read_rows(path: Path | str) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, row)`` for every complete line; a last line cut short is left out."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    complete = lines[:-1]  # after the last newline: "" or a line cut short
    rows = []
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ResultsError(f"{path}:{number}: not a JSON row ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise ResultsError(f"{path}:{number}: a row is a JSON object")
        rows.append((number, row))
    return rows


def trim_partial_line(path: Path) -> None:
    """Drop a last line without its newline (what a killed writer leaves), so appending starts clean."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


def desk_module(desk: str, name: str) -> Any:
    """``batchgate_gym.desks.<desk>.<name>``: every desk keeps its tools and replay there."""
    return importlib.import_module(f"batchgate_gym.desks.{desk}.{name}")


def desk_tools(desk: str) -> list[dict[str, Any]]:
    """The desk's tools in OpenAI function format."""
    return list(desk_module(desk, "tools").tool_schemas())


@dataclass
class Rollout:
    """One (case, rollout) of a model: its re-graded episode fields, or the infra error it ended with."""

    case_id: str
    family: str
    rollout: int
    episode: dict[str, Any] | None  # desk.episode_fields of the re-graded score
    error: dict[str, Any] | None
    where: str
    case_index: int = 0


@dataclass
class ModelResults:
    model: str
    rollouts: list[Rollout] = field(default_factory=list)

    @property
    def scored(self) -> list[Rollout]:
        return [r for r in self.rollouts if r.episode is not None]

    @property
    def infra_errors(self) -> int:
        return sum(1 for r in self.rollouts if r.episode is None)


class _Cases:
    """The desk's cases by source (split name or case file), then by id, loaded once each."""

    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self._by_source: dict[str, dict[str, Any]] = {}

    def get(self, source: str, case_id: str) -> Any:
        if source not in self._by_source:
            self._by_source[source] = {case.case_id: case for case in self.desk.fixed_cases(source or None)}
        return self._by_source[source].get(case_id)


def _desk(name: str) -> Desk:
    from batchgate_gym.app import desks

    return desks.get(name)


def exact(value: float) -> Fraction:
    from batchgate_gym.app.evaluate import exact as exact_fraction

    return exact_fraction(value)


def regrade(row: Mapping[str, Any], desk: Desk, cases: _Cases, where: str) -> dict[str, Any]:
    """The episode fields of a scored row, from its log replayed under its pinned head."""
    case = cases.get(str(row.get("source") or ""), str(row.get("case_id")))
    if case is None:
        raise ResultsError(f"{where}: no case {row.get('case_id')!r} in {row.get('source')!r}")
    log, head = row.get("log"), row.get("head")
    if not isinstance(log, list) or not isinstance(head, str):
        raise ResultsError(f"{where}: a scored row needs its exported log and its head")
    try:
        score = desk_module(desk.name, "replay").replay(case, log, head=head)
    except LogIntegrityError as exc:
        raise ResultsError(f"{where}: the log does not replay under its head (edited?): {exc}") from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultsError(f"{where}: the log cannot be replayed: {exc!r}") from exc
    graded = score.as_dict()
    if row.get("score") != graded:
        raise ResultsError(f"{where}: the recorded score is not what its log replays to (edited?)")
    info = {**dict(row.get("info_metrics") or {}), "case_id": case.case_id, "score": graded}
    info["family"] = getattr(case, "family", "")
    fields: dict[str, Any] = desk.episode_fields(info)
    return fields


def load_results(paths: Iterable[Path | str], desk_name: str = "gate") -> dict[str, ModelResults]:
    """Every model's rollouts in ``paths``, each scored row re-graded (see the module docstring)."""
    desk = _desk(desk_name)
    cases = _Cases(desk)
    chosen: dict[str, dict[tuple[str, int], Rollout]] = {}
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise ResultsError(f"{path}: no such results file")
        for number, row in read_rows(path):
            where = f"{path}:{number}"
            missing = [name for name in ("desk", "case_id", "rollout", "model") if name not in row]
            if missing:
                raise ResultsError(f"{where}: not a run-model row (no {', '.join(missing)})")
            if row["desk"] != desk.name:
                raise ResultsError(f"{where}: a row of desk {row['desk']!r}, not {desk.name!r}")
            error = row.get("error")
            if error is None:
                rollout = Rollout(
                    row["case_id"], "", int(row["rollout"]), regrade(row, desk, cases, where), None, where
                )
                rollout.family = rollout.episode["family"] if rollout.episode else ""
            elif isinstance(error, Mapping) and error.get("kind") == "infra":
                case = cases.get(str(row.get("source") or ""), str(row["case_id"]))
                family = getattr(case, "family", "") if case is not None else ""
                rollout = Rollout(row["case_id"], family, int(row["rollout"]), None, dict(error), where)
            else:
                raise ResultsError(f"{where}: 'error' is null or an infra error, not {error!r}")
            rollout.case_index = int(row.get("case_index") or 0)
            runs = chosen.setdefault(str(row["model"]), {})
            key = (rollout.case_id, rollout.rollout)
            if key not in runs or rollout.episode is not None or runs[key].episode is None:
                runs[key] = rollout
    return {
        model: ModelResults(model, sorted(runs.values(), key=lambda r: (r.case_index, r.case_id, r.rollout)))
        for model, runs in chosen.items()
    }


# -- the summary ---------------------------------------------------------------


def _mean(values: Sequence[Fraction]) -> Fraction:
    return sum(values, Fraction(0)) / len(values)


def _case_means(results: ModelResults, desk: Desk) -> dict[str, dict[str, Any]]:
    """Per case (in order of first appearance): rollouts, scored, and the means over scored rollouts."""
    groups: dict[str, list[Rollout]] = {}
    for rollout in results.rollouts:
        groups.setdefault(rollout.case_id, []).append(rollout)
    out: dict[str, dict[str, Any]] = {}
    for case_id, group in groups.items():
        scored = [r.episode for r in group if r.episode is not None]
        entry: dict[str, Any] = {
            "family": group[0].family,
            "rollouts": len(group),
            "scored": len(scored),
            "infra_errors": len(group) - len(scored),
        }
        if scored:
            entry["reward"] = float(_mean([exact(e["reward"]) for e in scored]))
            for term in desk.terms:
                entry[term] = float(_mean([exact(e["terms"][term]) for e in scored]))
            for metric in desk.shown_metrics:
                values = [exact(e["metrics"][metric.name]) for e in scored]
                entry[metric.name] = round(float(_mean(values)), 2 if metric.money else 4)
            entry["perfect"] = sum(1 for e in scored if e["reward"] == 1.0)
        out[case_id] = entry
    return out


def summarize(results: ModelResults, desk_name: str = "gate") -> dict[str, Any]:
    """One model's figures, as ``batchgate report --results --json`` prints them."""
    desk = _desk(desk_name)
    per_case = _case_means(results, desk)
    graded = {case_id: entry for case_id, entry in per_case.items() if entry["scored"]}
    scored = [r.episode for r in results.scored if r.episode is not None]
    headline = desk.terms if desk.headline_terms is None else desk.headline_terms

    def case_mean(name: str, entries: Iterable[Mapping[str, Any]]) -> float | None:
        values = [exact(entry[name]) for entry in entries]
        return round(float(_mean(values)), 4) if values else None

    out: dict[str, Any] = {
        "rollouts": len(results.rollouts),
        "scored": len(scored),
        "infra_errors": results.infra_errors,
        "cases": len(per_case),
        "cases_scored": len(graded),
        "mean_reward": case_mean("reward", graded.values()),
    }
    for term in headline:
        out[f"mean_{term}"] = case_mean(term, graded.values())
    out["perfect"] = sum(1 for e in scored if e["reward"] == 1.0)
    for metric in desk.metrics:
        values = [e["metrics"][metric.name] for e in scored]
        out[metric.name] = (
            round(sum(round(v * 100) for v in values) / 100, 2) if metric.money else sum(values)
        )
    families: dict[str, list[Mapping[str, Any]]] = {}
    for entry in graded.values():
        families.setdefault(entry["family"], []).append(entry)
    out["per_family"] = {family: case_mean("reward", entries) for family, entries in families.items()}
    out["reward_distribution"] = {
        label: sum(1 for e in scored if low <= e["reward"] < high) for low, high, label in REWARD_BINS
    }
    out["per_case"] = per_case
    return out


def report_json(results: Mapping[str, ModelResults], desk_name: str = "gate") -> dict[str, Any]:
    return {"policies": {model: summarize(r, desk_name) for model, r in results.items()}}


def report_text(results: Mapping[str, ModelResults], desk_name: str = "gate") -> str:
    """Markdown tables, one column per model: headline, per family, reward distribution."""
    from batchgate_gym.app.tables import markdown_table, money

    desk = _desk(desk_name)
    summaries = {model: summarize(r, desk_name) for model, r in results.items()}
    names = list(summaries)
    headline = desk.terms if desk.headline_terms is None else desk.headline_terms

    def cell(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    rows = [
        ["mean reward (per case, over scored rollouts)", *(cell(summaries[n]["mean_reward"]) for n in names)]
    ]
    rows += [[f"mean {term}", *(cell(summaries[n][f"mean_{term}"]) for n in names)] for term in headline]
    rows.append(
        ["perfect rollouts", *(f"{summaries[n]['perfect']} / {summaries[n]['scored']}" for n in names)]
    )
    for metric in desk.shown_metrics:
        label = (metric.row or metric.name).format(cases=f"{summaries[names[0]]['cases']}") if names else ""
        if metric.money:
            label = f"{metric.phrase or metric.name}, all scored rollouts"
            cells = [money(summaries[n][metric.name]) for n in names]
        elif metric.out_of is not None:
            cells = [f"{summaries[n][metric.name]} / {summaries[n][metric.out_of]}" for n in names]
        else:
            cells = [str(summaries[n][metric.name]) for n in names]
        rows.append([label, *cells])
    rows.append(
        ["rollouts scored", *(f"{summaries[n]['scored']} / {summaries[n]['rollouts']}" for n in names)]
    )
    rows.append(["infra errors (not scored)", *(str(summaries[n]["infra_errors"]) for n in names)])
    sections = [("Models", markdown_table(["", *names], rows))]
    families = list(dict.fromkeys(f for n in names for f in summaries[n]["per_family"]))
    if families != [""]:
        family_rows = [
            [family, *(cell(summaries[n]["per_family"].get(family)) for n in names)] for family in families
        ]
        sections.append(("Mean reward per family", markdown_table(["", *names], family_rows)))
    bins = [
        [label, *(str(summaries[n]["reward_distribution"][label]) for n in names)]
        for _, _, label in REWARD_BINS
    ]
    sections.append(("Reward distribution (scored rollouts)", markdown_table(["reward", *names], bins)))
    return "\n\n".join(f"### {title}\n\n{table}" for title, table in sections)


__all__ = [
    "ModelResults",
    "ResultsError",
    "Rollout",
    "desk_tools",
    "load_results",
    "read_rows",
    "regrade",
    "report_json",
    "report_text",
    "summarize",
    "trim_partial_line",
]
