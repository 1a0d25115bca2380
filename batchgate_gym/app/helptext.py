"""Help text as a terminal shows it: docstrings without their markup, defaults as values.

The commands' descriptions are their modules' docstrings, written in the
reStructuredText of the API docs (````batchgate report````, ``:mod:`.plots```).
:func:`plain` turns them into the text a person reads in ``--help``, and
:class:`TerminalHelp` wraps each paragraph on its own (argparse would run them all
into one) and ends every option's help with its default value.
"""

from __future__ import annotations

import argparse
import re

_ROLE = re.compile(r":[a-z]+:`(?P<tilde>~?)(?P<target>[^`<]+?)(?:\s*<[^>]*>)?`")
_LITERAL = re.compile(r"``(?P<text>[^`]+)``")
_LEADING_NAME = re.compile(r"^``batchgate [a-z-]+``:\s*")


def _role_text(match: re.Match[str]) -> str:
    target = match["target"].lstrip(".")
    return target.rsplit(".", 1)[-1] if match["tilde"] else target


def plain(text: str) -> str:
    """``text`` with the docstring markup taken out: literals and cross-references
    become the words they show (``:class:`~a.B``` becomes ``B``)."""
    return _LITERAL.sub(lambda m: m["text"], _ROLE.sub(_role_text, text))


def description(doc: str | None, fallback: str) -> str:
    """A command's ``--help`` description from its module docstring: the whole text,
    plain, without the ````batchgate NAME``:`` its first line opens with."""
    if not doc:
        return fallback
    first, _, rest = doc.strip().partition("\n")
    first = _LEADING_NAME.sub("", first)
    return plain(f"{first[:1].upper()}{first[1:]}\n{rest}")


class TerminalHelp(argparse.HelpFormatter):
    """Paragraphs wrapped one by one (a list, its lines indented, kept as written), and each
    option's default shown as its value: ``(default: 200)``, ``(default: 'eval')``."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = re.split(r"\n\s*\n", text.strip())
        out = []
        for paragraph in paragraphs:
            lines = paragraph.splitlines()
            if any(line.startswith("  ") for line in lines[1:]):  # a list under its heading: as written
                out.append("\n".join(indent + line for line in lines))
            else:
                out.append(super()._fill_text(paragraph, width, indent))
        return "\n\n".join(out)

    def _get_help_string(self, action: argparse.Action) -> str:
        help_text = action.help or ""
        default = action.default
        shown = default not in (None, False, argparse.SUPPRESS, []) and action.option_strings
        if shown and "default" not in help_text:
            value = repr(default) if isinstance(default, str) else str(default)
            help_text += " (default: " + value.replace("%", "%%") + ")"
        return help_text
