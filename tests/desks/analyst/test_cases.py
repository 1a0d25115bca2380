"""Analyst cases: the splits rebuild byte for byte, a broken line names its line and field, knobs are checked."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from batchgate_gym.desks.analyst.cases import CaseFormatError, load_cases
from batchgate_gym.desks.analyst.generator import SPLITS, build_case, split_path, write_split
from batchgate_gym.desks.analyst.prompt import task_text
from batchgate_gym.desks.analyst.questions.market_questions import (
    LEVELS,
    TEMPLATES,
    quarters_before,
    weeks_before,
)
from batchgate_gym.desks.analyst.sources import build_procedural
from batchgate_gym.envs.analyst.text import AnalystDeskEnv


@pytest.mark.parametrize("name", SPLITS)
def test_split_rebuilds_byte_for_byte(name: str, tmp_path: Path) -> None:
    assert write_split(name, tmp_path / f"{name}.jsonl").read_bytes() == split_path(name).read_bytes()


def test_eval_covers_every_template_in_every_store() -> None:
    cases = load_cases(split_path("eval"))
    pairs = {(c.family, c.store) for c in cases}
    assert {c.family for c in cases} == {t.id for t in TEMPLATES}
    assert {c.level for c in cases} == set(LEVELS) == {1, 2, 3, 4, 5, 6, 7}
    assert len(cases) == 108 and len(pairs) == 106  # 26 templates x 4 stores, level 4's two templates twice
    assert {c.store for c in cases} == {"sqlite", "duckdb", "lake", "files", "sqlite+lake"}
    # three of level 3, one each of levels 1, 2, 5 and 7, in 4 stores
    assert sum(not c.answerable for c in cases) == 28
    level6 = [c for c in cases if c.level == 6]
    assert {c.family for c in level6} == {"delivery-change", "repeat-purchase-change", "category-week-change"}
    assert all(c.data.cutoff is not None and c.data.change is not None for c in level6)


def test_train_tpch_chdb_and_postgres_are_what_their_plans_say() -> None:
    eval_cases, train = load_cases(split_path("eval")), load_cases(split_path("train"))
    assert len(train) == 420 and {c.level for c in train} == {1, 2, 3, 4, 5, 6}
    per_pair = Counter((c.family, c.store) for c in train)
    assert set(per_pair.values()) == {5, 20}  # five per store, level 4 twenty times in sqlite+lake
    assert {family for family, _ in per_pair} == {t.id for t in TEMPLATES if t.level != 7}

    def asked(case: Any) -> tuple[Any, ...]:
        return case.family, case.store, case.question, case.data, case.expected

    tpch = load_cases(split_path("tpch"))
    assert len(tpch) == 28 and {asked(c) for c in tpch} == {asked(c) for c in eval_cases if c.level == 7}
    in_duckdb = [c for c in eval_cases if c.stores == ("duckdb",)]
    same = [(c.family, c.question, c.data, c.expected) for c in in_duckdb]
    chdb = load_cases(split_path("chdb"))
    assert len(chdb) == len(in_duckdb) == 26 and {c.store for c in chdb} == {"chdb"}
    assert [(c.family, c.question, c.data, c.expected) for c in chdb] == same
    # postgres: the same 26, and eval's level 4 with orders in postgres and the catalog in sqlite
    postgres = load_cases(split_path("postgres"))
    one, two = [c for c in postgres if c.level != 4], [c for c in postgres if c.level == 4]
    assert len(postgres) == 30 and {c.store for c in one} == {"postgres"}
    assert [(c.family, c.question, c.data, c.expected) for c in one] == same
    level4 = [(c.family, c.question, c.data, c.expected) for c in eval_cases if c.level == 4]
    assert [(c.family, c.question, c.data, c.expected) for c in two] == level4
    assert {c.store for c in two} == {"postgres+sqlite"} and all(
        {d.split(".")[0] for d in c.depends} == {"postgres", "sqlite"} for c in two
    )


def test_level6_periods_are_whole_consecutive_and_before_the_snapshot() -> None:
    for offset in range(0, 400, 3):
        cutoff = dt.date(2017, 11, 1) + dt.timedelta(days=offset)
        for back in range(4):
            (w1, w1_end), (w2, w2_end) = weeks_before(cutoff, back)
            assert w1.weekday() == w2.weekday() == 0 and w1_end.weekday() == w2_end.weekday() == 6
            assert w1_end - w1 == w2_end - w2 == dt.timedelta(days=6) and w2 == w1_end + dt.timedelta(days=1)
            assert w2_end < cutoff <= w2_end + dt.timedelta(days=7 * back + 7)
            (q1, q1_end), (q2, q2_end) = quarters_before(cutoff, back)
            for start, end in ((q1, q1_end), (q2, q2_end)):
                after = end + dt.timedelta(days=1)
                assert start.day == after.day == 1 and start.month % 3 == after.month % 3 == 1
                assert (after.year * 12 + after.month) - (start.year * 12 + start.month) == 3
            assert q2 == q1_end + dt.timedelta(days=1) and q2_end < cutoff
            if back:  # one further back: the later period becomes the earlier one
                assert quarters_before(cutoff, back - 1)[0] == (q2, q2_end)
                assert weeks_before(cutoff, back - 1)[0] == (w2, w2_end)
        # the latest whole quarter: the one after it ends on or after the snapshot date
        start = quarters_before(cutoff)[1][1] + dt.timedelta(days=1)
        month = start.month + 3
        after_next = dt.date(start.year + (month - 1) // 12, (month - 1) % 12 + 1, 1)
        assert after_next - dt.timedelta(days=1) >= cutoff


def _line(tmp_path: Path, change: dict, drop: str | None = None) -> Path:
    data = json.loads(split_path("eval").read_text().splitlines()[0])
    data.update(change)
    if drop:
        del data[drop]
    path = tmp_path / "cases.jsonl"
    path.write_text(split_path("eval").read_text().splitlines()[1] + "\n" + json.dumps(data) + "\n")
    return path


@pytest.mark.parametrize(
    ("change", "drop", "field"),
    [
        ({"family": "nope"}, None, "family"),
        ({"stores": ["oracle"]}, None, "stores"),
        ({"answer_type": "essay"}, None, "answer_type"),
        ({"data": {"seed": 1, "scale": 10}}, None, "data.scale"),
        ({"data": {"seed": 1, "scale": 1000, "cutoff": "soon"}}, None, "data.cutoff"),
        ({"depends": ["lake.orders"]}, None, "depends"),
        ({"level": "one"}, None, "level"),
        ({}, "question", "question"),
        ({"extra": 1}, None, "extra"),
    ],
)
def test_a_broken_line_names_line_and_field(
    tmp_path: Path, change: dict, drop: str | None, field: str
) -> None:
    with pytest.raises(CaseFormatError, match=rf"cases.jsonl:2: field '{field}'"):
        load_cases(_line(tmp_path, change, drop))


def test_procedural_cases_are_a_function_of_seed_and_knobs() -> None:
    first = build_case(123, scale=80)
    assert first == build_case(123, scale=80)
    assert build_procedural(7, level=4, scale=80).stores == ("sqlite", "lake")
    assert build_procedural(7, level=6, scale=80).data.change is not None
    with pytest.raises(ValueError, match="scale"):
        AnalystDeskEnv(scale=10)
    with pytest.raises(ValueError, match="level"):
        AnalystDeskEnv(level=9)
    with pytest.raises(ValueError, match="template"):
        AnalystDeskEnv(level=1, template="delivery-change")


def test_the_task_never_shows_the_reference_or_answerability() -> None:
    cases = load_cases(split_path("eval"))
    for case in cases:
        text = task_text(case, 16)
        assert json.dumps(case.expected) not in text or case.expected in (None, [], 0)
        assert "decline" not in text.split("Answer shape:")[1].split("\n")[0]
    profit = next(c for c in cases if c.family == "profit")
    count = next(c for c in cases if c.family == "count-status")
    shape = [task_text(c, 16).split("Answer shape:")[1].split("\n")[0] for c in (profit, count)]
    assert shape[0] == shape[1]


def test_a_snapshot_shows_orders_delivered_later_as_still_shipped() -> None:
    import datetime as dt

    import polars as pl

    from batchgate_gym.desks.analyst.datasets.market import DataSpec, generate

    cutoff = dt.date(2018, 4, 10)
    full = generate(DataSpec(3, 2000))["orders"]
    snap = generate(DataSpec(3, 2000, cutoff))["orders"]
    later = full.filter((pl.col("status") == "delivered") & (pl.col("delivered_at") > cutoff))
    assert later.height > 0
    seen = snap.join(later.select("order_id"), on="order_id")
    assert seen.height == later.filter(pl.col("purchased_at") <= cutoff).height > 0
    assert set(seen["status"]) == {"shipped"} and seen["delivered_at"].null_count() == seen.height
    # A delivered order without a date in the snapshot is one the export never dated.
    undated = snap.filter((pl.col("status") == "delivered") & pl.col("delivered_at").is_null())
    was = full.join(undated.select("order_id"), on="order_id")
    assert was["delivered_at"].null_count() == was.height
