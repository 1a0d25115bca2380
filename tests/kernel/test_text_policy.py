"""The text helpers scripted policies read observations with."""

from __future__ import annotations

import pytest

from batchgate_gym.kernel.text_policy import result_of, results, results_of

OBSERVATION = "\n".join(
    [
        "turn 2 of 30",
        "> read_contract()",
        '{"limits": {"max_amount": 5000}}',
        "> list_batches()",
        '{"batches": [{"batch_id": "B-1"}]}',
        "> list_batches()",
        '{"batches": []}',
        '> run_sql(query="SELECT")',
        "{not json",
    ]
)


def test_results_read_every_call_in_order_and_an_unreadable_one_as_an_error() -> None:
    assert [name for name, _ in results(OBSERVATION)] == [
        "read_contract",
        "list_batches",
        "list_batches",
        "run_sql",
    ]
    assert results(OBSERVATION)[-1] == ("run_sql", {"error": "unreadable result"})


def test_results_of_gives_each_names_last_result_as_result_of_does() -> None:
    contract, listing = results_of(OBSERVATION, "read_contract", "list_batches")
    assert contract == result_of(OBSERVATION, "read_contract") == {"limits": {"max_amount": 5000}}
    assert listing == result_of(OBSERVATION, "list_batches") == {"batches": []}  # the last one
    assert results_of(OBSERVATION) == []


def test_a_missing_result_is_named() -> None:
    with pytest.raises(ValueError, match="no profile_batch result"):
        results_of(OBSERVATION, "read_contract", "profile_batch", "load_batch")
    with pytest.raises(ValueError, match="no load_batch result"):
        result_of(OBSERVATION, "load_batch")
