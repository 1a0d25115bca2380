"""``batchgate report``: the reference policies (and any others) side by side.

The human form prints Markdown tables (baselines, per family, ablation, and the
desk's own, such as the gate's largest revenue errors); ``--json`` prints
``{"policies": {NAME: {mean_reward, mean_TERM of the desk's headline terms, its
metrics, per_case: {CASE_ID: {...}}}}}``. ``--attackers`` adds every
attacker (oracles get the truth of the cases played); ``--plot DIR`` also writes
PNG charts there (see :mod:`.plots`). ``--results A.jsonl B.jsonl`` compares the
models of ``batchgate run-model`` result files instead, one column per model,
every row re-graded from its saved log (see :mod:`batchgate_gym.llm.results`);
its ``--json`` is ``{"policies": {MODEL: {mean_reward, per_case, infra_errors,
...}}}``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import DEFAULT_DESK
from batchgate_gym.evaluation import EvaluationResult, report_json, run_policies
from batchgate_gym.policies.base import Policy
from batchgate_gym.tables import legend, markdown_table

from .shared import (
    UsageError,
    add_backend_options,
    add_case_source,
    add_quiet_option,
    check_backend_options,
    desk_of,
    dumps,
    env_kwargs,
    int_in,
    nodes_line,
)

DEFAULT_POLICIES = "naive,careful,refuse-all"  # the gate's; every desk names its own


TAKES_DESK_OPTIONS = True  # plays the desk's environment: --rules, --recovery, ... apply


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_case_source(parser)
    parser.add_argument(
        "--policies",
        default=None,
        help=f"comma-separated names (default: the desk's reference policies; the gate's {DEFAULT_POLICIES})",
    )
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="add your own policy (repeatable)",
    )
    parser.add_argument("--attackers", action="store_true", help="add every attacker policy")
    parser.add_argument(
        "--results",
        nargs="+",
        metavar="JSONL",
        help="compare models from run-model results files instead (every row re-graded from its log)",
    )
    parser.add_argument(
        "--trust",
        metavar="KEY.pub",
        help="with --results: refuse every row and run manifest not signed by this public key",
    )
    parser.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="with --results: report a run missing planned rollouts, each scored as a failure",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--plot", metavar="DIR", help="also write PNG charts into DIR (needs matplotlib)")
    parser.add_argument(
        "--jobs", type=int_in(1), default=1, help="worker processes (Ray tasks with --backend ray)"
    )
    add_backend_options(parser)
    add_quiet_option(parser)


# What --results leaves aside: it compares saved results files, playing no policy.
_PLAYING_OPTIONS = (
    "cases", "split", "policies", "policy", "attackers", "plot", "jobs", "quiet", "backend", "ray_address"
)  # fmt: skip


def unused_options(args: argparse.Namespace, desk: registry.DeskSpec) -> dict[str, str]:
    """With ``--results``, every option about playing policies (the files hold the episodes);
    without it, the options about results files."""
    if not args.results:
        reason = "it checks results files: give --results FILE"
        return {"trust": reason, "allow_incomplete": reason}
    reason = "--results compares the rollouts saved in its files and plays nothing"
    return {name: reason for name in (*_PLAYING_OPTIONS, *registry.all_options())}


def resolve_policies(
    names: str | None, extra: Sequence[str] = (), desk: str = DEFAULT_DESK
) -> dict[str, Any]:
    """The named policies of ``desk`` (its defaults when ``names`` is None), then ``MODULE:ATTR`` ones."""
    spec = registry.get(desk)
    known = spec.policies.known()
    if names is None:
        names = ",".join(spec.policies.defaults)
    chosen: dict[str, Any] = {}
    for name in filter(None, (n.strip() for n in names.split(","))):
        if name not in known:
            raise UsageError(f"batchgate report: unknown policy {name!r}; known: {', '.join(known)}")
        chosen[name] = known[name]
    for item in extra:
        obj = user_policy(item)
        name = getattr(obj, "name", item.partition(":")[2])
        if name in chosen:  # two columns of one name: the report would show only the last
            raise UsageError(
                f"batchgate report: --policy {item} is named {name!r}, as another policy of this report"
                " is; give it another name (its name attribute), or leave the other out (--policies)"
            )
        chosen[name] = obj
    return chosen


def user_policy(item: str) -> Any:
    """``--policy MODULE:ATTR``: the object, imported as ``python -c`` would find it (the
    current directory on the path, after the installed packages)."""
    module, _, attr = item.partition(":")
    if not module or not attr:
        raise UsageError(f"batchgate report: --policy wants MODULE:ATTR, got {item!r}")
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        obj = getattr(importlib.import_module(module), attr)
    except ModuleNotFoundError as exc:
        where = "the current directory or the installed packages"
        raise UsageError(f"batchgate report: --policy {item}: no module {exc.name!r} in {where}") from None
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"batchgate report: --policy {item}: {exc}") from None
    if not callable(obj) and not isinstance(obj, Policy):
        raise UsageError(
            f"batchgate report: --policy {item}: not a policy (it needs reset(observation, info) and"
            " act(observation), or must be callable)"
        )
    return obj


def with_attackers(policies: dict[str, Any], played: list[Any], desk: str = DEFAULT_DESK) -> dict[str, Any]:
    """``policies`` followed by every attacker not already among them, oracles given the truth
    of ``played`` (the cases the report plays)."""
    spec = registry.get(desk)
    if spec.policies.lineup is None:
        return policies
    extra = {name: policy for name, policy in spec.policies.line_up(played).items() if name not in policies}
    return {**policies, **extra}


def run(args: argparse.Namespace) -> int:
    desk = desk_of(args)
    if args.results:
        return report_results(
            args.results,
            desk.name,
            as_json=args.json,
            trust=args.trust,
            allow_incomplete=args.allow_incomplete,
        )
    if desk.cases.split_cases is None and desk.cases.load_cases is None:
        raise SystemExit(f"batchgate report: the {desk.name!r} desk has no fixed cases to compare on")
    if args.attackers and desk.policies.lineup is None:
        raise SystemExit(f"batchgate report: the {desk.name!r} desk has no attackers")
    if args.plot:
        from .plots import require_matplotlib

        require_matplotlib()
    check_backend_options(args.backend, args.ray_address, "report")
    policies = resolve_policies(args.policies, args.policy, desk.name)
    played = desk.fixed_cases(args.cases, args.split)  # read once for the attackers and the options
    if args.attackers:
        policies = with_attackers(policies, played, desk.name)
    results = run_policies(
        policies,
        cases=args.cases,  # named as given: a desk may serve splits but read no case lists
        split=args.split,
        jobs=args.jobs,
        progress=not args.quiet,
        desk=desk.name,
        env_kwargs=env_kwargs(args, desk, played),
        backend=args.backend,
    )
    if args.backend == "ray":
        print(nodes_line("report"), file=sys.stderr)
    if args.json:
        print(dumps(report_json(results, desk.name)))
    else:
        print(report_text(results, desk.name))
    if args.plot:
        from .plots import write_charts

        for path in write_charts(results, args.plot, desk):
            print(f"wrote {path}", file=sys.stderr)
    return 0


def report_results(
    paths: Sequence[str],
    desk: str,
    *,
    as_json: bool = False,
    trust: str | None = None,
    allow_incomplete: bool = False,
) -> int:
    """``--results``: one column per model of the files, each row re-graded by the desk's replay,
    held to its run's manifest, and (``trust``) to its certificate."""
    from batchgate_gym.kernel.certificate import CertificateError, TrustedKey
    from batchgate_gym.llm import results, summary

    missing = [path for path in paths if not Path(path).is_file()]
    if missing:  # the command line's mistake, said before any file is read
        raise UsageError(f"batchgate report: {missing[0]}: no such results file")
    notices: list[str] = []
    try:
        key = TrustedKey.load(trust) if trust is not None else None
        loaded = results.load_results(
            paths, desk, trust=key, incomplete="fail" if allow_incomplete else "refuse", notices=notices
        )
    except (results.ResultsError, CertificateError) as exc:
        raise SystemExit(f"batchgate report: {exc}") from None
    finally:
        for notice in notices:
            print(f"batchgate report: notice: {notice}", file=sys.stderr)
    if not loaded:
        raise SystemExit(f"batchgate report: no rows in {', '.join(paths)}")
    print(
        dumps(summary.model_report_json(loaded, desk)) if as_json else summary.model_report_text(loaded, desk)
    )
    return 0


def _desk(desk: registry.DeskSpec | str) -> registry.DeskSpec:
    return registry.get(desk) if isinstance(desk, str) else desk


def baseline_table(results: dict[str, EvaluationResult], desk: registry.DeskSpec | str = DEFAULT_DESK) -> str:
    """Headline means, every shown metric's total and the episodes where an exact term is 1."""
    desk = _desk(desk)
    names = list(results)
    first = next(iter(results.values()))
    n_cases = len(first.episodes)
    headline = desk.scoring.terms if desk.scoring.headline_terms is None else desk.scoring.headline_terms
    rows = [
        [f"mean {term}", *(f"{results[n].overall.mean(term):.4f}" for n in names)]
        for term in ("reward", *headline)
    ]
    for metric in desk.scoring.shown_metrics:
        label = (metric.row or metric.name).format(cases=n_cases)
        rows.append([label, *(_total(results[n], metric, desk) for n in names)])
    for term, label in desk.scoring.exact_terms:
        rows.append(
            [label, *(f"{sum(r.terms[term] == 1.0 for r in results[n].episodes)} / {n_cases}" for n in names)]
        )
    if any(results[n].overall.infra_episodes for n in names):
        # Left out of every mean and total above: say how many, or the means read as over every case.
        rows.append([INFRA_ROW, *(str(results[n].overall.infra_episodes) for n in names)])
    return markdown_table(["", *names], rows)


INFRA_ROW = "infra errors (not scored, left out of the means and totals)"


def _total(result: EvaluationResult, metric: registry.Metric, desk: registry.DeskSpec) -> str:
    value = result.overall.total(metric.name)
    if metric.out_of is not None:
        return f"{value} / {result.overall.total(desk.scoring.metric(metric.out_of).name)}"
    return metric.text(value)


def family_table(results: dict[str, EvaluationResult]) -> str:
    names = list(results)
    families = list(next(iter(results.values())).per_family)
    rows = [
        [family, *(f"{results[n].per_family[family].mean('reward'):.4f}" for n in names)]
        for family in families
    ]
    return markdown_table(["", *names], rows)


def ablation_table(results: dict[str, EvaluationResult], desk: registry.DeskSpec | str = DEFAULT_DESK) -> str:
    desk = _desk(desk)
    names = list(results)
    rows = [["full", *(f"{results[n].overall.mean('reward'):.4f}" for n in names)]]
    for term in desk.scoring.terms:
        cells = []
        for name in names:
            means = results[name].overall.means
            cells.append(f"{round(float(means['reward'] - desk.scoring.weights[term] * means[term]), 4):.4f}")
        rows.append([f"no {term}", *cells])
    return markdown_table(["", *names], rows)


def worst_table(results: dict[str, EvaluationResult], metric: registry.Metric, count: int = 5) -> str:
    """Per policy, the ``count`` cases with the largest nonzero value of ``metric``."""
    rows = []
    for name, result in results.items():
        ranked = sorted(result.episodes, key=lambda r: (-r.metrics[metric.name], r.case_id))
        for episode in ranked[:count]:
            value = episode.metrics[metric.name]
            if value > 0:
                rows.append([name, episode.case_id, metric.text(value)])
    return markdown_table(["policy", "case", metric.column or metric.name], rows)


def policy_legend(results: dict[str, EvaluationResult], desk: registry.DeskSpec) -> str:
    """One line per policy column: what kind of policy it is."""
    return legend([(name, registry.KIND_MEANINGS[desk.kind_of(name)]) for name in results])


def report_text(results: dict[str, EvaluationResult], desk: registry.DeskSpec | str = DEFAULT_DESK) -> str:
    desk = _desk(desk)
    sections = [("Baselines", baseline_table(results, desk) + "\n\n" + policy_legend(results, desk))]
    if set(next(iter(results.values())).per_family) != {""}:  # a desk whose cases have families
        sections.append(("Mean reward per family", family_table(results)))
    sections.append(
        ("Ablation (mean reward with one term removed, not renormalised)", ablation_table(results, desk))
    )
    sections += [
        (metric.worst, worst_table(results, metric)) for metric in desk.scoring.metrics if metric.worst
    ]
    return "\n\n".join(f"### {title}\n\n{table}" for title, table in sections)
