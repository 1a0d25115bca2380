"""Level 7's data: TPC-H, generated on this machine by the ``tpchgen-cli`` package.

The generator is a compiled program shipped in a wheel (the ``analyst`` extra
installs it), so nothing is downloaded at run time: DuckDB's own TPC-H extension
is not in its wheel, and the stores switch extension installs off anyway. The
rows are a function of the scale factor alone (the generator is deterministic),
so a dataset is named by it. The generator writes the canonical Parquet (what the
references read) and the raw CSV files (what the ``files`` store reads);
:func:`typed` gives the engines' copies plain types (decimals as floats, every
integer 64-bit), the ones the marketplace's tables use.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl

TPCH_TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")
# Each table's single-column key (lineitem and partsupp have two-column keys, so none):
# unique, and the column the benchmark's joins look rows up by.
ROW_KEYS = {
    "region": "r_regionkey",
    "nation": "n_nationkey",
    "supplier": "s_suppkey",
    "customer": "c_custkey",
    "part": "p_partkey",
    "orders": "o_orderkey",
}
MIN_SF, MAX_SF = 0.001, 10.0
DEFAULT_SF = 0.01
GENERATOR = "tpchgen-cli"


class GeneratorMissing(RuntimeError):
    """``tpchgen-cli`` is not installed (``pip install 'batchgate-gym[analyst]'``)."""


def check_sf(sf: object) -> float:
    if not isinstance(sf, (int, float)) or isinstance(sf, bool) or not MIN_SF <= float(sf) <= MAX_SF:
        raise ValueError(f"a TPC-H scale factor is a number in {MIN_SF:g}..{MAX_SF:g}, not {sf!r}")
    return float(sf)


def generator() -> str:
    """The generator's path: beside this Python (a venv not activated), else on ``PATH``."""
    beside = Path(sys.executable).parent / GENERATOR
    found = str(beside) if beside.is_file() else shutil.which(GENERATOR)
    if found is None:
        raise GeneratorMissing(f"{GENERATOR} is not installed; pip install {GENERATOR}")
    return found


def generate(sf: float, fmt: str, into: Path) -> None:
    """Write every TPC-H table at ``sf`` into ``into`` as ``fmt`` (``parquet`` or ``csv``), one file each."""
    if fmt not in ("parquet", "csv"):
        raise ValueError(f"unknown format {fmt!r}")
    command = [generator(), fmt, "-s", f"{check_sf(sf):g}", "--output-dir", str(into)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{GENERATOR} failed ({done.returncode}): {done.stderr.strip()[:300]}")
    missing = [t for t in TPCH_TABLES if not (into / f"{t}.{fmt}").is_file()]
    if missing:
        raise RuntimeError(f"{GENERATOR} wrote no {', '.join(missing)}")


def shuffled(tables: dict[str, pl.DataFrame], seed: int) -> dict[str, pl.DataFrame]:
    """The same rows with each column but the keys (``*key``, ``l_linenumber``) shuffled among them.

    Every value and every join stays as the generator made it; which values sit
    together is drawn anew, so every question's answer is too.
    """
    rng = np.random.default_rng([seed & (2**63 - 1), 7])
    out = {}
    for name in TPCH_TABLES:
        frame = tables[name]
        kept = [c for c in frame.columns if c.endswith("key") or c == "l_linenumber"]
        moved = [frame[c].gather(rng.permutation(frame.height)) for c in frame.columns if c not in kept]
        out[name] = frame.with_columns(moved).select(frame.columns)
    return out


def typed(frame: pl.DataFrame) -> pl.DataFrame:
    """The engines' types: decimals as 64-bit floats, every integer 64-bit."""
    return frame.with_columns(
        pl.col(pl.Decimal).cast(pl.Float64),
        pl.col(pl.Int32, pl.Int16, pl.Int8).cast(pl.Int64),
    )


__all__ = [
    "DEFAULT_SF",
    "MAX_SF",
    "MIN_SF",
    "ROW_KEYS",
    "TPCH_TABLES",
    "GeneratorMissing",
    "check_sf",
    "generate",
    "shuffled",
    "typed",
]
