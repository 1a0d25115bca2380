"""The dataset as Apache Iceberg tables: written by pyiceberg into a SQL catalog (SQLite) and a
local warehouse, and read back as the data files pyiceberg's scan plans.

Iceberg's metadata names every file by its absolute location, so its tables cannot be written
in a scratch folder and renamed into place as the other copies are. The copy's own folder
(``iceberg/``, renamed into place once whole) holds one file, ``location``, naming the folder the
catalog and the warehouse were written into (``iceberg-tables-<random>`` beside it, never
moved): two processes building at once each write a whole set, and the one whose ``iceberg/``
lands first is the one every process reads.

Without the ``analyst-iceberg`` extra (pyiceberg with its SQL catalog) nothing here can run,
and the error says which extra to install.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

EXTRA = "analyst-iceberg"
NAMESPACE = "analyst"
FILE = "file://"
LOCATION = "location"  # the file in the copy's folder naming the catalog's folder


def _catalog(home: Path) -> Any:
    """The SQL catalog (a SQLite file in ``home``) whose warehouse is ``home``'s ``warehouse/``."""
    # the warehouse as a plain file:// location, not a percent-encoded URI: pyiceberg writes its
    # files at the location as spelt (a dataset's key has '+' and '@', which encoding would change)
    return _catalog_class()(
        NAMESPACE, uri=f"sqlite:///{home / 'catalog.db'}", warehouse=f"{FILE}{home / 'warehouse'}"
    )


def _catalog_class() -> Any:
    try:
        from pyiceberg.catalog.sql import SqlCatalog
    except ImportError:
        raise ImportError(
            f"the iceberg store needs the optional '{EXTRA}' extra: pip install 'batchgate-gym[{EXTRA}]'"
        ) from None
    return SqlCatalog


def write_tables(
    tables: Mapping[str, pl.DataFrame], names: tuple[str, ...], csv: tuple[str, ...], into: Path
) -> None:
    """Each of ``names`` as an Iceberg table (one append, one snapshot) in a new catalog beside
    ``into``, and ``into/location`` naming it (``csv`` is the other copies' concern)."""
    _catalog_class()  # the extra is there before anything is written
    home = into.parent / f"iceberg-tables-{uuid.uuid4().hex}"
    home.mkdir()
    catalog = _catalog(home)
    catalog.create_namespace(NAMESPACE)
    for name in names:
        arrow = tables[name].to_arrow()
        catalog.create_table(f"{NAMESPACE}.{name}", schema=arrow.schema).append(arrow)
    (into / LOCATION).write_text(str(home), encoding="utf-8")


def catalog_home(folder: Path) -> Path:
    """The folder of the catalog and warehouse the copy in ``folder`` names."""
    return Path((folder / LOCATION).read_text(encoding="utf-8"))


def _local_path(location: str) -> Path:
    if not location.startswith(FILE):
        raise ValueError(f"an iceberg data file outside the local warehouse: {location}")
    return Path(location.removeprefix(FILE))


def planned_files(folder: Path, names: tuple[str, ...]) -> dict[str, list[Path]]:
    """The data files pyiceberg's scan of each table's current snapshot plans, in its order.

    The tables are written by one append each, so no scan carries a delete file; one that
    did could not be read as plain Parquet, and is an error here."""
    catalog = _catalog(catalog_home(folder))
    planned = {}
    for name in names:
        tasks = list(catalog.load_table(f"{NAMESPACE}.{name}").scan().plan_files())
        if any(task.delete_files for task in tasks):
            raise ValueError(f"iceberg table {name} has delete files, which this store does not read")
        planned[name] = [_local_path(task.file.file_path) for task in tasks]
    return planned


__all__ = ["EXTRA", "catalog_home", "planned_files", "write_tables"]
