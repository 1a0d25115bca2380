"""One case from a seed: a template, a store, a dataset, the parameters and the reference.

The case seed draws what the knobs leave open (the level, then a template of it,
then a store); the dataset is named by its own seed (the case seed unless a split
shares datasets between cases), so a case is a function of its seeds and knobs.
Level 6 datasets are snapshots: their cutoff and declared change (+7 days on one
state's deliveries from a date early in the month before the cutoff's) are drawn
from the data seed,
and the two periods a question compares follow from the cutoff (:func:`snapshot_params`:
the months before it; the quarters and weeks before it, as many back as the case
seed draws).
Level 7 datasets are TPC-H at a scale factor (0.01 unless ``tpch_scale`` says
otherwise), the same rows whatever the seed; a seed that leaves the level open
draws it from levels 1 to 6 (the draws of every seed stay what they were before
level 7 came), so level 7 comes when it is asked for.
The reference answer is computed by :mod:`..questions.market_answers` from the canonical Parquet copy.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np

from batchgate_gym.kernel.plain import check_seed

from ..cases import data_dict
from ..datasets.canonical import canonical_tables
from ..datasets.market import MAX_SCALE, MIN_SCALE, STATES, Change, DataSpec, check_scale
from ..datasets.tpch import DEFAULT_SF, check_sf
from ..engines.stores import OPTIONAL_STORES, STORES
from ..questions.market_answers import expected_answer
from ..questions.market_questions import (
    BY_ID,
    CROSS_PAIRS,
    CROSS_STORES,
    LEVELS,
    Span,
    Template,
    months_before,
    of_level,
    quarters_before,
    weeks_before,
)

DEFAULT_SCALE = 1000
TPCH_LEVEL = 7
DRAWN_LEVELS = tuple(level for level in LEVELS if level != TPCH_LEVEL)


def check_knobs(
    level: int | None = None,
    template: str | None = None,
    store: str | None = None,
    scale: int = DEFAULT_SCALE,
) -> dict[str, Any]:
    """The knobs, checked: ``level`` 1..6, ``template`` a template id (of that level), ``store``, ``scale``."""
    if level is not None and (not isinstance(level, int) or isinstance(level, bool) or level not in LEVELS):
        raise ValueError(f"level must be one of {list(LEVELS)}, not {level!r}")
    if template is not None:
        if template not in BY_ID:
            raise ValueError(f"template must be one of {', '.join(BY_ID)}, not {template!r}")
        if level is not None and BY_ID[template].level != level:
            raise ValueError(f"template {template!r} is of level {BY_ID[template].level}, not {level}")
    known = (*STORES, *OPTIONAL_STORES)
    if store is not None and store not in (*known, *("+".join(pair) for pair in CROSS_PAIRS)):
        raise ValueError(f"store must be one of {', '.join(known)}, not {store!r}")
    check_scale(scale)
    return {"level": level, "template": template, "store": store, "scale": scale}


def data_spec(template: Template, data_seed: int, scale: int, tpch_scale: float = DEFAULT_SF) -> DataSpec:
    """The dataset a question of ``template`` is asked over: a snapshot with a change at level 6, TPC-H at 7."""
    if template.level == TPCH_LEVEL:
        return DataSpec(0, 0, tpch=check_sf(tpch_scale))
    if template.level != 6:
        return DataSpec(data_seed, scale)
    rng = np.random.default_rng([data_seed & (2**63 - 1), 6])
    cutoff = dt.date(2018, 3, 1) + dt.timedelta(days=int(rng.integers(0, 150)))
    _, m2 = months_before(cutoff)
    start = dt.date.fromisoformat(m2 + "-01") + dt.timedelta(days=int(rng.integers(0, 10)))
    return DataSpec(data_seed, scale, cutoff, Change(STATES[int(rng.integers(len(STATES)))], start, 7))


def _spans(names: tuple[str, str], spans: tuple[Span, Span]) -> dict[str, str]:
    return {
        f"{name}_{edge}": day.isoformat()
        for name, span in zip(names, spans, strict=True)
        for edge, day in zip(("start", "end"), span, strict=True)
    }


def snapshot_params(template: str, cutoff: dt.date, rng: np.random.Generator) -> dict[str, Any]:
    """A level-6 question's parameters: the snapshot date and the two periods it compares.

    The months are the two before the snapshot's month (nothing drawn, so the cases made
    before the other schedules came stay as they were); the quarters and weeks are the
    latest two whole ones before the snapshot date or, as ``rng`` draws, a few earlier.
    """
    params: dict[str, Any] = {"cutoff": cutoff.isoformat()}
    if template == "delivery-change":
        m1, m2 = months_before(cutoff)
        return {**params, "m1": m1, "m2": m2}
    if template == "repeat-purchase-change":
        quarters = quarters_before(cutoff, int(rng.integers(0, 2)))
        labels = {
            f"q{k}": f"{start.year}-Q{(start.month + 2) // 3}" for k, (start, _) in enumerate(quarters, 1)
        }
        return {**params, **labels, **_spans(("q1", "q2"), quarters)}
    if template == "category-week-change":
        return {**params, **_spans(("w1", "w2"), weeks_before(cutoff, int(rng.integers(0, 4))))}
    raise ValueError(f"no snapshot parameters for {template!r}")


def _stores_for(template: Template, store: str | None, rng: np.random.Generator) -> tuple[str, ...]:
    if template.level == 4:  # a pair asked by name, or the default pair whatever one store is asked
        return {"+".join(pair): pair for pair in CROSS_PAIRS}.get(store or "", CROSS_STORES)
    if store is None:
        return (STORES[int(rng.integers(len(STORES)))],)
    if "+" in store:
        raise ValueError(f"store {store!r} is for level 4 only")
    return (store,)


def _placed(dependency: str, stores: tuple[str, ...]) -> str:
    """A template's ``store.table`` (or bare table) in the case's stores: a level-4 template names
    the default pair's stores, whose places the case's own pair takes."""
    store, _, table = dependency.rpartition(".")
    return f"{stores[CROSS_STORES.index(store)] if store else stores[0]}.{table}"


def build_case(
    seed: int,
    *,
    level: int | None = None,
    template: str | None = None,
    store: str | None = None,
    scale: int = DEFAULT_SCALE,
    data_seed: int | None = None,
    case_id: str | None = None,
    split: str = "procedural",
    tpch_scale: float = DEFAULT_SF,
) -> dict[str, Any]:
    """The case of ``seed`` and the knobs, as a dict in the JSONL format."""
    check_seed(seed)
    check_knobs(level, template, store, scale)
    rng = np.random.default_rng([seed & (2**63 - 1), 16])
    if template is None:
        level = level if level is not None else int(rng.choice(DRAWN_LEVELS))
        choices = of_level(level)
        chosen = choices[int(rng.integers(len(choices)))]
    else:
        chosen = BY_ID[template]
    stores = _stores_for(chosen, store, rng)
    spec = data_spec(chosen, seed if data_seed is None else data_seed, scale, tpch_scale)
    tables = canonical_tables(spec)
    params = dict(chosen.draw(rng, tables))
    if chosen.level == 6 and spec.cutoff is not None:
        params = snapshot_params(chosen.id, spec.cutoff, rng)
    return {
        "case_id": case_id or f"procedural-{seed}",
        "family": chosen.id,
        "level": chosen.level,
        "stores": list(stores),
        "data": data_dict(spec),
        "params": params,
        "question": chosen.question(params),
        "answer_type": chosen.answer,
        "tolerance": chosen.tolerance,
        "metrics": dict(chosen.metrics),
        "depends": [_placed(d, stores) for d in chosen.depends],
        "answerable": chosen.answerable,
        "expected": expected_answer(chosen.id, tables, params),
        "split": split,
    }


__all__ = [
    "DEFAULT_SCALE",
    "DRAWN_LEVELS",
    "MAX_SCALE",
    "MIN_SCALE",
    "TPCH_LEVEL",
    "build_case",
    "check_knobs",
    "check_seed",
    "data_spec",
    "snapshot_params",
]
