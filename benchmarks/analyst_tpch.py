"""AnalystDesk level 7 at scale: writes benchmarks/results/analyst_tpch.json and analyst_tpch.md.

Builds TPC-H at a scale factor (1 by default) from nothing, in a fresh cache
directory, and times each copy the stores read (the generator's Parquet and CSV,
the typed tables, the DuckDB file, the SQLite image); then plays careful on every
level-7 question in every store under the stores' usual budgets (2 s and 128 MB a
DuckDB query, 20 million VM steps and 2 s a SQLite one) and records its reward, the
episode's wall time and, when a store stops careful's query, why. Peak memory is
this process's (and, apart, the largest child's: the generator) resident set. The
machine's load averages before and after are recorded, since the figures are wall
times on a shared machine.

    python benchmarks/analyst_tpch.py [--sf 1] [--stores sqlite,duckdb,lake,files] [--out benchmarks/results]
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


def build(sf: float) -> tuple[Any, list[dict[str, Any]]]:
    from batchgate_gym.desks.analyst.canonical import dataset_dir, tables_of
    from batchgate_gym.desks.analyst.market import DataSpec
    from batchgate_gym.desks.analyst.stores import sqlite_image_of

    spec = DataSpec(0, 0, tpch=sf)
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("canonical Parquet (tpchgen-cli)", lambda: dataset_dir(spec, "canonical")),
        ("lake Parquet (tpchgen-cli)", lambda: dataset_dir(spec, "lake")),
        ("raw CSV files (tpchgen-cli)", lambda: dataset_dir(spec, "files")),
        ("typed tables in polars", lambda: tables_of(spec)),
        ("DuckDB database file", lambda: dataset_dir(spec, "duckdb")),
        ("SQLite image (serialized)", lambda: len(sqlite_image_of(spec))),
    ]
    rows = []
    for name, step in steps:
        value, seconds = timed(step)
        row = {"step": name, "seconds": seconds, **peak_mb()}
        if isinstance(value, int):
            row["bytes"] = value
        rows.append(row)
        print(f"[tpch] {name}: {seconds} s", file=sys.stderr)
    rows[-1]["lineitem_rows"] = tables_of(spec)["lineitem"].height
    return spec, rows


def cases(sf: float, stores: list[str]) -> list[Any]:
    from batchgate_gym.desks.analyst.cases import case_from_dict
    from batchgate_gym.desks.analyst.generator import build_case
    from batchgate_gym.desks.analyst.questions import of_level

    out = []
    for index, template in enumerate(of_level(7)):
        base, seconds = timed(lambda t=template, i=index: build_case(500 + i, template=t.id, tpch_scale=sf))
        for store in stores:
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
        "| build step | seconds | peak RSS MB (this process) | peak RSS MB (largest child) |",
        "|---|---:|---:|---:|",
    ]
    lines += [
        f"| {r['step']} | {r['seconds']:.2f} | {r['self_mb']:.0f} | {r['child_mb']:.0f} |"
        for r in result["build"]
    ]
    lines += [
        "",
        f"lineitem rows: {result['build'][-1]['lineitem_rows']:,}; SQLite image: "
        f"{result['build'][-1]['bytes'] / 2**20:.0f} MB.",
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
    lines += ["", "| store | careful mean reward |", "|---|---:|"]
    lines += [f"| {s} | {sum(v) / len(v):.4f} |" for s, v in per_store.items()]
    before, after = result["load_before"], result["load_after"]
    lines += [
        "",
        f"Peak RSS of the whole run: {result['peak']['self_mb']:.0f} MB (this process), "
        f"{result['peak']['child_mb']:.0f} MB (largest child). Wall times on {result['machine']['cpus']} CPUs; "
        f"load average (1 min) {before[0] if before else 'n/a'} before and {after[0] if after else 'n/a'} after "
        f"(the machine is shared; figures move with its load).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--stores", default="sqlite,duckdb,lake,files")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    parser.add_argument("--name", default="analyst_tpch")
    args = parser.parse_args(argv)
    cache = tempfile.mkdtemp(prefix="batchgate-tpch-bench-")
    os.environ["BATCHGATE_ANALYST_CACHE"] = cache  # a fresh cache: every copy is built, not found
    try:
        before = load_average()
        _spec, built = build(args.sf)
        episodes = []
        for case, reference_seconds in cases(args.sf, args.stores.split(",")):
            row = play(case)
            row["reference_seconds"] = reference_seconds
            episodes.append(row)
            print(f"[tpch] {row['case_id']}: {row['reward']} in {row['episode_seconds']} s", file=sys.stderr)
        result = {
            "sf": args.sf,
            "build": built,
            "episodes": episodes,
            "peak": peak_mb(),
            "load_before": before,
            "load_after": load_average(),
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        }
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.name}.json").write_text(
        json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    text = markdown(result)
    (out / f"{args.name}.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
