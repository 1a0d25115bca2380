"""Scale knobs and episode limits are bounded and checked before any case is built.

The same check guards the constructor of every environment, the reset options of
procedural cases and ``build_case``; a bad value raises ``ValueError`` naming the
knob, cheaply, whatever its size.
"""

from __future__ import annotations

import math
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import batchgate_gym.desks.gate.sources as sources
from batchgate_gym.desks.gate.generator import FAMILIES, build_case, variants
from batchgate_gym.desks.gate.generator.build import check_knobs
from batchgate_gym.envs import BatchGateEnv
from batchgate_gym.envs.gate.macro import GateMacroEnv
from batchgate_gym.envs.gate.team import env as team_env
from batchgate_gym.envs.gate.team import parallel_env

KNOBS = ("family", "variant", "rows_per_batch", "batches", "defects_per_batch")

# (knob, bad value): each must be refused by the constructors, the reset options and
# build_case alike. The first ones used to take seconds and gigabytes or end in a
# MemoryError; the others used to fail later, with an unrelated error, or not at all.
BAD_KNOBS: list[tuple[str, Any]] = [
    ("rows_per_batch", 10**6),
    ("rows_per_batch", 10**8),
    ("rows_per_batch", (1, 100_001)),
    ("rows_per_batch", (5,)),
    ("rows_per_batch", (1, 2, 3)),
    ("rows_per_batch", ()),
    ("rows_per_batch", (0, 5)),
    ("rows_per_batch", (6, 5)),
    ("rows_per_batch", 0),
    ("rows_per_batch", True),
    ("rows_per_batch", (True, 5)),
    ("rows_per_batch", (2.0, 5)),
    ("rows_per_batch", "12"),
    ("rows_per_batch", 5.0),
    ("rows_per_batch", None),
    ("batches", 10**7),
    ("batches", 13),
    ("batches", 1),
    ("batches", True),
    ("batches", 2.0),
    ("batches", None),
    ("defects_per_batch", 0),
    ("defects_per_batch", 10),
    ("defects_per_batch", 10**9),
    ("defects_per_batch", True),
    ("family", "nope"),
    ("family", 3),
    ("family", ["clean-control"]),
]


def _knob_error(knob: str) -> Any:
    return pytest.raises(ValueError, match=knob)


@pytest.mark.parametrize(("knob", "value"), BAD_KNOBS)
def test_a_bad_knob_is_refused_everywhere_before_any_case_is_built(knob: str, value: Any) -> None:
    with mock.patch.object(sources, "build_procedural", side_effect=AssertionError("a case was built")):
        with _knob_error(knob):
            BatchGateEnv(**{knob: value})
        with _knob_error(knob):
            GateMacroEnv(**{knob: value})
        env = BatchGateEnv()
        with _knob_error(knob):
            env.reset(seed=0, options={knob: value})
        with _knob_error(knob):
            team_env().reset(seed=0, options={knob: value})
        with _knob_error(knob):
            parallel_env().reset(seed=0, options={knob: value})
        with _knob_error(knob):
            sources.ProceduralCases(**{knob: value})
    with _knob_error(knob):
        build_case(0, **{knob: value})


@pytest.mark.parametrize(
    "knobs",
    [
        {"variant": True, "family": "label-drift"},
        {"variant": 0},
        {"variant": -1, "family": "label-drift"},
        {"variant": 10, "family": "label-drift"},
        {"variant": 1.0, "family": "label-drift"},
        {"variant": "1", "family": "label-drift"},
    ],
)
def test_variant_is_an_int_within_its_family(knobs: dict[str, Any]) -> None:
    env = BatchGateEnv()
    with _knob_error("variant"):
        BatchGateEnv(**knobs)
    with _knob_error("variant"):
        env.reset(seed=0, options=knobs)
    with _knob_error("variant"):
        build_case(0, **knobs)


def test_every_family_takes_exactly_its_variants() -> None:
    for family in FAMILIES:
        count = variants(family)
        assert check_knobs(family=family, variant=count - 1)["variant"] == count - 1
        with _knob_error("variant"):
            check_knobs(family=family, variant=count)


def test_the_bounds_themselves_are_accepted_and_normalised() -> None:
    knobs = check_knobs(rows_per_batch=100_000, batches=12, defects_per_batch=9)
    assert knobs == {
        "family": None,
        "variant": None,
        "rows_per_batch": (100_000, 100_000),
        "batches": 12,
        "defects_per_batch": 9,
    }
    assert check_knobs(rows_per_batch=[1, 100_000])["rows_per_batch"] == (1, 100_000)
    assert check_knobs(rows_per_batch=(np.int64(4), np.int32(6)))["rows_per_batch"] == (4, 6)
    assert check_knobs(batches=np.int64(2))["batches"] == 2
    assert type(check_knobs(batches=np.int64(2))["batches"]) is int
    # Constructing at the bounds builds nothing, so it is cheap.
    BatchGateEnv(rows_per_batch=(1, 100_000), batches=12, defects_per_batch=9, family="legit-edge", variant=4)
    sources.ProceduralCases(rows_per_batch=100_000)


def test_a_reset_at_the_largest_knobs_honours_them() -> None:
    env = BatchGateEnv(rows_per_batch=[2, 3])  # a list, as a JSON config would give
    observation, _ = env.reset(seed=1, options={"batches": 12, "defects_per_batch": 9, "case_seed": 5})
    case = env.world.case
    assert env.observation_space.contains(observation)
    assert len(case.batches) == 12 and case.case_id == "proc-5"
    defective = [batch for batch in case.batches if batch.truth.defective]
    assert defective
    for batch in defective:  # every rule of the table is broken, each by its own rows
        assert len(batch.truth.defects) == (9 if batch.table == "orders" else 5)


def test_case_seed_is_an_int_not_a_bool() -> None:
    env = BatchGateEnv()
    for seed in (True, 1.0, "7", 2**63, -(2**63) - 1):
        with _knob_error("case_seed"):
            env.reset(options={"case_seed": seed})
    for seed in (-(2**63), 2**63 - 1, np.int64(7)):
        env.reset(options={"case_seed": seed, "rows_per_batch": 3})
        assert env.world.case.case_id == f"proc-{int(seed)}"
    with _knob_error("seed"):
        build_case(True)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"max_turns": 0}, "max_turns"),
        ({"max_turns": 10_001}, "max_turns"),
        ({"max_turns": True}, "max_turns"),
        ({"max_turns": 30.0}, "max_turns"),
        ({"max_calls_per_step": 0}, "max_calls_per_step"),
        ({"max_calls_per_step": 1_001}, "max_calls_per_step"),
        ({"max_observation_chars": 255}, "max_observation_chars"),
        ({"max_observation_chars": 59}, "max_observation_chars"),
        ({"max_observation_chars": 2**20 + 1}, "max_observation_chars"),
        ({"max_observation_chars": True}, "max_observation_chars"),
    ],
)
def test_episode_limits_are_bounded_in_every_environment(kwargs: dict[str, Any], name: str) -> None:
    with _knob_error(name):
        BatchGateEnv(**kwargs)
    with _knob_error(name):
        BatchGateEnv(split="eval", **kwargs)
    with _knob_error(name):
        team_env(**kwargs)
    with _knob_error(name):
        parallel_env(**kwargs)
    with _knob_error(name):
        GateMacroEnv(**kwargs)


def test_limits_at_their_bounds_are_accepted() -> None:
    for kwargs in (
        {"max_turns": 1, "max_calls_per_step": 1, "max_observation_chars": 256},
        {"max_turns": 10_000, "max_calls_per_step": 1_000, "max_observation_chars": 1_048_576},
    ):
        env = BatchGateEnv(split="eval", **kwargs)
        assert env.observation_space.max_length == kwargs["max_observation_chars"]
        team_env(**kwargs)


def test_team_arguments_are_bounded() -> None:
    for kwargs, name in (
        ({"n_agents": 0}, "n_agents"),
        ({"n_agents": 13}, "n_agents"),
        ({"n_agents": True}, "n_agents"),
        ({"batches_per_agent": 0}, "batches_per_agent"),
        ({"batches_per_agent": 2.0}, "batches_per_agent"),
        ({"n_agents": 4, "batches_per_agent": 4}, "batches_per_agent"),  # 16 batches
        ({"n_agents": 1, "batches_per_agent": 1}, "batches_per_agent"),  # 1 batch
        ({"overlap": 1.5}, "overlap"),
        ({"overlap": math.nan}, "overlap"),
        ({"overlap": True}, "overlap"),
        ({"overlap": "0.5"}, "overlap"),
    ):
        with _knob_error(name):
            team_env(**kwargs)
        with _knob_error(name):
            parallel_env(**kwargs)
    team = parallel_env(n_agents=6, batches_per_agent=2, overlap=1)
    observations, _ = team.reset(seed=0, options={"rows_per_batch": 2})
    assert len(observations) == 6 and len(team.game.case.batches) == 12


def test_macro_arguments_are_bounded() -> None:
    for slots in (0, 65, True, 4.0):
        with _knob_error("slots"):
            GateMacroEnv(slots=slots)
    # The wrapper parses whole text observations: a lower limit would cut them.
    with _knob_error("max_observation_chars"):
        GateMacroEnv(max_observation_chars=65_535)
    GateMacroEnv(slots=64, max_observation_chars=100_000)


# -- fuzz: arbitrary option dicts ------------------------------------------------------

_SMALL_INTS = st.integers(-3, 24)  # valid row counts stay small: each example is cheap
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    _SMALL_INTS,
    st.integers(min_value=100_001) | st.integers(max_value=-4),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(FAMILIES),
    st.lists(_SMALL_INTS | st.booleans() | st.floats() | st.none(), max_size=3),
    st.tuples(_SMALL_INTS, _SMALL_INTS),
    st.tuples(_SMALL_INTS, st.integers(min_value=100_001)),
    st.dictionaries(st.text(max_size=3), _SMALL_INTS, max_size=2),
)
_OPTIONS = st.dictionaries(st.sampled_from((*KNOBS, "case_seed")), _VALUES, max_size=6)


@given(options=_OPTIONS, seed=st.integers(0, 2**16))
def test_any_reset_options_either_fail_before_building_or_reset_within_the_space(
    options: dict[str, Any], seed: int
) -> None:
    env = BatchGateEnv(max_observation_chars=1_000)
    built = mock.Mock(wraps=sources.build_procedural)
    with mock.patch.object(sources, "build_procedural", built):
        try:
            observation, info = env.reset(seed=seed, options=options)
        except (ValueError, TypeError):
            assert built.call_count == 0, "a case was built before the options were refused"
            return
    assert built.call_count == 1
    assert env.observation_space.contains(observation)
    assert info == {
        "turn": 0,
        "calls": 0,
        "case_id": env.world.case.case_id,
        "family": env.world.case.family,
        "seed": env.world.case.seed,
    }
    case = env.world.case
    assert len(case.batches) == options.get("batches", 2)
    if options.get("family") is not None:
        assert case.family == options["family"]
    if options.get("variant") is not None:
        assert case.variant == options["variant"]
    rows = options.get("rows_per_batch")
    if isinstance(rows, int):  # a floor the defects need may raise the count, never lower it
        assert all(len(batch.rows) >= rows for batch in case.batches)
    observation, *_ = env.step("list_batches()")
    assert env.observation_space.contains(observation)


@given(kwargs=st.dictionaries(st.sampled_from(KNOBS), _VALUES, max_size=5))
def test_any_constructor_knobs_either_fail_at_once_or_make_an_env(kwargs: dict[str, Any]) -> None:
    try:
        env = BatchGateEnv(**kwargs)
    except (ValueError, TypeError):
        with pytest.raises((ValueError, TypeError)):
            check_knobs(**kwargs)
        return
    assert isinstance(env.source, sources.ProceduralCases)
    assert check_knobs(**kwargs) == {key: getattr(env.source, key) for key in KNOBS}
