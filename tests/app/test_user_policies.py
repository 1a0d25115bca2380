"""A user's own policy on the command line (``report --policy MODULE:ATTR``): found in the
current directory, never silently in place of a reference policy of the same name, and a
policy that raises is named with the case and turn, in one line."""

from __future__ import annotations

import sys

import pytest

from batchgate_gym.app.cli import main

POLICY_MODULE = """
class MyPolicy:
    name = "{name}"

    def reset(self, observation, info):
        pass

    def act(self, observation):
        return "submit_report([], [])"
"""


@pytest.fixture
def in_module_folder(tmp_path, monkeypatch):
    """The current directory holds the user's module, and is not on the path (the console script's case)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [entry for entry in sys.path if entry not in ("", str(tmp_path))])

    def write(module: str, name: str) -> None:
        (tmp_path / f"{module}.py").write_text(POLICY_MODULE.format(name=name))

    return write


def test_a_policy_module_in_the_current_directory_is_found(in_module_folder, capsys):
    in_module_folder("second_hour_mine", "mine")
    assert main(["report", "--policy", "second_hour_mine:MyPolicy", "--policies", "careful", "--quiet"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("|  |"))
    assert header == "|  | careful | mine |"


def test_a_policy_named_as_a_reference_policy_is_refused_not_put_in_its_place(in_module_folder):
    in_module_folder("second_hour_same", "careful")
    with pytest.raises(SystemExit) as stopped:
        main(["report", "--policy", "second_hour_same:MyPolicy", "--policies", "careful", "--quiet"])
    assert stopped.value.code == 2
    assert str(stopped.value).startswith(
        "batchgate report: --policy second_hour_same:MyPolicy is named 'careful', as another policy"
    )


def test_a_policy_that_raises_is_named_with_the_case_and_turn():
    with pytest.raises(SystemExit) as stopped:
        main(["report", "--policy", "os:getcwd", "--quiet"])
    line = stopped.value.code  # a string: exit status 1, a failure while it ran
    assert line.startswith("batchgate report: policy 'getcwd' raised TypeError: ")
    assert line.endswith(" (case eval-clean-control-0, turn 1)") and "\n" not in line
