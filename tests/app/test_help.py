"""--help as a terminal shows it: no docstring markup, defaults as values, the desks listed."""

from __future__ import annotations

import argparse
import importlib.metadata
import re

import pytest

from batchgate_gym.app.cli import build_parser, command_parsers, main
from batchgate_gym.app.helptext import plain
from batchgate_gym.desks import registry
from batchgate_gym.kernel.extras import install_line

COMMANDS = command_parsers(build_parser())
MARKUP = re.compile(r"``|:[a-z]+:`")


def test_the_top_level_help_lists_every_desk_and_the_extra_a_desk_needs():
    text = build_parser().format_help()
    for name, description in registry.descriptions().items():
        assert re.search(rf"^  {name} +{re.escape(description)}", text, re.M), name
    assert install_line("analyst") in text
    assert "(the default)" in text


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_commands_help_has_no_markup_and_shows_defaults_as_values(command):
    text = COMMANDS[command].format_help()
    assert not MARKUP.search(text), MARKUP.search(text)
    assert "default default" not in text and "(default None" not in text
    if any(a.option_strings == ["--desk"] for a in COMMANDS[command]._actions):
        assert "(default: 'gate')" in " ".join(text.split())


def test_plain_takes_the_markup_out():
    assert plain("``batchgate report``: see :mod:`.plots` and :class:`~a.b.Thing`") == (
        "batchgate report: see plots and Thing"
    )


ENV_OPTIONS = ("--rules", "--recovery", "--tickets")  # the refund desk's


def _shown(parser):
    return {o for a in parser._actions if a.help != argparse.SUPPRESS for o in a.option_strings}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_commands_help_names_only_the_options_of_the_desk_it_plays(command):
    assert not _shown(COMMANDS[command]) & set(ENV_OPTIONS), command  # the gate, by default
    refund = command_parsers(build_parser("refund"))[command]
    if command == "team":  # the refund desk's team game takes --recovery alone
        assert _shown(refund) & set(ENV_OPTIONS) == {"--recovery"}
        assert "  batchgate team --desk refund --help\n" in COMMANDS[command].format_help()
    elif any(action.dest == "rules" for action in refund._actions):  # it plays the desk's environment
        assert _shown(refund) >= set(ENV_OPTIONS)
        assert f"  batchgate {command} --desk refund --help: {', '.join(ENV_OPTIONS)}\n" in (
            COMMANDS[command].format_help()
        )


def test_the_refund_desks_options_show_with_desk_refund(capsys):
    with pytest.raises(SystemExit) as done:
        main(["report", "--desk", "refund", "--help"])
    assert done.value.code == 0
    assert "--rules {default,original}" in capsys.readouterr().out


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"batchgate {importlib.metadata.version('batchgate_gym')}\n"


def test_bench_help_says_what_it_measures_not_how_the_package_is_split():
    assert "split by concern" not in COMMANDS["bench"].format_help()


OPTIONS_BLOCK = re.compile(
    r"<!-- options: tests/app/test_help.py -->\n(?P<table>.*?)\n<!-- /options -->", re.S
)


def options_table() -> str:
    """Each command's options as its --help names them: on the default desk, and what
    ``--desk refund`` adds (the analyst desk adds none)."""
    refund = command_parsers(build_parser("refund"))
    rows = ["| command | options | with `--desk refund`, also |", "|---|---|---|"]
    for name, parser in COMMANDS.items():
        shown = [o for a in parser._actions if a.help != argparse.SUPPRESS for o in a.option_strings]
        shown = [o for o in shown if o.startswith("--") and o != "--help"] + [
            o for o in shown if not o.startswith("--") and o != "-h"
        ]
        extra = sorted(_shown(refund[name]) - _shown(parser))
        cells = ", ".join(f"`{o}`" for o in shown) or "(none)"
        rows.append(f"| `{name}` | {cells} | {', '.join(f'`{o}`' for o in extra)} |")
    return "\n".join(rows)


def test_the_commands_page_pins_each_commands_options():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "commands.md").read_text()
    found = OPTIONS_BLOCK.search(page)
    assert found is not None
    assert found["table"] == options_table()
    assert _shown(command_parsers(build_parser("analyst"))["report"]) == _shown(COMMANDS["report"])


def test_the_commands_page_has_the_before_and_after_table_of_the_fourteen():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "commands.md").read_text()
    table = page.split("## Before and after: what a new user met in the second hour\n", 1)[1]
    numbers = [int(line.split("|")[1]) for line in table.splitlines() if re.match(r"^\| \d+ \|", line)]
    assert numbers == list(range(1, 15))
    assert all("`tests/" in line for line in table.splitlines() if re.match(r"^\| \d+ \|", line))
