"""The figures of ``batchgate report --results``: the models' re-graded rollouts, summed up.

Per model (:func:`summarize`): each (case, rollout) once, the scored rollouts of each
case averaged, then the cases; a case with no scored rollout has no mean and is
counted apart. Infra errors are counted, never scored; rollouts cut short by the
service (context overflow, an answer cut at ``max_tokens``) are scored as unfinished
and counted in every mean, and apart as ``truncated``. Beside the mean, as a paper's
table gives it: a 95% interval (a percentile bootstrap over cases,
:data:`BOOTSTRAP_RESAMPLES` resamples from a fixed seed, so the same files always give
the same interval), pass@k and pass^k for k = 1..r (a pass is a perfect rollout,
every term 1; pass@k is the chance that at least one of k rollouts drawn from a
case's r passes, pass^k that all k do, each the unbiased estimate from the case's
counts, averaged over cases), tokens in and out per rollout, and latency percentiles
(``timing``: reported, never scored). Several models are compared over the cases
every one of them has scored; the cases left out are named (:func:`common_cases`).
Each model's source, digest, how much of its run is there and who vouches for it
head the table (``run`` in the JSON, :func:`run_fields`); infra errors past
:data:`INFRA_SHARE_FLAGGED` of a model's rollouts are flagged beside its mean.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import DEFAULT_DESK, DeskSpec
from batchgate_gym.kernel.scoring import exact
from batchgate_gym.tables import markdown_table, money

from .results import ModelResults, Rollout

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0
CUT_SHORT = frozenset({"context_overflow", "length", "rejected"})  # runner.CUT_SHORT, without the client
REWARD_BINS = ((1.0, 1.01, "1.0"), (0.75, 1.0, "0.75 to <1"), (0.5, 0.75, "0.5 to <0.75"), (0.25, 0.5, "0.25 to <0.5"), (0.0, 0.25, "0 to <0.25"))  # fmt: skip
INFRA_SHARE_FLAGGED = 0.05  # past this share of a model's rollouts, the table flags its infra errors


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
    out["run"] = run_fields(results)
    out["per_case"] = per_case
    return out


def run_fields(results: ModelResults) -> dict[str, Any]:
    """Where a model's rows come from and how complete and trusted they are (``run`` in the JSON)."""
    rollouts = len(results.rollouts)
    return {
        "source": results.source,
        "source_kind": results.source_kind or "unknown",
        "source_digest": results.source_digest or None,
        "source_cases": results.source_cases,
        "selection": results.selection or None,
        "planned_rollouts": results.planned,
        "missing_rollouts": len(results.missing),
        "missing_scored_as_failures": sum(1 for r in results.rollouts if r.ended == "missing"),
        "certificate": results.certificate,
        "infra_share": round(results.infra_errors / rollouts, 4) if rollouts else None,
        "note": results.run_note or None,
    }


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


def model_report_json(results: Mapping[str, ModelResults], desk_name: str = DEFAULT_DESK) -> dict[str, Any]:
    shared, left = common_cases(results)
    cases = shared if len(results) > 1 else None
    out: dict[str, Any] = {
        "policies": {model: summarize(r, desk_name, cases) for model, r in results.items()}
    }
    if left and len(results) > 1:
        out["left_out"] = left
    return out


def model_report_text(results: Mapping[str, ModelResults], desk_name: str = DEFAULT_DESK) -> str:
    """Markdown tables, one column per model: headline, per family, reward distribution."""
    desk = registry.get(desk_name)
    report = model_report_json(results, desk_name)
    summaries = report["policies"]
    names = list(summaries)
    headline = desk.scoring.terms if desk.scoring.headline_terms is None else desk.scoring.headline_terms

    def cell(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    def interval(value: list[float] | None) -> str:
        return "n/a" if value is None else f"{value[0]:.4f} to {value[1]:.4f}"

    rows = _provenance_rows(summaries, names)
    if any(summaries[n]["settings"] != "defaults" for n in names):
        # A lenient rule set, a hint or another brief raises a score: the table says so.
        rows.append(["played under", *(summaries[n]["settings"] for n in names)])
    rows += [
        ["mean reward (per case, over scored rollouts)", *(_mean_cell(summaries[n]) for n in names)],
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


def _provenance_rows(summaries: Mapping[str, Mapping[str, Any]], names: Sequence[str]) -> list[list[str]]:
    """Where each model's rows come from, how much of its run is there, and who vouches for them."""
    runs = [summaries[n]["run"] for n in names]
    rows = [
        ["source", *(_source_cell(run) for run in runs)],
        ["cases played", *(_cases_cell(summaries[n]) for n in names)],
        ["certificate", *(run["certificate"] for run in runs)],
    ]
    if any(run["missing_rollouts"] for run in runs):
        rows.append(["missing rollouts", *(_missing_cell(run) for run in runs)])
    return rows


def _source_cell(run: Mapping[str, Any]) -> str:
    digest = f", sha256 {run['source_digest'][:12]}" if run["source_digest"] else ""
    if run["source_kind"] == "split":
        return f"{run['source']} (shipped split{digest})"
    if run["source_kind"] == "file":
        return f"{run['source']} (**case file, not a shipped split**{digest})"
    return f"{run['source']} (no run manifest)"


def _cases_cell(summary: Mapping[str, Any]) -> str:
    run = summary["run"]
    if run["planned_rollouts"] is None:
        return f"{summary['cases']} (no run manifest: completeness unknown)"
    return f"{summary['cases']} of {run['source_cases']} ({run['selection']})"


def _missing_cell(run: Mapping[str, Any]) -> str:
    missing = run["missing_rollouts"]
    if not missing:
        return "0"
    how = "scored as failures" if run["missing_scored_as_failures"] else "left out"
    return f"{missing} of {run['planned_rollouts']} ({how})"


def _mean_cell(summary: Mapping[str, Any]) -> str:
    """The mean, flagged where infra errors are over :data:`INFRA_SHARE_FLAGGED` of the rollouts."""
    mean = "n/a" if summary["mean_reward"] is None else f"{summary['mean_reward']:.4f}"
    share = summary["run"]["infra_share"]
    if share is not None and share > INFRA_SHARE_FLAGGED:
        return f"{mean} (infra errors: {summary['infra_errors']} of {summary['rollouts']} rollouts)"
    return mean


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
    "BOOTSTRAP_RESAMPLES",
    "INFRA_SHARE_FLAGGED",
    "REWARD_BINS",
    "bootstrap_ci95",
    "common_cases",
    "model_report_json",
    "model_report_text",
    "pass_at_k",
    "pass_hat_k",
    "run_fields",
    "summarize",
]
