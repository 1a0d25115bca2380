"""``batchgate serve-env`` and ``batchgate mcp`` refuse what they cannot serve before anything listens."""

from __future__ import annotations

import socket

import pytest

from batchgate_gym.app.cli import main

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install -e '.[mcp]')")


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["serve-env", "--desk", "gate", "--tickets", "3"], "the gate desk has no option --tickets"),
        (
            ["serve-env", "--desk", "refund", "--split", "eval", "--tickets", "3"],
            "shapes the procedural cases",
        ),
        (["serve-env", "--desk", "refund", "--split", "nope"], "has no split 'nope'"),
        (["mcp", "--desk", "gate", "--case", "no-such-case"], "no case with case_id 'no-such-case'"),
        (["mcp", "--desk", "analyst", "--recovery", "on"], "the analyst desk has no option --recovery"),
    ],
)
def test_what_cannot_be_served_ends_the_command_with_the_reason(argv: list[str], reason: str) -> None:
    with pytest.raises(SystemExit) as ended:
        main(argv)
    assert ended.value.code == 2 and reason in str(ended.value)  # a mistake on the command line


@pytest.mark.parametrize(
    "argv",
    [
        ["serve-env", "--protocol", "grpc"],
        ["serve-env", "--idle-timeout", "0"],
        ["serve-env", "--idle-timeout", "inf"],
        ["serve-env", "--max-sessions", "0"],
        ["serve-env", "--port", "70000"],
        ["mcp", "--seed", "1", "--case", "x"],
    ],
)
def test_bad_options_are_refused_by_argparse(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        main(argv)
    assert ended.value.code == 2 and "error:" in capsys.readouterr().err


def test_a_port_in_use_is_named() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit) as ended:
            main(["serve-env", "--protocol", "mcp", "--port", str(port)])
    assert f"cannot listen on 127.0.0.1:{port}" in str(ended.value.code)
