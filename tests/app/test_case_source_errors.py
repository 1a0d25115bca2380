"""A command pointed at cases it cannot have stops with the reason, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from batchgate_gym.app.cli import main
from batchgate_gym.desks import registry
from batchgate_gym.evaluation import evaluate
from batchgate_gym.policies.gate.reference import CarefulPolicy


def _broken(tmp_path: Path) -> Path:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"case_id": 3}\n')
    return path


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (
            ["report", "--desk", "refund", "--split", "tpch"],
            "desk 'refund' has no split 'tpch'; splits: eval, train, holdout",
        ),
        (["attacks", "--split", "nope"], "desk 'gate' has no split 'nope'"),
        (["play", "--split", "nope"], "desk 'gate' has no split 'nope'"),
        (["play", "--case", "no-such-case"], "no case with case_id 'no-such-case'"),
        (
            ["report", "--cases", "{missing}"],
            "missing.jsonl' is neither a split (eval, train, holdout) nor an existing case file",
        ),
        (["attacks", "--desk", "refund", "--cases", "{broken}"], "broken.jsonl:1: field 'case_id'"),
        (["report", "--cases", "{broken}"], "broken.jsonl:1: field 'warehouse': missing"),
    ],
)
def test_the_command_names_what_is_wrong_and_exits_non_zero(
    tmp_path: Path, argv: list[str], reason: str
) -> None:
    paths = {"{missing}": str(tmp_path / "missing.jsonl"), "{broken}": str(_broken(tmp_path))}
    command = argv[0]
    with pytest.raises(SystemExit) as stopped:
        main([paths.get(arg, arg) for arg in argv] + (["--no-progress"] if command != "play" else []))
    message = str(stopped.value)
    assert stopped.value.code == 2  # a mistake on the command line, as argparse's own refusals
    assert message.startswith(f"batchgate {command}: ") and reason in message


def test_python_callers_get_the_same_reason_as_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(registry.CaseSourceError, match="has no split 'nope'") as raised:
        evaluate(CarefulPolicy, split="nope", progress=False)
    assert isinstance(raised.value, ValueError)  # what evaluate raised for it before
    with pytest.raises(ValueError, match="field 'warehouse': missing"):
        evaluate(CarefulPolicy, cases=str(_broken(tmp_path)), progress=False)
