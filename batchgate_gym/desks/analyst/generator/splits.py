"""The fixed splits, rebuilt byte for byte from seeds: eval, train (levels 1 to 6) and tpch (level 7).

Eval asks each template once in each store it runs in (the four stores; level 4 in
``sqlite`` + ``lake``, twice), over three shared datasets (level 6 over two
snapshots), at the default scale: 60 cases, so a policy's score per store compares
the same questions. Train asks each template five times per store (level 4 twenty
times) over eight datasets: 320 cases. The tpch split asks each level-7 template
once in each store over TPC-H at scale factor 0.01: 28 cases (kept apart, so the
eval and train splits and every number measured on them stay what they were).
The chdb split asks, in the optional ``chdb`` store, exactly the questions the eval
and tpch splits ask in ``duckdb`` (same seeds, same datasets; level 4 has no chdb
case): 21 cases, so chDB's scores compare one to one with DuckDB's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from batchgate_gym.kernel.case_files import write_jsonl

from ..cases import dumps_case
from ..questions import TEMPLATES
from ..stores import STORES
from .build import DEFAULT_SCALE, TPCH_LEVEL, build_case

SPLITS = ("eval", "train", "tpch", "chdb")
EVAL_SEED = 71_261_001
TRAIN_SEED = 81_261_001
TPCH_SEED = 91_261_001
SPLIT_PLAN = {
    "eval": (EVAL_SEED, 1, 3, 2),
    "train": (TRAIN_SEED, 5, 8, 8),
    "tpch": (TPCH_SEED, 1, 1, 1),
}  # seed, per store, datasets, L6 datasets


def split_path(name: str) -> Path:
    _check(name)
    return Path(__file__).resolve().parent.parent / "data" / f"{name}.jsonl"


def build_split(name: str) -> list[dict[str, Any]]:
    _check(name)
    if name == "chdb":
        return _chdb_split()
    base, per_store, datasets, snapshots = SPLIT_PLAN[name]
    cases = []
    for t_index, template in enumerate(TEMPLATES):
        if (template.level == TPCH_LEVEL) != (name == "tpch"):
            continue
        cross = template.level == 4
        stores = ("sqlite+lake",) if cross else STORES
        count = per_store * (2 if name == "eval" else 4) if cross else per_store
        for s_index, store in enumerate(stores):
            for k in range(count):
                pool = snapshots if template.level == 6 else datasets
                cases.append(
                    build_case(
                        base + 1000 * t_index + 100 * s_index + k,
                        template=template.id,
                        store=None if cross else store,
                        scale=DEFAULT_SCALE,
                        data_seed=base + (k + s_index + t_index) % pool,
                        case_id=f"{name}-{template.id}-{store}-{k}",
                        split=name,
                    )
                )
    return cases


def _chdb_split() -> list[dict[str, Any]]:
    """The duckdb cases of eval and tpch, rebuilt from their own seeds with the store set to chdb."""
    cases = []
    s_index = STORES.index("duckdb")
    for t_index, template in enumerate(TEMPLATES):
        if template.level == 4:
            continue
        plan = "tpch" if template.level == TPCH_LEVEL else "eval"
        base, _, datasets, snapshots = SPLIT_PLAN[plan]
        pool = snapshots if template.level == 6 else datasets
        cases.append(
            build_case(
                base + 1000 * t_index + 100 * s_index,
                template=template.id,
                store="chdb",
                scale=DEFAULT_SCALE,
                data_seed=base + (s_index + t_index) % pool,
                case_id=f"chdb-{template.id}-chdb-0",
                split="chdb",
            )
        )
    return cases


def write_split(name: str, path: str | Path | None = None) -> Path:
    target = Path(path) if path is not None else split_path(name)
    return write_jsonl(target, (dumps_case(case) for case in build_split(name)))


def _check(name: str) -> None:
    if name not in SPLITS:
        raise ValueError(f"unknown split {name!r}; expected one of {', '.join(SPLITS)}")


__all__ = ["SPLITS", "build_split", "split_path", "write_split"]
