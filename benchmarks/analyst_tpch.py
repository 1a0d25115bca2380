"""AnalystDesk level 7 at scale: writes benchmarks/results/analyst_tpch.json and analyst_tpch.md.

Builds TPC-H at a scale factor (1 by default) from nothing, in a fresh cache
directory, and times each copy the stores read (the generator's Parquet and CSV,
the typed tables, the DuckDB file, the SQLite file, and the Iceberg tables when the
iceberg store is played); then plays careful on every
level-7 question in every store under the budgets the stores give that scale
(:func:`~batchgate_gym.desks.analyst.engines.base.budget_scale`: at SF 1 ten times the
defaults, 20 s of CPU a DuckDB or PostgreSQL query, 200 million VM steps and 20 s a
SQLite one) and records its reward, the episode's wall time (the first episode on
a store also builds the store's copies: the counterfactual datasets included)
and, when a store stops careful's query, why. Peak memory is this process's (and,
apart, the largest child's: the generator) resident set.
The machine's load averages before and after are recorded, since the figures are
wall times on a shared machine.

    python benchmarks/analyst_tpch.py [--sf 1] [--stores postgres,sqlite,files,duckdb,lake,chdb,iceberg]
        [--out benchmarks/results] [--cache DIR]

The stores are played one after another, each on every question, and the results
are written after every episode, so a run stopped part way keeps the stores it
finished (the table then says how many episodes of how many it played).

``--cache DIR`` builds into (and reuses) ``DIR`` instead of a fresh directory
removed at the end: a rerun then times no build, and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from batchgate_gym.bench.harness import load_average


def peak_mb() -> dict[str, float]:
    """Peak resident set so far, in MB: this process and its largest child."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"self_mb": round(own, 1), "child_mb": round(child, 1)}


def timed(step: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    value = step()
    return value, round(time.perf_counter() - start, 3)


def build(sf: float, stores: list[str]) -> tuple[Any, list[dict[str, Any]]]:
    from batchgate_gym.desks.analyst.datasets.canonical import cache_root, dataset_dir, tables_of
    from batchgate_gym.desks.analyst.datasets.market import DataSpec

    spec = DataSpec(0, 0, tpch=sf)
    # (the step, the copy it builds or None, what it does)
    steps: list[tuple[str, str | None, Callable[[], Any]]] = [
        ("canonical Parquet (tpchgen-cli)", "canonical", lambda: dataset_dir(spec, "canonical")),
        ("lake Parquet (tpchgen-cli)", "lake", lambda: dataset_dir(spec, "lake")),
        ("raw CSV files (tpchgen-cli)", "files", lambda: dataset_dir(spec, "files")),
        ("typed tables in polars", None, lambda: tables_of(spec)),
        ("DuckDB database file", "duckdb", lambda: dataset_dir(spec, "duckdb")),
        (
            "SQLite database file",
            "sqlite",
            lambda: (dataset_dir(spec, "sqlite") / "store.sqlite").stat().st_size,
        ),
    ]
    if "iceberg" in stores:  # the optional store's copy: pyiceberg is its extra's
        steps.insert(-1, ("Iceberg tables (pyiceberg)", "iceberg", lambda: dataset_dir(spec, "iceberg")))
    rows = []
    for name, copy, step in steps:
        # Whether this copy was in the cache before the step: its time is then of finding it.
        found = None if copy is None else (cache_root() / spec.key() / copy).is_dir()
        value, seconds = timed(step)
        row = {"step": name, "seconds": seconds, "found": found, **peak_mb()}
        if isinstance(value, int):
            row["bytes"] = value
        rows.append(row)
        print(f"[tpch] {name}: {seconds} s", file=sys.stderr)
    rows[-1]["lineitem_rows"] = tables_of(spec)["lineitem"].height
    return spec, rows


def cases(sf: float, stores: list[str]) -> list[Any]:
    from batchgate_gym.desks.analyst.cases import case_from_dict
    from batchgate_gym.desks.analyst.generator import build_case
    from batchgate_gym.desks.analyst.questions.market_questions import of_level

    built = [
        timed(lambda t=template, i=index: build_case(500 + i, template=t.id, tpch_scale=sf))
        for index, template in enumerate(of_level(7))
    ]
    out = []
    for store in stores:
        for template, (base, seconds) in zip(of_level(7), built, strict=True):
            data = {
                **base,
                "case_id": f"tpch-sf{sf:g}-{template.id}-{store}",
                "stores": [store],
                "depends": [f"{store}.{d.split('.', 1)[1]}" for d in base["depends"]],
                "split": "benchmark",
            }
            out.append((case_from_dict(data, data["case_id"]), seconds))
    return out


def play(case: Any) -> dict[str, Any]:
    from batchgate_gym.envs.analyst.text import AnalystDeskEnv
    from batchgate_gym.policies.analyst.reference import CarefulAnalyst

    start = time.perf_counter()
    env = AnalystDeskEnv([case])
    policy = CarefulAnalyst()
    observation, info = env.reset(seed=0)
    policy.reset(observation, info)
    while True:
        observation, _reward, terminated, truncated, info = env.step(policy.act(observation))
        if terminated or truncated:
            break
    seconds = round(time.perf_counter() - start, 3)
    refused = [e.get("note") for e in env.export_log() if e.get("executed") is False and e.get("note")]
    env.close()
    return {
        "case_id": case.case_id,
        "template": case.family,
        "store": case.store,
        "reward": info["score"]["reward"],
        "infra_errors": info["score"]["infra_errors"],
        "episode_seconds": seconds,
        "stopped": refused[-1] if refused else "",
        **peak_mb(),
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"### AnalystDesk level 7 on TPC-H SF {result['sf']:g} (`python benchmarks/analyst_tpch.py`)",
        "",
        "| build step | seconds | peak RSS MB (this process) | peak RSS MB (largest child) | copy |",
        "|---|---:|---:|---:|---|",
    ]
    lines += [
        f"| {r['step']} | {r['seconds']:.2f} | {r['self_mb']:.0f} | {r['child_mb']:.0f} | {_copy_state(r)} |"
        for r in result["build"]
    ]
    lines += [
        "",
        f"lineitem rows: {result['build'][-1]['lineitem_rows']:,}; SQLite file: "
        f"{result['build'][-1]['bytes'] / 2**20:.0f} MB." + _found_note(result["build"]),
        "",
        "| question | store | careful reward | episode seconds | case build seconds (polars reference included) | stopped by |",
        "|---|---|---:|---:|---:|---|",
    ]
    for r in result["episodes"]:
        lines.append(
            f"| {r['template']} | {r['store']} | {r['reward']:.4f} | {r['episode_seconds']:.2f} | "
            f"{r['reference_seconds']:.2f} | {r['stopped'][:90] or '-'} |"
        )
    per_store = {}
    for r in result["episodes"]:
        per_store.setdefault(r["store"], []).append(r["reward"])
    lines += ["", "| store | careful mean reward | questions played |", "|---|---:|---:|"]
    lines += [f"| {s} | {sum(v) / len(v):.4f} | {len(v)} |" for s, v in per_store.items()]
    if len(result["episodes"]) < result.get("planned", len(result["episodes"])):
        lines += [
            "",
            f"Stopped after {len(result['episodes'])} of {result['planned']} episodes: the stores not listed were not played.",
        ]
    before, after = result["load_before"], result["load_after"]
    lines += [
        "",
        f"Peak RSS of the whole run: {result['peak']['self_mb']:.0f} MB (this process), "
        f"{result['peak']['child_mb']:.0f} MB (largest child). Wall times on {result['machine']['cpus']} CPUs; "
        f"load average (1 min) {before[0] if before else 'n/a'} before and {after[0] if after else 'n/a'} after "
        f"(the machine is shared; figures move with its load).",
    ]
    return "\n".join(lines)


def query_costs(sf: float, stores: list[str]) -> list[dict[str, Any]]:
    """careful's SQL for each level-7 question, run once in each store under the budgets it
    gives ``sf``: what the query cost (the CPU time of this process, whose one query thread
    does the work, or of the server's backend for postgres; and SQLite's VM steps, counted
    to the guard's step granularity) against the budget,
    and whether the store answered. No episode, no copies: each store's cost alone."""
    from batchgate_gym.desks.analyst.datasets.market import DataSpec
    from batchgate_gym.desks.analyst.engines.stores import open_store
    from batchgate_gym.desks.analyst.generator import build_case
    from batchgate_gym.desks.analyst.questions.market_questions import of_level
    from batchgate_gym.policies.analyst.sql import dialect_of
    from batchgate_gym.policies.analyst.tpch_sql import tpch_solution

    params = [
        (t.id, build_case(500 + i, template=t.id, tpch_scale=sf)["params"]) for i, t in enumerate(of_level(7))
    ]
    rows = []
    for kind in stores:
        queries = [(template, tpch_solution(template, p, dialect_of(kind))) for template, p in params]
        store: Any = open_store(kind, DataSpec(0, 0, tpch=sf))
        backend = getattr(store, "_clock", None)  # postgres: the server process serving the store
        # chDB's budgets are rows and memory, counted by the engine; its seconds are a safety net
        budget = (
            None if kind == "chdb" else getattr(store, "seconds", None) or store.guard.budget.max_cpu_seconds
        )
        for template, sql in queries:
            if sql is None:
                continue
            cpu = backend.cpu() if backend else time.process_time()
            try:
                store.run(sql)
                outcome = "answered"
            except Exception as exc:  # a refusal or a failure, recorded as the store worded it
                outcome = f"{type(exc).__name__}: {exc}"[:90]
            spent = (backend.cpu() if backend else time.process_time()) - cpu
            guard = getattr(store, "guard", None)
            rows.append(
                {
                    "store": kind,
                    "template": template,
                    "cpu_seconds": round(spent, 2),
                    "budget_seconds": budget,
                    "vm_steps": guard._steps if guard is not None else None,
                    "outcome": outcome,
                }
            )
            print(f"[tpch] {kind} {template}: {spent:.2f} s {outcome}", file=sys.stderr)
        store.close()
    return rows


def costs_markdown(sf: float, rows: list[dict[str, Any]]) -> str:
    lines = [
        f"### careful's SQL alone at TPC-H SF {sf:g}, once in each store (`python benchmarks/analyst_tpch.py --queries`)",
        "",
        "| store | question | CPU seconds | CPU budget | SQLite VM steps | outcome |",
        "|---|---|---:|---:|---:|---|",
    ]
    lines += [
        f"| {r['store']} | {r['template']} | {r['cpu_seconds']:.2f} | "
        f"{'-' if r['budget_seconds'] is None else format(r['budget_seconds'], 'g')} | "
        f"{'-' if r['vm_steps'] is None else format(r['vm_steps'], ',')} | {r['outcome']} |"
        for r in rows
    ]
    lines += [
        "",
        "chDB's budgets are counted by the engine in rows and bytes, not CPU seconds (its memory "
        "budget is in the outcome when it stops a query).",
    ]
    return "\n".join(lines)


def write(result: dict[str, Any], out: Path, name: str) -> str:
    """The result so far as ``name``.json and ``name``.md under ``out``; returns the markdown."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    text = markdown(result)
    (out / f"{name}.md").write_text(text + "\n", encoding="utf-8")
    return text


def _copy_state(row: dict[str, Any]) -> str:
    """A build step's copy: found in the cache (its seconds are of finding it), built, or none."""
    if "found" not in row:  # a row of a run recorded before copies were told apart
        return ""
    if row["found"] is None:
        return "-"
    return "found in the cache" if row["found"] else "built"


def _found_note(rows: list[dict[str, Any]]) -> str:
    found = [r["step"] for r in rows if r.get("found")]
    if not found:
        return ""
    return f" {len(found)} of the copies were in the cache before this run (--cache): their times are of finding them."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--stores", default="postgres,sqlite,files,duckdb,lake,chdb,iceberg")
    parser.add_argument("--cache", default="", help="build into and reuse this folder")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    parser.add_argument("--name", default="analyst_tpch")
    parser.add_argument(
        "--queries", action="store_true", help="careful's SQL alone, once a store (NAME_queries)"
    )
    args = parser.parse_args(argv)
    cache = args.cache or tempfile.mkdtemp(prefix="batchgate-tpch-bench-")
    os.environ["BATCHGATE_ANALYST_CACHE"] = cache  # fresh unless --cache: every copy is built, not found
    result: dict[str, Any] = {
        "sf": args.sf,
        "episodes": [],
        "load_before": load_average(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    if args.queries:
        rows = query_costs(args.sf, args.stores.split(","))
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{args.name}_queries.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
        text = costs_markdown(args.sf, rows)
        (out / f"{args.name}_queries.md").write_text(text + "\n", encoding="utf-8")
        print(text)
        return 0
    try:
        _spec, result["build"] = build(args.sf, args.stores.split(","))
        planned = cases(args.sf, args.stores.split(","))  # store by store: a stopped run has whole stores
        result["planned"] = len(planned)
        for case, reference_seconds in planned:
            row = play(case)
            row["reference_seconds"] = reference_seconds
            result["episodes"].append(row)
            result.update(peak=peak_mb(), load_after=load_average())
            write(result, Path(args.out), args.name)  # after every episode: a stopped run keeps its rows
            print(f"[tpch] {row['case_id']}: {row['reward']} in {row['episode_seconds']} s", file=sys.stderr)
    finally:
        if not args.cache:
            shutil.rmtree(cache, ignore_errors=True)
    print(write(result, Path(args.out), args.name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
