"""Every table in the README is the output of the command its markers name."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
BLOCK = re.compile(r"<!-- begin: (?P<command>.+?) -->\n(?P<body>.*?)\n<!-- end: (?P=command) -->", re.S)
BLOCKS = [(m["command"], m["body"]) for m in BLOCK.finditer(README)]


def test_readme_has_pinned_blocks():
    commands = [command for command, _ in BLOCKS]
    assert "batchgate report" in commands
    assert "batchgate report --cases tests/data/seed_eval_curated.jsonl" in commands


RECORDED = "recorded: "


@pytest.mark.parametrize(("command", "body"), BLOCKS, ids=[c for c, _ in BLOCKS])
def test_block_is_the_commands_output(command, body):
    if command.startswith(RECORDED):
        # Too slow or machine-dependent to rerun here (training, timing): the block
        # must be what the command wrote to its committed output file.
        recorded = (ROOT / command.removeprefix(RECORDED)).read_text()
        assert body.strip() in recorded
        return
    words = shlex.split(command)
    assert words[0] == "batchgate"
    out = subprocess.run(
        [sys.executable, "-m", "batchgate_gym", *words[1:]],
        cwd=ROOT,
        env={**os.environ, "BATCHGATE_NO_PROGRESS": "1"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert body.strip() == out.strip()


def test_usage_example_runs():
    example = README.split("## Use it from Python\n\n```python\n", 1)[1].split("```", 1)[0]
    out = subprocess.run(
        [sys.executable, "-c", example], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "'reported': True" in out
