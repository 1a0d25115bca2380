"""--help as a terminal shows it: no docstring markup, defaults as values, the desks listed."""

from __future__ import annotations

import re

import pytest

from batchgate_gym.app.cli import build_parser, command_parsers
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
