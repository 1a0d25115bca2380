"""Case sources: a fixed list drawn with the env's generator, and the ``cases=`` argument resolved."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from batchgate_gym.kernel.case_sources import (
    SEED_LIMIT,
    CaseSource,
    FixedCases,
    ProceduralCaseSource,
    ProceduralSource,
    cases_or_split,
    draw_seed,
    procedural_case,
    resolve_cases,
)


@dataclass(frozen=True)
class Item:
    case_id: str


ITEMS = [Item("a"), Item("b"), Item("c")]


def test_a_fixed_list_draws_with_the_generator_and_repeats_under_one_seed():
    source = FixedCases(ITEMS)
    draws = [source.pick(np.random.default_rng(7), {}) for _ in range(3)]
    assert len(source) == 3 and len(set(draws)) == 1
    rng = np.random.default_rng(7)
    assert draws[0] is ITEMS[int(np.random.default_rng(7).integers(3))]
    assert {source.pick(rng, {}).case_id for _ in range(60)} == {"a", "b", "c"}


def test_a_reset_may_name_the_case_by_id_or_position():
    source = FixedCases(ITEMS)
    rng = np.random.default_rng(0)
    assert source.pick(rng, {"case_id": "c"}) is ITEMS[2]
    assert source.pick(rng, {"case_index": 1}) is ITEMS[1]
    with pytest.raises(ValueError, match="no case with case_id 'z'"):
        source.pick(rng, {"case_id": "z"})
    with pytest.raises(ValueError, match=r"case_index 3 is outside 0\.\.2"):
        source.pick(rng, {"case_index": 3})
    with pytest.raises(ValueError, match="no cases given"):
        FixedCases([])


@dataclass(frozen=True)
class Seeded:
    size: int = 1

    def pick(self, rng: np.random.Generator, options: Any) -> Item:
        return self.build(draw_seed(rng), size=options.get("size", self.size))

    def build(self, seed: int, **knobs: Any) -> Item:
        return Item(f"{seed}-{knobs['size']}")


def test_a_procedural_source_builds_from_a_seed_drawn_with_the_generator():
    source = Seeded()
    assert isinstance(source, ProceduralSource) and isinstance(source, CaseSource)
    assert not isinstance(FixedCases(ITEMS), ProceduralSource)
    first = source.pick(np.random.default_rng(3), {})
    assert first == source.pick(np.random.default_rng(3), {})
    assert 0 <= draw_seed(np.random.default_rng(3)) < SEED_LIMIT
    assert first.case_id == f"{draw_seed(np.random.default_rng(3))}-1"


def _check_size(size: Any) -> dict[str, Any]:
    if not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be a positive int, not {size!r}")
    return {"size": size}


def _check_seed(seed: Any, name: str) -> int:
    if not isinstance(seed, int):
        raise ValueError(f"{name} must be an int")
    return seed


@dataclass(frozen=True)
class Sized(ProceduralCaseSource, check_knobs=_check_size, check_seed=_check_seed):
    size: int = 1

    def build(self, seed: int, **knobs: Any) -> Item:
        return procedural_case(lambda data, origin: Item(f"{origin} {data}"), knobs["size"], seed)


def test_a_desk_procedural_source_takes_its_checks_as_class_keywords():
    assert Sized.check_knobs is _check_size and Sized.check_seed is _check_seed
    assert Sized().pick(np.random.default_rng(0), {"case_seed": 5, "size": 2}) == Item(
        "<procedural case 5> 2"
    )
    with pytest.raises(ValueError, match="size must be a positive int, not 0"):
        Sized(size=0)
    with pytest.raises(ValueError, match="case_seed must be an int"):
        Sized().pick(np.random.default_rng(0), {"case_seed": "5"})
    with pytest.raises(TypeError, match="check_seed"):

        class Unchecked(ProceduralCaseSource, check_knobs=_check_size):  # type: ignore[call-arg]
            pass


SOURCE_KNOBS = [
    ("batchgate_gym.desks.gate.sources", "ProceduralCases", {"rows_per_batch": 5, "batches": 3}),
    ("batchgate_gym.desks.refund.sources", "ProceduralRefundCases", {}),
    ("batchgate_gym.desks.analyst.sources", "ProceduralAnalystCases", {"scale": 200}),
]


@pytest.mark.parametrize(("module", "name", "knobs"), SOURCE_KNOBS)
def test_a_reset_without_options_builds_with_the_knobs_checked_when_the_source_was_made(
    module: str, name: str, knobs: dict[str, Any]
) -> None:
    """A reset with no options skips the knobs' check: every desk's check gives back the
    knobs it normalised (so checking them again changes nothing), and such a reset builds
    from the same seed and knobs as one naming them all."""
    import importlib

    from batchgate_gym.kernel.case_sources import pick_procedural

    source_type = getattr(importlib.import_module(module), name)
    for source in (source_type(), source_type(**knobs)):
        own = source.knobs()
        again = dict(source_type.check_knobs(**own))
        assert [(key, type(value), value) for key, value in again.items()] == [
            (key, type(value), value) for key, value in own.items()
        ]
        built: list[tuple[int, dict[str, Any]]] = []

        def recorded(seed: int, built: list[Any] = built, **knobs: Any) -> None:
            built.append((seed, knobs))

        object.__setattr__(source, "build", recorded)  # this instance records what it would build
        source.pick(np.random.default_rng(3), {})
        checks = (source_type.check_knobs, source_type.check_seed)
        pick_procedural(source, recorded, np.random.default_rng(3), {}, tuple(own), *checks)
        assert built[0] == built[1]


def _resolve(cases: Any, **knobs: Any) -> Any:
    loaded: list[Any] = []

    def load(what: Any) -> list[Item]:
        loaded.append(what)
        return [Item(str(entry)) for entry in (what if isinstance(what, list) else ["file"])]

    source = resolve_cases(
        cases, splits={"small": lambda: ITEMS[:1]}, load=load, case_type=Item, procedural=Seeded, **knobs
    )
    return source, loaded


def test_resolution_of_every_kind_of_cases_argument(tmp_path):
    procedural, _ = _resolve(None, size=4)
    assert procedural == Seeded(size=4)
    own = Seeded()
    assert _resolve(own)[0] is own
    split, loaded = _resolve("small")
    assert split.cases == ITEMS[:1] and loaded == []
    path = tmp_path / "cases.jsonl"
    for name in (str(path), path, "not-a-split"):
        source, loaded = _resolve(name)
        assert loaded == [name] and [c.case_id for c in source.cases] == ["file"]
    objects, loaded = _resolve(tuple(ITEMS))
    assert objects.cases == ITEMS and loaded == []
    dicts, loaded = _resolve([{"case_id": "x"}])
    assert loaded == [[{"case_id": "x"}]] and len(dicts) == 1


def test_knobs_are_refused_for_anything_but_procedural_cases():
    with pytest.raises(ValueError, match=r"scale knobs \['size'\] apply to procedural cases only"):
        _resolve("small", size=2)
    with pytest.raises(ValueError, match="no cases given"):
        _resolve([])


def test_a_name_that_is_neither_a_split_nor_a_file_says_so(tmp_path):
    def missing(what: Any) -> list[Item]:
        raise FileNotFoundError(2, "No such file or directory", str(what))

    for name in ("evl", tmp_path / "cases.jsonl"):
        with pytest.raises(ValueError, match=r"is neither a split \(small\) nor an existing case file"):
            resolve_cases(
                name, splits={"small": lambda: ITEMS[:1]}, load=missing, case_type=Item, procedural=Seeded
            )


def test_split_is_another_name_for_a_split_given_as_cases():
    assert cases_or_split(None, "eval") == "eval"
    assert cases_or_split("path.jsonl", None) == "path.jsonl"
    with pytest.raises(ValueError, match="give cases= or split=, not both"):
        cases_or_split("eval", "eval")
    with pytest.raises(ValueError, match="split must be a split's name"):
        cases_or_split(None, 3)  # type: ignore[arg-type]
