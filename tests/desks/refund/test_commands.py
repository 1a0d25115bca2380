"""The refund desk through the ``batchgate`` command: the original's figures, case by case."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .conftest import OriginalEval


def batchgate(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "batchgate_gym", *args, "--no-progress", "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)["policies"]


def _same(ours: dict, theirs: dict, name: str, figures: tuple[str, ...]) -> None:
    assert set(ours["per_case"]) == set(theirs["per_case"]), name
    for case_id, expected in theirs["per_case"].items():
        got = ours["per_case"][case_id]
        for figure in figures:
            assert got[figure] == pytest.approx(expected[figure], abs=1e-9), (name, case_id, figure)
    # The report prints means to 4 decimals; the per-case rewards give the exact one.
    rewards = [case["reward"] for case in ours["per_case"].values()]
    assert sum(rewards) / len(rewards) == pytest.approx(theirs["mean_reward"], abs=1e-12), name
    assert ours["mean_reward"] == round(theirs["mean_reward"], 4), name


@pytest.mark.parametrize("command", ["report", "attacks"])
def test_the_original_rules_give_the_originals_figures_per_case(
    command: str, original_eval: OriginalEval
) -> None:
    extra = ["--policies", "naive,careful,refuse-all"] if command == "report" else []
    cases = str(original_eval.cases)
    ours = batchgate(command, "--desk", "refund", "--cases", cases, "--rules", "original", *extra)
    # attacks also shows our further attackers, which the original never measured.
    names = (
        ("naive", "careful", "refuse-all")
        if command == "report"
        else tuple(n for n in ours if n in original_eval.policies)
    )
    assert len(names) == (3 if command == "report" else 7)
    for name in names:
        _same(ours[name], original_eval.policies[name], name, original_eval.figures)


def test_the_default_rules_change_exactly_the_rows_measured(original_eval: OriginalEval) -> None:
    ours = batchgate("attacks", "--desk", "refund", "--cases", str(original_eval.cases))
    for name, changed in original_eval.improved_rules.items():
        if name not in ours:
            continue
        assert ours[name]["mean_reward"] == round(changed["mean_reward"], 4), name
        for case_id, row in changed["per_case"].items():
            for figure in original_eval.figures:
                assert ours[name]["per_case"][case_id][figure] == pytest.approx(row[figure], abs=1e-9)


def test_an_option_the_desk_lacks_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "batchgate_gym", "report", "--rules", "original", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0 and "has no option --rules" in done.stderr


def test_recovery_on_the_command_line_plays_what_the_env_keyword_plays() -> None:
    from batchgate_gym.evaluation import evaluate
    from batchgate_gym.policies.refund.recovery import RECOVERY_POLICIES
    from batchgate_gym.policies.refund.reference import REFERENCE_POLICIES

    known = {**REFERENCE_POLICIES, **RECOVERY_POLICIES}
    names = ("careful", "notice-and-void")
    ours = batchgate("report", "--desk", "refund", "--recovery", "on", "--policies", ",".join(names))
    for name in names:
        direct = evaluate(
            known[name], split="eval", desk="refund", env_kwargs={"recovery": True}, progress=False
        )
        rewards = {e.case_id: e.reward for e in direct.episodes}
        assert {c: row["reward"] for c, row in ours[name]["per_case"].items()} == rewards, name
    # Voiding is what notice-and-void does differently: off, its void is an unknown tool.
    off = batchgate("report", "--desk", "refund", "--policies", "notice-and-void")
    assert off["notice-and-void"]["mean_reward"] < ours["notice-and-void"]["mean_reward"]


def test_the_team_with_recovery_plays_its_attackers_below_careful_claim() -> None:
    """``team --recovery on`` plays every worker's env with ``void_refund`` and adds the team's
    attackers, each as the env keyword plays it and at least 0.05 below careful-claim."""
    from batchgate_gym.app.team import run_team
    from batchgate_gym.policies.refund.team import TEAM_ATTACKERS

    seeds = 40
    table = batchgate("team", "--desk", "refund", "--recovery", "on", "--seeds", str(seeds))
    assert list(table)[-len(TEAM_ATTACKERS) - 1 : -1] == list(TEAM_ATTACKERS) == ["void-earlier"]
    assert table["careful-claim"]["mean_reward"] == 1.0 and table["careful-claim"]["below_target"] is None
    for name, policy in TEAM_ATTACKERS.items():
        results, _ = run_team(policy, range(seeds), desk="refund", n_agents=2, recovery=True)
        mean = round(sum(result.reward for result in results) / seeds, 4)  # as the table rounds it
        assert table[name]["mean_reward"] == mean
        assert table[name]["below_target"] == pytest.approx(1.0 - mean, abs=1e-9)
        assert table[name]["below_target"] >= 0.05
        assert table[name]["recovered_cents"] > 0 and table[name]["false_blocks"] > 0
    # Without recovery the voids would be refused and the attacker would play careful-claim.
    off = batchgate("team", "--desk", "refund", "--seeds", "1")
    assert "void-earlier" not in off and all("below_target" not in row for row in off.values())


def test_options_the_env_refuses_together_end_the_command_with_its_reason() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "batchgate_gym",
            "report",
            "--desk",
            "refund",
            "--recovery",
            "on",
            "--rules",
            "original",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert done.stderr.strip() == (
        "batchgate report: recovery (the void_refund tool) is only for the default rules: the original"
        " rules had no way to take a payment back; choose one of the two"
    )
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("command", "takes_them"),
    [("report", True), ("attacks", True), ("play", True), ("run-model", True), ("team", True)]
    + [("bench", False), ("serve", False)],
)
def test_only_commands_that_play_the_desks_env_take_its_options(
    command: str, takes_them: bool, capsys
) -> None:
    """``--rules`` and ``--recovery`` set the desk's environment: a command that does not play
    it (the benchmark, the scripted server) refuses them instead of running without them.
    The team command parses them and refuses, before any work, those its game does not
    take (``test_unused_options.py``)."""
    from batchgate_gym.app.cli import build_parser

    needed = {
        "run-model": ["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--out", "out.jsonl"],
        "serve": ["--policy", "careful"],
    }.get(command, [])
    argv = [command, "--desk", "refund", "--recovery", "on", "--rules", "default", *needed]
    if takes_them:
        args = build_parser().parse_args(argv)
        assert (args.recovery, args.rules) == ("on", "default")
        return
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(argv)
    assert stopped.value.code == 2
    assert "unrecognized arguments: --recovery on --rules default" in capsys.readouterr().err


def test_tickets_on_the_command_line_draws_the_queues_the_env_keyword_draws() -> None:
    """``attacks --seeds N --tickets K`` plays the queues ``RefundDeskEnv(tickets=K)`` draws for
    seeds 0..N-1: careful's per-case rewards equal the keyword's, case by case."""
    from batchgate_gym.evaluation import evaluate
    from batchgate_gym.policies.refund.reference import REFERENCE_POLICIES

    ours = batchgate("attacks", "--desk", "refund", "--seeds", "4", "--tickets", "3")
    direct = evaluate(
        REFERENCE_POLICIES["careful"],
        seeds=range(4),
        desk="refund",
        env_kwargs={"tickets": 3},
        progress=False,
    )
    assert {c: row["reward"] for c, row in ours["careful"]["per_case"].items()} == {
        e.case_id: e.reward for e in direct.episodes
    }
    one = batchgate("attacks", "--desk", "refund", "--seeds", "4")
    assert ours["cut-after-first"]["per_case"] != one["cut-after-first"]["per_case"]  # queues: other cases


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "--desk", "refund", "--tickets", "2"],
        ["attacks", "--desk", "refund", "--tickets", "2"],
        ["play", "--desk", "refund", "--split", "eval", "--tickets", "2"],
    ],
)
def test_tickets_with_fixed_cases_is_refused_with_the_reason(argv: list[str]) -> None:
    from batchgate_gym.app.cli import main

    with pytest.raises(SystemExit, match="--tickets shapes the procedural cases drawn"):
        main(argv)


def test_play_draws_a_queue_with_tickets() -> None:
    from batchgate_gym.app.cli import build_parser
    from batchgate_gym.app.play import build_env

    env, reset = build_env(
        build_parser().parse_args(["play", "--desk", "refund", "--seed", "5", "--tickets", "3"])
    )
    env.reset(**reset)
    assert len(env.unwrapped.world.case.tickets) == 3
    env.close()
