"""Progress bars: tqdm on stderr, only on a terminal, never with --quiet or BATCHGATE_NO_PROGRESS=1."""

from __future__ import annotations

import io
import sys

import pytest

from batchgate_gym.app.cli import build_parser, command_parsers
from batchgate_gym.evaluation import progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch):
    """stderr as a terminal (set in the test itself: pytest's capture resets it after fixtures)."""
    monkeypatch.delenv("BATCHGATE_NO_PROGRESS", raising=False)
    screen = Terminal()
    return lambda: monkeypatch.setattr(sys, "stderr", screen) or screen


def test_a_bar_is_drawn_on_a_terminal_on_stderr(terminal):
    terminal = terminal()
    with progress.bar(3, "careful", enabled=True) as shown:
        assert not shown.disable and shown.fp is not sys.stdout
        shown.update(3)
        shown.refresh()
    assert "careful" in terminal.getvalue() and "3/3" in terminal.getvalue()


def test_no_bar_with_quiet_off_a_terminal_or_when_switched_off(terminal, monkeypatch):
    terminal()
    assert progress.wanted(True)
    assert not progress.wanted(False)  # --quiet
    monkeypatch.setenv("BATCHGATE_NO_PROGRESS", "1")
    assert not progress.wanted(True)
    monkeypatch.delenv("BATCHGATE_NO_PROGRESS")
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a pipe or a log file
    assert not progress.wanted(True)
    with progress.bar(3, "careful") as shown:
        assert shown.disable


@pytest.mark.parametrize("command", ["report", "attacks", "team"])
def test_long_commands_take_quiet_and_the_old_no_progress(command):
    parser = command_parsers(build_parser())[command]
    assert parser.parse_args(["--quiet"]).quiet and parser.parse_args(["--no-progress"]).quiet
    assert not parser.parse_args([]).quiet
