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
errors are counted, never scored; rollouts cut short by the service (context
overflow, an answer cut at ``max_tokens``) are scored as unfinished and counted
in every mean, and apart as ``truncated``.

A model's figures are one experiment's: every scored row of a model must have been
played under the same settings, those its verified log's first entry records (the
desk's rules, hints, recovery), the same system message (the brief, or one
that replaced it) and the same mode; rows of one model under two settings are refused
(:class:`ResultsError`), and a model whose rows were not played under the desk's
defaults says so in every table (``settings``), since a lenient rule set or a hint
in the brief raises a score that its mean alone would not show.

Beside the mean, as a paper's table gives it: a 95% interval (a percentile
bootstrap over cases, :data:`BOOTSTRAP_RESAMPLES` resamples from a fixed seed, so
the same files always give the same interval), pass@k and pass^k for k = 1..r (a
pass is a perfect rollout, every term 1; pass@k is the chance that at least one
of k rollouts drawn from a case's r passes, pass^k that all k do, each the
unbiased estimate from the case's counts, averaged over cases), tokens in and
out per rollout, and latency percentiles (``timing``: reported, never scored).
Several models are compared over the cases every one of them has scored; the
cases left out are named (:func:`common_cases`).
"""

from __future__ import annotations

import functools
import importlib
import json
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import DEFAULT_DESK, DeskSpec
from batchgate_gym.kernel.ledger import LogIntegrityError
from batchgate_gym.kernel.scoring import exact
from batchgate_gym.tables import markdown_table, money

from .chat import DEFAULT_MODE

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0
CUT_SHORT = frozenset({"context_overflow", "length", "rejected"})  # runner.CUT_SHORT, without the client
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
    episode: dict[str, Any] | None  # desk.scoring.episode_fields of the re-graded score
    error: dict[str, Any] | None
    where: str
    case_index: int = 0
    ended: str = "finished"  # how a scored rollout ended (runner.ENDINGS); "infra" for an error
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float | None = None  # wall clock: reported, never scored
    settings: str = ""  # how the row was played where it differs from the desk's defaults ("": it does not)

    @property
    def perfect(self) -> bool:
        """Scored, with every term 1."""
        return self.episode is not None and all(value == 1.0 for value in self.episode["terms"].values())


@dataclass
class ModelResults:
    model: str
    rollouts: list[Rollout] = field(default_factory=list)
    settings: str = ""  # what its scored rows were played under, where not the desk's defaults

    @property
    def scored(self) -> list[Rollout]:
        return [r for r in self.rollouts if r.episode is not None]

    @property
    def infra_errors(self) -> int:
        return sum(1 for r in self.rollouts if r.episode is None)


class _Cases:
    """The desk's cases by source (split name or case file), then by id, loaded once each."""

    def __init__(self, desk: DeskSpec) -> None:
        self.desk = desk
        self._by_source: dict[str, dict[str, Any]] = {}

    def get(self, source: str, case_id: str) -> Any:
        if source not in self._by_source:
            self._by_source[source] = {case.case_id: case for case in self.desk.fixed_cases(source or None)}
        return self._by_source[source].get(case_id)


def regrade(row: Mapping[str, Any], desk: DeskSpec, cases: _Cases, where: str) -> dict[str, Any]:
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
    fields: dict[str, Any] = desk.scoring.episode_fields(info)
    return fields


@functools.cache
def default_log_settings(desk_name: str) -> dict[str, Any]:
    """What the first entry of a log played under the desk's default options records."""
    env = registry.get(desk_name).make_env()
    try:
        env.reset(seed=0)
        settings = env.unwrapped.export_log()[0]["args"].get("settings", {})
    finally:
        env.close()
    return dict(settings)


def settings_label(row: Mapping[str, Any], desk_name: str) -> str:
    """How a scored row was played where that differs from the desk's defaults: the plain
    settings its log's first entry records (``rules=original``, ``hints=true``), a system
    message that replaced the brief, the text mode; ``""`` when none."""
    log = row.get("log")
    logged: Any = log[0] if isinstance(log, list) and log else {}
    for name in ("args", "settings"):  # the first entry's args, then their settings
        logged = logged.get(name) if isinstance(logged, Mapping) else None
    parts = _differences(default_log_settings(desk_name), logged if isinstance(logged, Mapping) else {})
    if row.get("system_prompt") is not None:
        parts.append("system prompt replaced")
    if row.get("mode", DEFAULT_MODE) != DEFAULT_MODE:
        parts.append(f"mode={row.get('mode')}")
    return ", ".join(parts)


def _differences(default: Mapping[str, Any], given: Mapping[str, Any]) -> list[str]:
    """``name=value`` for each plain setting (rules, hints, recovery) that differs from its
    default. A budget (a mapping of limits) is left out: its fields follow the code's
    version, and a log of an older run records the defaults of its day."""
    found = []
    for name in sorted(set(default) | set(given), key=str):
        was, now = default.get(name), given.get(name)
        if isinstance(was, Mapping) or isinstance(now, Mapping) or was == now:
            continue
        found.append(f"{name}={now if isinstance(now, str) else json.dumps(now, default=str)}")
    return found


def load_results(paths: Iterable[Path | str], desk_name: str = DEFAULT_DESK) -> dict[str, ModelResults]:
    """Every model's rollouts in ``paths``, each scored row re-graded (see the module docstring)."""
    desk = registry.get(desk_name)
    cases = _Cases(desk)
    chosen: dict[str, dict[tuple[str, int], Rollout]] = {}
    played_under: dict[str, tuple[str, str]] = {}  # model -> (settings, the first row that had them)
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
                rollout.settings = settings_label(row, desk.name)
                _check_one_setting(played_under, str(row["model"]), rollout.settings, where)
            elif isinstance(error, Mapping) and error.get("kind") == "infra":
                case = cases.get(str(row.get("source") or ""), str(row["case_id"]))
                family = getattr(case, "family", "") if case is not None else ""
                rollout = Rollout(row["case_id"], family, int(row["rollout"]), None, dict(error), where)
            else:
                raise ResultsError(f"{where}: 'error' is null or an infra error, not {error!r}")
            rollout.case_index = int(row.get("case_index") or 0)
            _read_extras(rollout, row)
            runs = chosen.setdefault(str(row["model"]), {})
            key = (rollout.case_id, rollout.rollout)
            if key not in runs or rollout.episode is not None or runs[key].episode is None:
                runs[key] = rollout
    return {
        model: ModelResults(
            model,
            sorted(runs.values(), key=lambda r: (r.case_index, r.case_id, r.rollout)),
            played_under.get(model, ("", ""))[0],
        )
        for model, runs in chosen.items()
    }


def _check_one_setting(
    played_under: dict[str, tuple[str, str]], model: str, settings: str, where: str
) -> None:
    """Refuse a model's row played under other settings than its first scored row."""
    first = played_under.setdefault(model, (settings, where))
    if first[0] != settings:
        raise ResultsError(
            f"{where}: model {model!r} was played under {settings or 'the defaults'} here and under"
            f" {first[0] or 'the defaults'} at {first[1]}: one model's figures are one experiment's;"
            " report the runs apart (or under other model names)"
        )


def _read_extras(rollout: Rollout, row: Mapping[str, Any]) -> None:
    """How the rollout ended, its tokens and its latency (rows of older runs lack some)."""
    usage: Mapping[str, Any] = row["usage"] if isinstance(row.get("usage"), Mapping) else {}
    timing: Mapping[str, Any] = row["timing"] if isinstance(row.get("timing"), Mapping) else {}
    rollout.ended = str(row.get("ended") or ("finished" if rollout.episode is not None else "infra"))
    rollout.prompt_tokens = int(usage.get("prompt_tokens") or 0)
    rollout.completion_tokens = int(usage.get("completion_tokens") or 0)
    latency = timing.get("latency_s")
    rollout.latency_s = float(latency) if isinstance(latency, int | float) else None


# -- the summary ---------------------------------------------------------------


def _mean(values: Sequence[Fraction]) -> Fraction:
    return sum(values, Fraction(0)) / len(values)


def _case_means(results: ModelResults, desk: DeskSpec) -> dict[str, dict[str, Any]]:
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
            for term in desk.scoring.terms:
                entry[term] = float(_mean([exact(e["terms"][term]) for e in scored]))
            for metric in desk.scoring.shown_metrics:
                values = [exact(e["metrics"][metric.name]) for e in scored]
                entry[metric.name] = round(float(_mean(values)), 2 if metric.money else 4)
            entry["perfect"] = sum(1 for e in scored if e["reward"] == 1.0)
            entry["passes"] = sum(1 for r in group if r.perfect)
        out[case_id] = entry
    return out


def bootstrap_ci95(values: Sequence[float], seed: int = BOOTSTRAP_SEED) -> list[float] | None:
    """A 95% percentile-bootstrap interval of the mean of ``values`` (resampled from a fixed seed)."""
    if not values:
        return None
    draw = random.Random(seed)
    size = len(values)
    means = sorted(sum(draw.choices(values, k=size)) / size for _ in range(BOOTSTRAP_RESAMPLES))
    low = means[int(0.025 * BOOTSTRAP_RESAMPLES)]
    high = means[min(BOOTSTRAP_RESAMPLES - 1, int(0.975 * BOOTSTRAP_RESAMPLES))]
    return [round(low, 4), round(high, 4)]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k rollouts drawn (without replacement) from n, c of them passes, passes."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all k rollouts drawn (without replacement) from n, c of them passes, pass."""
    return math.comb(c, k) / math.comb(n, k)


def _percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile (no interpolation), or None without values."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(share * len(ordered)) - 1)], 3)


def common_cases(results: Mapping[str, ModelResults]) -> tuple[list[str], dict[str, list[str]]]:
    """The cases every model has scored (in the first model's order), and per model the cases it
    did not score that another did (what the comparison leaves out)."""
    scored = {model: {r.case_id for r in found.scored} for model, found in results.items()}
    every = set.intersection(*scored.values()) if scored else set()
    some = set.union(*scored.values()) if scored else set()
    first = next(iter(results.values()), None)
    order = list(dict.fromkeys(r.case_id for r in first.rollouts)) if first else []
    shared = [case_id for case_id in order if case_id in every]
    missing = {model: sorted(some - ids) for model, ids in scored.items() if some - ids}
    return shared, missing


def summarize(
    results: ModelResults, desk_name: str = DEFAULT_DESK, cases: Sequence[str] | None = None
) -> dict[str, Any]:
    """One model's figures, as ``batchgate report --results --json`` prints them.

    ``cases``, when given, are the cases the headline figures (the means, the
    interval, pass@k and pass^k, the means per family) are taken over: those every
    compared model has scored. Counts, metrics, tokens and latency cover every
    scored rollout.
    """
    desk = registry.get(desk_name)
    per_case = _case_means(results, desk)
    graded = {case_id: entry for case_id, entry in per_case.items() if entry["scored"]}
    compared = (
        graded if cases is None else {case_id: graded[case_id] for case_id in cases if case_id in graded}
    )
    played = results.scored
    scored = [r.episode for r in played if r.episode is not None]
    headline = desk.scoring.terms if desk.scoring.headline_terms is None else desk.scoring.headline_terms

    def case_mean(name: str, entries: Iterable[Mapping[str, Any]]) -> float | None:
        values = [exact(entry[name]) for entry in entries]
        return round(float(_mean(values)), 4) if values else None

    out: dict[str, Any] = {
        "rollouts": len(results.rollouts),
        "scored": len(results.scored),
        "truncated": sum(1 for r in results.scored if r.ended in CUT_SHORT),
        "infra_errors": results.infra_errors,
        "settings": results.settings or "defaults",
        "cases": len(per_case),
        "cases_scored": len(graded),
        "common_cases": len(compared),
        "mean_reward": case_mean("reward", compared.values()),
        "ci95": bootstrap_ci95([float(entry["reward"]) for entry in compared.values()]),
    }
    for term in headline:
        out[f"mean_{term}"] = case_mean(term, compared.values())
    out.update(_passes(compared))
    out["perfect"] = sum(1 for e in scored if e["reward"] == 1.0)
    for metric in desk.scoring.metrics:
        values = [e["metrics"][metric.name] for e in scored]
        out[metric.name] = (
            round(sum(round(v * 100) for v in values) / 100, 2) if metric.money else sum(values)
        )
    out["tokens"] = {
        "prompt_per_rollout": round(sum(r.prompt_tokens for r in played) / len(played), 1)
        if played
        else None,
        "completion_per_rollout": round(sum(r.completion_tokens for r in played) / len(played), 1)
        if played
        else None,
    }
    latencies = [r.latency_s for r in played if r.latency_s is not None]
    out["latency_s"] = {"p50": _percentile(latencies, 0.5), "p95": _percentile(latencies, 0.95)}
    families: dict[str, list[Mapping[str, Any]]] = {}
    for entry in compared.values():
        families.setdefault(entry["family"], []).append(entry)
    out["per_family"] = {family: case_mean("reward", entries) for family, entries in families.items()}
    out["reward_distribution"] = {
        label: sum(1 for e in scored if low <= e["reward"] < high) for low, high, label in REWARD_BINS
    }
    out["per_case"] = per_case
    return out


def _passes(compared: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """pass@k and pass^k for k = 1..r (r: the fewest scored rollouts of a compared case)."""
    if not compared:
        return {"pass_at_k": {}, "pass_hat_k": {}}
    r = min(entry["scored"] for entry in compared.values())
    at, hat = {}, {}
    for k in range(1, r + 1):
        at[str(k)] = round(_average(pass_at_k(e["scored"], e["passes"], k) for e in compared.values()), 4)
        hat[str(k)] = round(_average(pass_hat_k(e["scored"], e["passes"], k) for e in compared.values()), 4)
    return {"pass_at_k": at, "pass_hat_k": hat}


def _average(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items)


def report_json(results: Mapping[str, ModelResults], desk_name: str = DEFAULT_DESK) -> dict[str, Any]:
    shared, left = common_cases(results)
    cases = shared if len(results) > 1 else None
    out: dict[str, Any] = {
        "policies": {model: summarize(r, desk_name, cases) for model, r in results.items()}
    }
    if left and len(results) > 1:
        out["left_out"] = left
    return out


def report_text(results: Mapping[str, ModelResults], desk_name: str = DEFAULT_DESK) -> str:
    """Markdown tables, one column per model: headline, per family, reward distribution."""
    desk = registry.get(desk_name)
    report = report_json(results, desk_name)
    summaries = report["policies"]
    names = list(summaries)
    headline = desk.scoring.terms if desk.scoring.headline_terms is None else desk.scoring.headline_terms

    def cell(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    def interval(value: list[float] | None) -> str:
        return "n/a" if value is None else f"{value[0]:.4f} to {value[1]:.4f}"

    rows = []
    if any(summaries[n]["settings"] != "defaults" for n in names):
        # A lenient rule set, a hint or another brief raises a score: the table says so.
        rows.append(["played under", *(summaries[n]["settings"] for n in names)])
    rows += [
        ["mean reward (per case, over scored rollouts)", *(cell(summaries[n]["mean_reward"]) for n in names)],
        ["95% interval (bootstrap over cases)", *(interval(summaries[n]["ci95"]) for n in names)],
    ]
    rows += [[f"mean {term}", *(cell(summaries[n][f"mean_{term}"]) for n in names)] for term in headline]
    depth = max((len(summaries[n]["pass_at_k"]) for n in names), default=0)
    for k in map(str, range(1, depth + 1)):
        rows.append([f"pass@{k}", *(cell(summaries[n]["pass_at_k"].get(k)) for n in names)])
    for k in map(str, range(2, depth + 1)):
        rows.append([f"pass^{k}", *(cell(summaries[n]["pass_hat_k"].get(k)) for n in names)])
    rows.append(
        ["perfect rollouts", *(f"{summaries[n]['perfect']} / {summaries[n]['scored']}" for n in names)]
    )
    for metric in desk.scoring.shown_metrics:
        label = (
            (metric.row or metric.name).format(cases=f"{summaries[names[0]]['common_cases']}")
            if names
            else ""
        )
        if metric.money:
            label = f"{metric.phrase or metric.name}, all scored rollouts"
            cells = [money(summaries[n][metric.name]) for n in names]
        elif metric.out_of is not None:
            cells = [f"{summaries[n][metric.name]} / {summaries[n][metric.out_of]}" for n in names]
        else:
            cells = [str(summaries[n][metric.name]) for n in names]
        rows.append([label, *cells])
    rows += [
        ["rollouts scored", *(f"{summaries[n]['scored']} / {summaries[n]['rollouts']}" for n in names)],
        ["of which cut short (scored as unfinished)", *(str(summaries[n]["truncated"]) for n in names)],
        ["infra errors (not scored)", *(str(summaries[n]["infra_errors"]) for n in names)],
        ["tokens in / out per rollout", *(_tokens(summaries[n]["tokens"]) for n in names)],
        ["latency p50 / p95 (s, wall clock)", *(_latency(summaries[n]["latency_s"]) for n in names)],
    ]
    table = markdown_table(["", *names], rows)
    compared = _compared_line(report, names)
    sections = [("Models", f"{compared}\n\n{table}" if compared else table)]
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


def _tokens(tokens: Mapping[str, Any]) -> str:
    prompt, completion = tokens["prompt_per_rollout"], tokens["completion_per_rollout"]
    return "n/a" if prompt is None else f"{prompt:,.0f} / {completion:,.0f}"


def _latency(latency: Mapping[str, Any]) -> str:
    return "n/a" if latency["p50"] is None else f"{latency['p50']:.2f} / {latency['p95']:.2f}"


def _compared_line(report: Mapping[str, Any], names: Sequence[str]) -> str:
    """Over which cases the models are compared, naming the cases some of them could not score."""
    if len(names) < 2:
        return ""
    summaries = report["policies"]
    common = summaries[names[0]]["common_cases"]
    left = report.get("left_out") or {}
    if not left:
        return f"Means, intervals, pass@k and pass^k are over the {common} cases every model scored."
    parts = [
        f"{len(ids)} without a scored rollout of {model} ({', '.join(ids)})" for model, ids in left.items()
    ]
    return (
        f"Means, intervals, pass@k and pass^k are over the {common} cases every model scored;"
        f" left out: {'; '.join(parts)}."
    )


__all__ = [
    "ModelResults",
    "ResultsError",
    "Rollout",
    "bootstrap_ci95",
    "common_cases",
    "default_log_settings",
    "desk_tools",
    "load_results",
    "pass_at_k",
    "pass_hat_k",
    "read_rows",
    "regrade",
    "report_json",
    "report_text",
    "settings_label",
    "summarize",
    "trim_partial_line",
]
