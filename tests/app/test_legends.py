"""Every column of the report's and the attack table's wide tables has a one-line legend."""

from __future__ import annotations

import pytest

from batchgate_gym.app.attacks import attack_table
from batchgate_gym.app.report import report_text
from batchgate_gym.desks import registry
from batchgate_gym.evaluation import EpisodeResult, EvaluationResult


def _results(desk: registry.DeskSpec, names: list[str]) -> dict[str, EvaluationResult]:
    terms = {term: 1.0 for term in desk.scoring.terms}
    metrics = {metric.name: 0.0 if metric.money else 0 for metric in desk.scoring.metrics}
    episode = EpisodeResult(0, "c0", "", 1.0, terms, metrics, 1, 1, True, False)
    return {name: EvaluationResult(name, [episode]) for name in names}


def _legend(text: str, after_header: str) -> dict[str, str]:
    """The ``- column: meaning`` lines that follow the table whose header starts ``after_header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(after_header))
    legend = {}
    for line in lines[start:]:
        if line.startswith("- "):
            column, _, meaning = line[2:].partition(": ")
            legend[column] = meaning
        elif legend and not line.strip():
            break
    return legend


@pytest.mark.parametrize("name", ["gate", "refund", "analyst"])
def test_every_column_of_the_attack_table_has_a_legend_line(name):
    desk = registry.get(name)
    policies = ["careful", *desk.policies.attacker_policies]
    text = attack_table(_results(desk, policies), desk)
    header = [cell.strip() for cell in text.splitlines()[0].strip("|").split("|")]
    legend = _legend(text, "|")
    assert set(header) - {"policy"} == set(legend)
    assert all(meaning.strip() for meaning in legend.values())
    for term in desk.scoring.terms:
        assert legend[term].startswith(f"mean, {float(desk.scoring.weights[term]):.2f} of the reward; ")
        assert "a term of the score" not in legend[term]  # every desk says what each term asks


@pytest.mark.parametrize("name", ["gate", "refund", "analyst"])
def test_every_policy_column_of_the_report_has_a_legend_line(name):
    desk = registry.get(name)
    policies = [*desk.policies.defaults, *list(desk.policies.attacker_policies)[:2], "mine"]
    text = report_text(_results(desk, policies), desk)
    legend = _legend(text, "|  |")
    assert list(legend) == policies
    assert legend["careful"] == registry.KIND_MEANINGS["target"]
    assert legend["mine"] == registry.KIND_MEANINGS["yours"]
