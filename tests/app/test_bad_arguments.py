"""Numbers and policies a command cannot use are refused up front, with the reason."""

from __future__ import annotations

import pytest

from batchgate_gym.app.cli import main


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["report", "--jobs", "0"], "argument --jobs: must be an integer 1 or more, not 0"),
        (["report", "--jobs", "x"], "argument --jobs: 'x' is not an integer"),
        (["attacks", "--seeds", "-1"], "argument --seeds: must be an integer 1 or more, not -1"),
        (["play", "--seed", "-1"], "argument --seed: must be an integer 0 or more, not -1"),
        (["play", "--max-turns", "0"], "argument --max-turns: must be an integer 1..10000, not 0"),
        (["team", "--agents", "0"], "argument --agents: must be an integer 1 or more, not 0"),
        (["team", "--overlap", "2"], "argument --overlap: must be a number in [0, 1], not 2"),
        (["bench", "--repeats", "0"], "argument --repeats: must be an integer 1 or more, not 0"),
        (["serve", "--policy", "careful", "--port", "99999"], "argument --port: must be an integer 1..65535"),
    ],
)
def test_argparse_refuses_out_of_range_numbers(argv: list[str], reason: str, capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert reason in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (
            ["report", "--policy", "no_such_module_here:X"],
            "--policy no_such_module_here:X: no module 'no_such_module_here' in the current directory",
        ),
        (["report", "--policy", "os:no_such_name"], "module 'os' has no attribute 'no_such_name'"),
        (["report", "--policy", "os:path"], "--policy os:path: not a policy"),
        (
            ["team", "--agents", "13", "--seeds", "1"],
            "batchgate team: n_agents must be an int in 1..12, not 13",
        ),
        (
            ["team", "--desk", "refund", "--agents", "9", "--seeds", "1"],
            "n_agents must be an int in 1..8, not 9",
        ),
    ],
)
def test_what_only_the_command_can_check_ends_it_with_the_reason(argv: list[str], reason: str) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2 and reason in str(stopped.value)  # a mistake on the command line
