"""evaluate(): any policy through the text interface, exact means, same results in parallel."""

from __future__ import annotations

from fractions import Fraction

import pytest
from conftest import FIXTURE_CASES
from hypothesis import given, settings
from hypothesis import strategies as st

from batchgate_gym import evaluate
from batchgate_gym.evaluation import EpisodeResult, EvaluationResult
from batchgate_gym.kernel.scoring import exact
from batchgate_gym.kernel.text_policy import as_policy
from batchgate_gym.policies.gate.reference import CarefulPolicy, NaivePolicy


def submit_nothing(observation: str) -> str:
    return "submit_report(loaded=[], quarantined=[])"


def test_parallel_results_equal_serial_results():
    serial = evaluate(NaivePolicy, cases=FIXTURE_CASES, n_jobs=1, progress=False)
    parallel = evaluate(NaivePolicy, cases=FIXTURE_CASES, n_jobs=2, progress=False)
    assert parallel.rows() == serial.rows()
    assert parallel.to_json() == serial.to_json()
    assert [r.index for r in parallel.episodes] == list(range(32))


def test_parallel_equals_serial_on_procedural_seeds():
    seeds = [11, 12, 13, 14, 15]
    serial = evaluate(CarefulPolicy(), seeds=seeds, progress=False)
    parallel = evaluate(CarefulPolicy(), seeds=seeds, n_jobs=2, progress=False)
    assert parallel.rows() == serial.rows()
    assert len({r.case_id for r in serial.episodes}) == len(seeds)


def test_plain_callable_is_a_policy():
    result = evaluate(submit_nothing, cases=FIXTURE_CASES, progress=False)
    for episode in result.episodes:
        # An honest empty report: report term only, plus evidence when nothing was defective.
        expected = 0.2 + (0.15 if episode.defective_batches == 0 else 0.0)
        assert episode.reward == pytest.approx(expected)
        assert episode.calls == 1 and episode.turns == 1 and episode.terminated
    assert result.policy == "submit_nothing"


def test_means_are_exact_fractions_of_the_per_case_figures(expected):
    result = evaluate(NaivePolicy, cases=FIXTURE_CASES, progress=False)
    figures = expected["policies"]["naive"]["per_case"].values()
    exact_mean = sum((Fraction(str(f["reward"])) for f in figures), Fraction(0)) / len(figures)
    assert result.overall.means["reward"] == exact_mean
    assert result.overall.episodes == 32
    assert sum(a.episodes for a in result.per_family.values()) == 32


def test_aggregates_add_up():
    terms = {"disposition": 1.0, "report": 0.0, "evidence": 0.0, "inspected": 0.0}
    episodes = [
        EpisodeResult(
            i,
            f"c{i}",
            "fam",
            0.5,
            terms,
            {"bad_batches_loaded": i, "revenue_error_usd": 0.1},
            2,
            3,
            True,
            False,
        )
        for i in range(3)
    ]
    result = EvaluationResult("p", episodes)
    assert result.overall.bad_batches_loaded == 3
    assert result.overall.cents["revenue_error_usd"] == 30
    assert result.overall.revenue_error_usd == 0.3
    assert result.overall.means["disposition"] == 1
    assert episodes[2].bad_batches_loaded == 2 and episodes[1].disposition == 1.0


_TERM_VALUES = st.builds(lambda k, n: min(k, n) / n, st.integers(0, 12), st.integers(1, 12))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("abc"), _TERM_VALUES, _TERM_VALUES, _TERM_VALUES | st.just(0.1 + 0.2)),
        max_size=20,
    )
)
def test_means_are_the_exact_sums_of_the_terms_over_the_episodes(drawn):
    """Each mean, overall and per family, is the sum of the exact fraction of every
    episode's float divided by the count: the same fraction however it is summed."""
    episodes = [
        EpisodeResult(i, f"c{i}", family, reward, {"t": t, "u": u}, {}, 1, 1, True, False)
        for i, (family, reward, t, u) in enumerate(drawn)
    ]
    result = EvaluationResult("p", episodes)
    groups = [(result.overall, episodes)] + [
        (aggregate, [e for e in episodes if e.family == family])
        for family, aggregate in result.per_family.items()
    ]
    for aggregate, members in groups:
        count = max(len(members), 1)
        wanted = {
            "reward": sum((exact(e.reward) for e in members), Fraction(0)) / count,
            **{name: sum((exact(e.terms[name]) for e in members), Fraction(0)) / count for name in "tu"},
        }
        assert aggregate.means == (wanted if members else {"reward": Fraction(0)})
        assert all(type(mean) is Fraction for mean in aggregate.means.values())


def test_exactly_one_source():
    with pytest.raises(ValueError, match="exactly one"):
        evaluate(NaivePolicy, cases=FIXTURE_CASES, seeds=[1], progress=False)
    with pytest.raises(ValueError, match="exactly one"):
        evaluate(NaivePolicy, progress=False)


def test_not_a_policy_is_refused():
    with pytest.raises(TypeError):
        as_policy(42)
