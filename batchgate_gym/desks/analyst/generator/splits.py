"""The fixed splits, rebuilt byte for byte from seeds: eval (every level), train (levels 1 to 6), tpch, chdb, postgres and iceberg.

Eval asks each template once in each store it runs in (the four stores; level 4 in
``sqlite`` + ``lake``, twice), over three shared datasets (level 6 over two
snapshots) at the default scale, and each level-7 template once in each store over
TPC-H at scale factor 0.01 (the very cases of the tpch split, same seeds): 108
cases, so a policy's score per store compares the same questions. Train asks each
template of levels 1 to 6 five times per store (level 4 twenty times) over eight
datasets: 420 cases. The tpch split is eval's level 7 on its own (each level-7
template once in each store: 28 cases). The chdb split asks, in the optional
``chdb`` store, exactly the questions eval asks in ``duckdb`` (same seeds, same
datasets; level 4 has no chdb case): 26 cases, so chDB's scores compare one to one
with DuckDB's. The postgres split asks the same questions in the ``postgres`` store
(a PostgreSQL server the desk starts), and eval's level 4 as the seed asks it, orders
in ``postgres`` and the catalog in ``sqlite`` (eval's own level-4 cases, same seeds,
same questions): 30 cases. The iceberg split asks eval's duckdb questions in the ``iceberg``
store (Iceberg tables read through DuckDB; level 4 has no iceberg case): 26 cases.

``holdout`` is ours, never trained on: eval is the original's reproduction row. It is
drawn from seed 51,261,001 and planned so that each of careful's checks decides at least
two of its cases (careful without the check scores below careful there), every level and
every default store among them: each entry of :data:`HOLDOUT_PLAN` names a template, a
store, a scale and the draws ``k`` it takes (case seed ``HOLDOUT_SEED + 1000 t + 100 s + k``
for the template's place ``t`` and the store's ``s``, its dataset's ``HOLDOUT_SEED + 7 t +
k`` whatever the store). The level-4 cases at scale 12,000 are the ones whose catalog
answers in more than one page. 24 cases, played with every ablation, attacker and grader
mutation by ``batchgate audit --desk analyst``.

A case's seed follows its template's place in ``TEMPLATES``, which is why templates
added later go at its end: every case made before stays what it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from batchgate_gym.kernel.case_files import check_split, write_jsonl

from ..cases import dumps_case
from ..engines.stores import STORES
from ..questions.market_questions import CROSS_PAIRS, TEMPLATES, Template
from .build import DEFAULT_SCALE, TPCH_LEVEL, build_case

SPLITS = ("eval", "train", "tpch", "chdb", "postgres", "holdout", "iceberg")
ONE_STORE_SPLITS = ("chdb", "postgres", "iceberg")  # eval's duckdb questions, asked in one other store
SEED_PAIR = CROSS_PAIRS[1]  # level 4 as the seed asks it: orders in postgres, catalog in sqlite
EVAL_SEED = 71_261_001
TRAIN_SEED = 81_261_001
TPCH_SEED = 91_261_001
HOLDOUT_SEED = 51_261_001
BIG_CATALOG = 12_000  # a level-4 scale whose catalog holds more than one page of a category's ids
HOLDOUT_PLAN: tuple[tuple[str, str, int, tuple[int, ...]], ...] = (
    # template, store, scale, draws k; the checks that decide the entry's cases in a comment
    ("count-status", "lake", DEFAULT_SCALE, (0,)),  # test-orders
    ("top-sellers", "sqlite", DEFAULT_SCALE, (0,)),  # test-orders, on a table
    ("late-share", "sqlite", DEFAULT_SCALE, (0, 1)),  # undated-deliveries, test-orders
    ("month-report", "sqlite", DEFAULT_SCALE, (0, 1)),  # store-dialect, repeated-reviews
    ("delivery-change", "sqlite", DEFAULT_SCALE, (0, 1)),  # store-dialect
    ("category-revenue", "sqlite+lake", BIG_CATALOG, (0, 2)),  # catalog-pages
    ("category-revenue", "sqlite+lake", DEFAULT_SCALE, (0, 1)),  # test-orders, across two stores
    ("seller-state-items", "sqlite+lake", DEFAULT_SCALE, (0, 2)),  # test-orders
    ("profit", "sqlite", DEFAULT_SCALE, (0,)),  # decline-costs
    ("category-profit-share", "sqlite", DEFAULT_SCALE, (0,)),  # decline-costs
    ("month-margin-report", "sqlite", DEFAULT_SCALE, (0,)),  # decline-costs
    ("tpch-shipping-expense", "sqlite", DEFAULT_SCALE, (0, 1)),  # decline-costs, at level 7
    ("profit", "files", DEFAULT_SCALE, (1,)),  # decline-costs
    ("causal", "duckdb", DEFAULT_SCALE, (0, 1)),  # decline-causes
    ("market-share", "lake", DEFAULT_SCALE, (0,)),  # decline-outside-facts
    ("avg-interest", "files", DEFAULT_SCALE, (0,)),  # decline-outside-facts
)
"""The holdout's cases. Answers in the files and DuckDB stores cost the most to audit (their
queries read files, and every attacker's evidence is re-run on two copies), so those stores
are held by the questions to decline; sqlite and the lake by answers."""
SPLIT_PLAN = {
    "eval": (EVAL_SEED, 1, 3, 2),
    "train": (TRAIN_SEED, 5, 8, 8),
    "tpch": (TPCH_SEED, 1, 1, 1),
}  # seed, per store, datasets, L6 datasets


def split_path(name: str) -> Path:
    check_split(name, SPLITS)
    return Path(__file__).resolve().parent.parent / "data" / f"{name}.jsonl"


def _plan(name: str, template: Template) -> tuple[int, int, int, int] | None:
    """The seed plan a split draws ``template``'s cases from, or ``None`` if the split leaves it out."""
    if template.level == TPCH_LEVEL:
        return SPLIT_PLAN["tpch"] if name in ("eval", "tpch") else None
    return None if name == "tpch" else SPLIT_PLAN[name]


def build_split(name: str) -> list[dict[str, Any]]:
    check_split(name, SPLITS)
    if name in ONE_STORE_SPLITS:
        return _one_store_split(name)
    if name == "holdout":
        return _holdout()
    cases = []
    for t_index, template in enumerate(TEMPLATES):
        plan = _plan(name, template)
        if plan is None:
            continue
        base, per_store, datasets, snapshots = plan
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


def _holdout() -> list[dict[str, Any]]:
    """The cases of :data:`HOLDOUT_PLAN`, in its order."""
    places = {t.id: index for index, t in enumerate(TEMPLATES)}
    cases = []
    for template, store, scale, draws in HOLDOUT_PLAN:
        t_index = places[template]
        s_index = STORES.index(store) if store in STORES else 0
        for k in draws:
            cases.append(
                build_case(
                    HOLDOUT_SEED + 1000 * t_index + 100 * s_index + k,
                    template=template,
                    store=store,
                    scale=scale,
                    data_seed=HOLDOUT_SEED + 7 * t_index + k,
                    case_id=f"holdout-{template}-{store}-{k}" + ("-big" if scale != DEFAULT_SCALE else ""),
                    split="holdout",
                )
            )
    return cases


def _one_store_split(store: str) -> list[dict[str, Any]]:
    """The duckdb cases of eval, rebuilt from their own seeds with the store set to ``store``; in
    the postgres split also eval's level-4 cases, asked as the seed asks them (``postgres+sqlite``)."""
    cases = []
    s_index = STORES.index("duckdb")
    for t_index, template in enumerate(TEMPLATES):
        plan = _plan("eval", template)
        if plan is None:
            continue
        if template.level == 4:
            cases += _cross_cases(store, t_index, template) if store == "postgres" else []
            continue
        base, _, datasets, snapshots = plan
        pool = snapshots if template.level == 6 else datasets
        cases.append(
            build_case(
                base + 1000 * t_index + 100 * s_index,
                template=template.id,
                store=store,
                scale=DEFAULT_SCALE,
                data_seed=base + (s_index + t_index) % pool,
                case_id=f"{store}-{template.id}-{store}-0",
                split=store,
            )
        )
    return cases


def _cross_cases(split: str, t_index: int, template: Template) -> list[dict[str, Any]]:
    """Eval's level-4 cases of ``template`` (same seeds, same questions), orders in postgres and catalog in sqlite."""
    base, per_store, datasets, _ = SPLIT_PLAN["eval"]
    pair = "+".join(SEED_PAIR)
    return [
        build_case(
            base + 1000 * t_index + k,
            template=template.id,
            store=pair,
            scale=DEFAULT_SCALE,
            data_seed=base + (k + t_index) % datasets,
            case_id=f"{split}-{template.id}-{pair}-{k}",
            split=split,
        )
        for k in range(2 * per_store)
    ]


def write_split(name: str, path: str | Path | None = None) -> Path:
    target = Path(path) if path is not None else split_path(name)
    return write_jsonl(target, (dumps_case(case) for case in build_split(name)))


__all__ = ["SPLITS", "build_split", "split_path", "write_split"]
