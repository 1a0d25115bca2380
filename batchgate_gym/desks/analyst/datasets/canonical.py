"""Where a dataset lives on disk: the canonical Parquet (the oracle's) and the agent's copies.

A dataset is a function of its :class:`~.market.DataSpec`, so its files are built
once per machine into a cache directory (``BATCHGATE_ANALYST_CACHE``, else a folder
under the system's temporary directory) and shared by every environment and
process. Each kind of copy is written into a fresh directory and renamed into
place, so two processes building the same dataset never see half a copy.

* ``canonical/``: typed Parquet, one file a table; the references read only this;
* ``lake/``: the agent's Parquet copy (same logical rows, separate files);
* ``files/``: raw files, ``orders``, ``order_items`` and ``payments`` as CSV, the
  rest as newline-delimited JSON;
* ``duckdb/store.duckdb``: a DuckDB database holding the tables;
* ``sqlite/store.sqlite``: a SQLite database file holding the tables (TPC-H's only:
  a marketplace dataset is small enough to serve as an image in memory);
* ``iceberg/``: Apache Iceberg tables in a SQL catalog (:mod:`.iceberg`), written by pyiceberg
  from the typed tables.

A TPC-H dataset (level 7) is written by its generator (:mod:`.tpch`): the
canonical and lake Parquet and the raw CSV files (every table) come from it, the
DuckDB database, the SQLite file and the Iceberg tables from its typed tables.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl

from batchgate_gym.kernel import sqlite_image

from . import iceberg, tpch
from .market import TABLES, DataSpec, generate

CSV_TABLES = ("orders", "order_items", "payments")
KINDS = ("canonical", "lake", "files", "duckdb", "sqlite", "iceberg")
INSERT_ROWS = 200_000  # rows handed to a database at a time: bounded Python rows at TPC-H's scale
SQLITE_TYPES = {pl.String: "TEXT", pl.Int64: "INTEGER", pl.Float64: "REAL", pl.Date: "TEXT"}


def table_names(spec: DataSpec) -> tuple[str, ...]:
    """The tables of ``spec``'s dataset: the marketplace's seven or TPC-H's eight."""
    return tpch.TPCH_TABLES if spec.tpch is not None else TABLES


def csv_tables(spec: DataSpec) -> tuple[str, ...]:
    """The tables the ``files`` store reads as CSV (the rest are newline-delimited JSON)."""
    return tpch.TPCH_TABLES if spec.tpch is not None else CSV_TABLES


def cache_root() -> Path:
    configured = os.environ.get("BATCHGATE_ANALYST_CACHE")
    if configured:
        return Path(configured)
    return Path(tempfile.gettempdir()) / f"batchgate-analyst-{os.getuid() if hasattr(os, 'getuid') else 0}"


@functools.lru_cache(maxsize=8)
def tables_of(spec: DataSpec) -> dict[str, pl.DataFrame]:
    """The dataset's tables, generated once per process (the few most recent kept); TPC-H's typed."""
    if spec.tpch is not None and spec.shuffle is not None:
        return tpch.shuffled(tables_of(replace(spec, shuffle=None)), spec.shuffle)
    if spec.tpch is not None:
        folder = dataset_dir(spec, "canonical")
        return {name: tpch.typed(pl.read_parquet(folder / f"{name}.parquet")) for name in tpch.TPCH_TABLES}
    return generate(spec)


def dataset_dir(spec: DataSpec, kind: str) -> Path:
    """The directory of one kind of copy of ``spec``'s dataset, built if missing."""
    if kind not in KINDS:
        raise ValueError(f"unknown copy {kind!r}")
    target = _copy_path(spec, kind)
    if not target.is_dir():
        _build_atomically(target, _writer(spec, kind))
    return target


def _copy_path(spec: DataSpec, kind: str) -> Path:
    return cache_root() / spec.key() / kind


def _writer(spec: DataSpec, kind: str) -> Callable[[Path], None]:
    if spec.tpch is None or spec.shuffle is not None:
        return functools.partial(_WRITERS[kind], tables_of(spec), table_names(spec), csv_tables(spec))
    if kind in ("canonical", "lake"):
        return functools.partial(tpch.generate, spec.tpch, "parquet")
    if kind == "files":
        return functools.partial(tpch.generate, spec.tpch, "csv")
    return functools.partial(_WRITERS[kind], tables_of(spec), tpch.TPCH_TABLES, ())


def _build_atomically(target: Path, write: Callable[[Path], None]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.parent / f".{target.name}.{uuid.uuid4().hex}"
    scratch.mkdir()
    try:
        write(scratch)
        try:
            scratch.rename(target)
        except OSError:
            if not target.is_dir():  # another process got there first, or a real failure
                raise
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)


def _write_parquet(
    tables: dict[str, pl.DataFrame], names: tuple[str, ...], csv: tuple[str, ...], into: Path
) -> None:
    for name in names:
        tables[name].write_parquet(into / f"{name}.parquet")


def _write_canonical(
    tables: dict[str, pl.DataFrame], names: tuple[str, ...], csv: tuple[str, ...], into: Path
) -> None:
    """The canonical copy: this machine's cache of the generated tables, read back whole by
    polars alone, so LZ4 (the fastest codec polars writes) and no column statistics (a
    whole read uses none); the agent's ``lake/`` copy keeps polars' defaults."""
    for name in names:
        tables[name].write_parquet(into / f"{name}.parquet", compression="lz4", statistics=False)


def _write_files(
    tables: dict[str, pl.DataFrame], names: tuple[str, ...], csv: tuple[str, ...], into: Path
) -> None:
    for name in names:
        frame = tables[name]
        if name in csv:
            frame.write_csv(into / f"{name}.csv", null_value="")
        else:
            frame.write_ndjson(into / f"{name}.json")


def quiet(con: Any) -> Any:
    """``con`` without DuckDB's progress bar, which the Python client switches on for a new
    database: drawn on the process's stdout for any statement past two seconds of wall clock,
    it would put output that depends on the machine's load into the caller's stream. A second
    opening of a database file the process already locked down cannot change it, and needs
    not: the stores query through cursors, whose bar is off. Returns ``con``."""
    if not con.execute("SELECT current_setting('lock_configuration')").fetchone()[0]:
        con.execute("SET enable_progress_bar = false")
    return con


def _write_duckdb(
    tables: dict[str, pl.DataFrame], names: tuple[str, ...], csv: tuple[str, ...], into: Path
) -> None:
    import duckdb

    con = quiet(duckdb.connect(str(into / "store.duckdb")))
    try:
        for name in names:
            arrow = tables[name].to_arrow()  # noqa: F841 - named in the statement below
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM arrow")
        con.execute("CHECKPOINT")
    finally:
        con.close()


def fill_sqlite(conn: Any, tables: dict[str, pl.DataFrame], names: tuple[str, ...]) -> None:
    """Create and fill ``names`` in the SQLite connection, in one transaction; dates as
    ``YYYY-MM-DD`` text. A TPC-H table's single-column key is its ``INTEGER PRIMARY KEY``
    (the row id), so a join on it is a lookup, as in the benchmark's own schema."""
    with sqlite_image.transaction(conn):
        for name in names:
            frame = tables[name]
            key = tpch.ROW_KEYS.get(name)  # a marketplace table has no such column
            cols = [
                f"{c} {SQLITE_TYPES[t.base_type()]}{' PRIMARY KEY' if c == key else ''}"
                for c, t in frame.schema.items()
            ]
            conn.execute(f"CREATE TABLE {name} ({', '.join(cols)})")
            insert = f"INSERT INTO {name} VALUES ({', '.join('?' * len(cols))})"
            for part in frame.iter_slices(INSERT_ROWS):
                conn.executemany(insert, part.with_columns(pl.col(pl.Date).dt.strftime("%Y-%m-%d")).rows())


def _write_sqlite(
    tables: dict[str, pl.DataFrame], names: tuple[str, ...], csv: tuple[str, ...], into: Path
) -> None:
    import sqlite3

    conn = sqlite3.connect(str(into / "store.sqlite"), isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=OFF")  # a new file, renamed into place once whole
        fill_sqlite(conn, tables, names)
    finally:
        conn.close()


_WRITERS: dict[str, Callable[[dict[str, pl.DataFrame], tuple[str, ...], tuple[str, ...], Path], None]] = {
    "canonical": _write_canonical,
    "lake": _write_parquet,
    "files": _write_files,
    "duckdb": _write_duckdb,
    "sqlite": _write_sqlite,
    "iceberg": iceberg.write_tables,
}


def canonical_tables(spec: DataSpec) -> dict[str, pl.DataFrame]:
    """The canonical copy, read back from its Parquet files (what the references use); the last few
    read are kept, so the questions asked over one dataset read it once."""
    return dict(_canonical(spec))


@functools.lru_cache(maxsize=4)
def _canonical(spec: DataSpec) -> dict[str, pl.DataFrame]:
    built_here = spec.tpch is None and not _copy_path(spec, "canonical").is_dir()
    folder = dataset_dir(spec, "canonical")
    if built_here:
        # Written just now from the generated tables: those are the files' rows and types
        # (Parquet keeps every marketplace type), so reading them back would give these.
        tables = tables_of(spec)
        return {name: tables[name] for name in table_names(spec)}
    return {name: pl.read_parquet(folder / f"{name}.parquet") for name in table_names(spec)}


__all__ = [
    "CSV_TABLES",
    "KINDS",
    "cache_root",
    "canonical_tables",
    "csv_tables",
    "dataset_dir",
    "fill_sqlite",
    "table_names",
    "tables_of",
]
