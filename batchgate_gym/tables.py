"""Markdown tables, as every command prints them (and the README and docs pin them)."""

from __future__ import annotations

from collections.abc import Sequence


def markdown_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], *, first: str = "---", rest: str = "---:"
) -> str:
    """A header, its alignment row (``first`` for the label column, ``rest`` for the others), rows."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join([first] + [rest] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def legend(entries: Sequence[tuple[str, str]]) -> str:
    """A table's legend, one line per column: ``- column: what it holds``."""
    return "\n".join(f"- {column}: {meaning}" for column, meaning in entries)


def money(value: float) -> str:
    return f"${value:,.2f}"
