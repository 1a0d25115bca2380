"""Episodes the machine stopped are left out of the means, and the tables say so.

An infrastructure error (a safety net fired) has no score: ``evaluate`` leaves it out
of its policy's means and totals. A table that printed those means as "over the 32
cases" and set them beside the target's, which were over other cases, would let a
policy stopped on its worst cases look closer to the target than it is. Here a gate
policy whose query runs away on the cases that list a customers batch first is played
under a wall-clock safety net short enough to stop it (a stalled machine, as it were):
its episodes there end as infrastructure errors.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import pytest

from batchgate_gym.app.attacks import INFRA_COLUMN, attack_table, gap_below
from batchgate_gym.app.report import INFRA_ROW, baseline_table
from batchgate_gym.app.team import markdown, run_team, summary
from batchgate_gym.desks import registry
from batchgate_gym.desks.gate.spec import TEAM_MISHAPS
from batchgate_gym.evaluation import EvaluationResult, run_policies
from batchgate_gym.kernel.scoring import exact
from batchgate_gym.kernel.sqlguard import SqlBudget
from batchgate_gym.kernel.text_policy import call, result_of
from batchgate_gym.policies.gate.reference import CarefulPolicy, NaivePolicy
from batchgate_gym.policies.gate.team import CarefulWithClaims

RUNAWAY = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT max(x) FROM r"
# Budgets no query of these policies reaches, but for the wall clock: a runaway query
# runs until the safety net stops it, which is an infrastructure error.
STALLING = SqlBudget(max_steps=10**12, max_action_steps=10**12, max_cpu_seconds=60, max_seconds=0.2)


class StalledWhenCustomersFirst(NaivePolicy):
    """Naive, except that a case listing a customers batch first starts with a runaway query."""

    name = "stalled-naive"

    def act(self, observation: str) -> str:
        if self.stage == "listed":
            batches = result_of(observation, "list_batches")["batches"]
            if batches[0]["table"] == "customers":
                return self._send(call("run_sql", query=RUNAWAY))
        return super().act(observation)


@pytest.fixture(scope="module")
def played() -> dict[str, EvaluationResult]:
    policies: dict[str, Any] = {"careful": CarefulPolicy, "stalled-naive": StalledWhenCustomersFirst}
    return run_policies(
        policies, split="eval", progress=False, desk="gate", env_kwargs={"sql_budget": STALLING}
    )


def _mean(result: EvaluationResult, cases: set[int]) -> Fraction:
    rewards = [exact(r.reward) for r in result.episodes if r.index in cases]
    return Fraction(sum(rewards), len(rewards))


def test_the_stalled_episodes_are_infra_errors_and_left_out(played):
    stalled = played["stalled-naive"]
    stopped = {r.index for r in stalled.episodes if r.infra_error}
    assert 0 < len(stopped) < len(stalled.episodes)
    assert stalled.overall.infra_episodes == len(stopped)
    assert not played["careful"].overall.infra_episodes


def test_the_gap_is_over_the_cases_both_policies_scored(played):
    careful, stalled = played["careful"], played["stalled-naive"]
    both = {r.index for r in stalled.episodes if not r.infra_error}
    assert gap_below(careful, stalled) == _mean(careful, both) - _mean(stalled, both)
    # Careful stopped on a case the other scored: that case leaves both sides too.
    first = min(both)
    episodes = [
        dataclasses.replace(r, reward=0.0, infra_error="stalled") if r.index == first else r
        for r in careful.episodes
    ]
    careful_stopped = EvaluationResult("careful", episodes)
    rest = both - {first}
    assert gap_below(careful_stopped, stalled) == _mean(careful, rest) - _mean(stalled, rest)


def test_the_attack_table_counts_the_stopped_episodes(played):
    text = attack_table(played, "gate")
    header = [cell.strip() for cell in text.splitlines()[0].strip("|").split("|")]
    rows = {
        cells[0]: dict(zip(header, cells, strict=True))
        for line in text.splitlines()[2:]
        if line.startswith("| ")
        for cells in [[cell.strip() for cell in line.strip("|").split("|")]]
    }
    stopped = played["stalled-naive"].overall.infra_episodes
    assert rows["stalled-naive"][INFRA_COLUMN] == str(stopped) and rows["careful"][INFRA_COLUMN] == "0"
    expected = gap_below(played["careful"], played["stalled-naive"])
    assert rows["stalled-naive"]["below careful"] == f"{float(expected):.4f}"
    assert f"- {INFRA_COLUMN}: " in text and "over the cases both scored" in text
    assert f"mean reward over the cases it scored of the {len(played['careful'].episodes)} cases" in text


def test_the_report_counts_the_stopped_episodes(played):
    text = baseline_table(played, "gate")
    line = next(line for line in text.splitlines() if line.startswith(f"| {INFRA_ROW} "))
    stopped = played["stalled-naive"].overall.infra_episodes
    assert line == f"| {INFRA_ROW} | 0 | {stopped} |"


def test_tables_without_stopped_episodes_are_unchanged():
    played = run_policies({"careful": CarefulPolicy, "naive": NaivePolicy}, split="eval", progress=False)
    assert INFRA_COLUMN not in attack_table(played, "gate") and INFRA_ROW not in baseline_table(
        played, "gate"
    )


class StallingTeamAgent(CarefulWithClaims):
    """A team agent whose every action is a runaway query."""

    def act(self, observation: str) -> str:
        return self._send(call("run_sql", query=RUNAWAY))


@pytest.mark.parametrize("parallel", [False, True], ids=["aec", "parallel"])
def test_a_team_game_the_machine_stopped_is_counted_apart(parallel):
    """The gate's team game stopped by the safety net has no score and no contributions:
    its result is an infra error (not a KeyError), left out of the means and of the seeds
    short of 1, and the team table counts it in a column of its own."""
    results, _cases = run_team(StallingTeamAgent, [0], parallel=parallel, n_agents=2, sql_budget=STALLING)
    (result,) = results
    assert "safety limit" in result.infra_error and result.reward == 0.0 and result.truncated
    totals = [metric.name for metric in registry.get("gate").scoring.shown_metrics]
    row = summary(results, [name for name, _ in TEAM_MISHAPS], totals)
    assert row["infra_episodes"] == 1 and row["seeds_below_1"] == 0 and row["episodes"] == 0
    table = {"agents": 2, "seeds": 1, "api": "aec", "policies": {"stalled": row}}
    header = markdown(table, "gate").splitlines()[2]
    assert header.endswith("| infra errors |")
