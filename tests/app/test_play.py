"""batchgate play: a person's session, driven through a real pseudo-terminal."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time

import pytest
from conftest import FIXTURE_CASES

from batchgate_gym.app.cli import main
from batchgate_gym.app.play import PROMPT, SCORE_BANNER, play, score_text
from batchgate_gym.envs import BatchGateEnv

CASE = "eval-blank-amount-0"
pytestmark = pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")


class Terminal:
    """A child process on a pseudo-terminal: read until a marker, type a line."""

    def __init__(self, *args: str) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "batchgate_gym", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**os.environ, "TERM": "dumb"},
            close_fds=True,
        )
        os.close(slave)
        self.seen = ""

    def read_until(self, marker: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while marker not in self.seen:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"{marker!r} never appeared; got {self.seen[-500:]!r}")
            ready, _, _ = select.select([self.master], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    break
                self.seen += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        head, _, self.seen = self.seen.partition(marker)
        return head

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> int:
        try:
            return self.process.wait(timeout=30)
        finally:
            os.close(self.master)


def expected_reward(actions: list[str]) -> float:
    env = BatchGateEnv(str(FIXTURE_CASES))
    env.reset(options={"case_id": CASE})
    for action in actions:
        _, reward, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            return reward
    raise AssertionError("the actions did not end the episode")


def test_play_through_a_pty_prints_the_score():
    env = BatchGateEnv(str(FIXTURE_CASES))
    env.reset(options={"case_id": CASE})
    batches = [b.batch_id for b in env.world.case.batches]
    actions = [
        "list_batches()",
        f'profile_batch("{batches[0]}")',
        f'load_batch("{batches[0]}")',
        f'quarantine_batch("{batches[1]}", "amount", "missing_value")',
        f'submit_report(loaded=["{batches[0]}"], quarantined=["{batches[1]}"])',
    ]
    terminal = Terminal("play", "--cases", str(FIXTURE_CASES), "--case", CASE)
    task = terminal.read_until(PROMPT)
    assert "Tools:" in task and "list_batches()" in task
    for action in actions:
        terminal.type(action)
        answer = terminal.read_until(PROMPT if action != actions[-1] else SCORE_BANNER)
        assert "turn " in answer
    score = terminal.read_until("revenue error:")
    assert terminal.close() == 0
    reward = float(re.search(r"reward (\d\.\d{4})", score).group(1))
    assert reward == round(expected_reward(actions), 4)
    assert f"case {CASE}" in score


def test_quit_ends_without_a_report():
    terminal = Terminal("play", "--cases", str(FIXTURE_CASES), "--case", CASE)
    terminal.read_until(PROMPT)
    terminal.type("list_batches()")
    terminal.read_until(PROMPT)
    terminal.type(":quit")
    rest = terminal.read_until("nothing is scored")
    assert SCORE_BANNER not in rest
    assert terminal.close() == 0


def test_end_of_input_and_blank_lines():
    lines = iter(["", "   ", "read_contract()"])
    shown: list[str] = []

    def read_line(prompt: str) -> str:
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    env = BatchGateEnv(str(FIXTURE_CASES))
    info = play(env, {"options": {"case_id": CASE}}, read_line, shown.append)
    assert info["turn"] == 1  # blank lines are not turns
    assert '"reporting_window"' in shown[2]
    assert shown[-1] == "Stopped before 'report submitted': the episode did not end, and nothing is scored."


def test_score_text_lists_every_term():
    info = {
        "case_id": "c",
        "family": "f",
        "defective_batches": 1,
        "score": {
            "reward": 0.5,
            "disposition": 1.0,
            "report": 0.0,
            "evidence": 0.0,
            "inspected": 0.0,
            "bad_batches_loaded": 0,
            "revenue_error_usd": 1234.5,
        },
    }
    text = score_text(info)
    for term in ("disposition", "report", "evidence", "inspected"):
        assert term in text
    assert "$1,234.50" in text and "reward 0.5000" in text


@pytest.mark.parametrize(
    ("argv", "turns", "ending"),
    [
        ((), 30, "report submitted"),
        (("--desk", "refund"), 12, "customer replied"),
        (("--desk", "refund", "--tickets", "4"), 48, "customer replied"),
        (("--desk", "analyst"), 16, "answer handed in"),
        (("--desk", "refund", "--max-turns", "5"), 5, "customer replied"),
    ],
)
def test_play_states_the_desks_own_turn_budget_and_ending(argv, turns, ending, monkeypatch, capsys):
    monkeypatch.setattr("builtins.input", lambda prompt: ":quit")
    assert main(["play", "--seed", "1", *argv]) == 0
    shown = capsys.readouterr().out
    assert f"You have {turns} turns." in shown  # the task text, from the environment
    assert f"the episode ends at '{ending}' or after turn {turns}." in shown
    assert shown.rstrip().endswith(
        f"Stopped before '{ending}': the episode did not end, and nothing is scored."
    )
