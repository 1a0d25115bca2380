"""benchmarks/analyst_tpch.py's table says, copy by copy, which it found in the cache and
which it built (a run over a cache that held some copies once said all were found)."""

from __future__ import annotations

from benchmark_scripts import load_script


def _row(step: str, found: bool | None) -> dict:
    return {"step": step, "seconds": 1.0, "found": found, "self_mb": 10.0, "child_mb": 0.0}


def test_each_copy_is_told_found_or_built() -> None:
    script = load_script("analyst_tpch")
    build = [
        _row("canonical Parquet (tpchgen-cli)", True),
        _row("typed tables in polars", None),
        {**_row("SQLite database file", False), "bytes": 2**20, "lineitem_rows": 60_175},
    ]
    result = {
        "sf": 0.01,
        "build": build,
        "episodes": [],
        "load_before": [1.0, 1.0, 1.0],
        "load_after": [1.0, 1.0, 1.0],
        "peak": {"self_mb": 10.0, "child_mb": 0.0},
        "machine": {"cpus": 2},
    }
    text = script.markdown(result)
    assert "| canonical Parquet (tpchgen-cli) | 1.00 | 10 | 0 | found in the cache |" in text
    assert "| typed tables in polars | 1.00 | 10 | 0 | - |" in text
    assert "| SQLite database file | 1.00 | 10 | 0 | built |" in text
    assert "1 of the copies were in the cache before this run" in text
    nothing_found = script.markdown(
        {**result, "build": [{**r, "found": r["found"] and False} for r in build]}
    )
    assert "in the cache before this run" not in nothing_found
