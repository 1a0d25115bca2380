"""How large a query is once its CTEs are inlined: a compile-time bound no engine sets.

An engine that inlines common table expressions copies a CTE's body wherever the
CTE is named. A chain of CTEs that each name the one before twice doubles at every
level: sixteen levels, under 900 characters, are 65,536 copies of the first, and
SQLite spent 38 seconds compiling them, before its first VM step (where the step
budget starts counting) and without asking the authorizer anything per copy.

:func:`inlined_tokens` counts, from the text alone, the tokens of the statement with
every CTE reference replaced by the CTE's body (itself inlined): the same number on
every machine, computed in time linear in the text. A guard refuses a statement
above its limit before any engine sees it. The reading is deliberately generous to
the attacker's side: every name that matches a CTE defined anywhere in the statement
counts as a reference to it (scopes are not resolved), so nesting cannot hide one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>'(?:[^']|'')*'?)
  | (?P<quoted>"(?:[^"]|"")*"?|`[^`]*`?|\[[^\]]*\]?)
  | (?P<word>[^\W\d][\w$]*)
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
MAX_INLINED_TOKENS = 20_000  # the default limit: an honest query is a few hundred tokens
_WITH_LEADS = frozenset({"with", "recursive", ","})
_MATERIALIZED = frozenset({"not", "materialized"})
# Where a CTE's body could open, in the raw text: "as" (a word, or inside a quoted name),
# then only spaces, comments, the words NOT and MATERIALIZED and quote marks, then "(".
# Every definition :func:`_definitions` finds matches; text that does not has none
# (a match in a string or a longer word only sends the text to the full count).
# It is matched against the text lowered: the words are ASCII keywords (a name is
# lowered to be compared with them), and a case-sensitive scan of lowered text costs
# a fifth of a case-insensitive one.
_BODY_OPENING = re.compile(r"""as(?:\s|/\*.*?\*/|--[^\n]*\n|not|materialized|["`\[\]])*\(""", re.DOTALL)


@dataclass(frozen=True, slots=True)
class _Token:
    text: str  # a name lower case and unquoted; anything else as written
    is_name: bool


def _tokens(sql: str) -> list[_Token]:
    out = []
    for match in _TOKEN.finditer(sql):
        kind = match.lastgroup
        text = match.group()
        if kind in ("space", "comment"):
            continue
        if kind == "word":
            out.append(_Token(text.lower(), True))
        elif kind == "quoted":
            out.append(_Token(text[1:-1].lower() if len(text) > 1 else "", True))
        else:
            out.append(_Token(text, False))
    return out


def _closing(tokens: list[_Token], start: int) -> int:
    """The index of the parenthesis closing the one at ``start`` (or the end)."""
    depth = 0
    for index in range(start, len(tokens)):
        text = tokens[index].text
        if text == "(" and not tokens[index].is_name:
            depth += 1
        elif text == ")" and not tokens[index].is_name:
            depth -= 1
            if depth == 0:
                return index
    return len(tokens) - 1


def _definitions(tokens: list[_Token]) -> dict[int, tuple[str, int, int]]:
    """CTE definitions by the index of their name: ``(name, body start, body end)``."""
    found = {}
    for index, token in enumerate(tokens):
        if not token.is_name or index == 0 or tokens[index - 1].text.lower() not in _WITH_LEADS:
            continue
        at = index + 1
        if at < len(tokens) and tokens[at].text == "(":  # a column list
            at = _closing(tokens, at) + 1
        if at >= len(tokens) or tokens[at].text != "as":
            continue
        at += 1
        while at < len(tokens) and tokens[at].text in _MATERIALIZED:
            at += 1
        if at < len(tokens) and tokens[at].text == "(":
            found[index] = (token.text, at, _closing(tokens, at))
    return found


def inlined_tokens(sql: str) -> int:
    """The statement's token count with every CTE reference replaced by the CTE's body, inlined too.

    A definition's own text counts once, where it is written. Sizes are worked out in
    the order the bodies end (a nested or earlier CTE before the ones that can name
    it), so a name met before its size is known (a recursive CTE naming itself, one
    defined later) counts as one token: engines run a recursive CTE as a loop rather
    than copy it.
    """
    tokens = _tokens(sql)
    definitions = _definitions(tokens)
    bodies = {start: end for _, start, end in definitions.values()}
    sizes: dict[str, int] = {}

    def span(start: int, end: int) -> int:
        count, index = 0, start
        while index < end:
            if index in bodies and index != start - 1:
                count += bodies[index] - index + 1  # a definition: its text, once
                index = bodies[index] + 1
                continue
            token = tokens[index]
            if token.is_name and index not in definitions:
                count += sizes.get(token.text, 1)
            else:
                count += 1
            index += 1
        return count

    for name, start, end in sorted(definitions.values(), key=lambda d: d[2]):
        sizes[name] = max(sizes.get(name, 0), span(start + 1, end))
    return span(0, len(tokens))


def too_large(sql: str, limit: int) -> str | None:
    """Why ``sql`` is refused before compiling (its CTEs inlined, it is over ``limit`` tokens), or ``None``.

    Text with no place a CTE's body could open has no CTE, so its size is its token
    count, never more than its length in characters: text no longer than ``limit``
    passes without being tokenized (most queries, and the answer is the same).
    """
    if len(sql) <= limit and _BODY_OPENING.search(sql.lower()) is None:
        return None
    size = inlined_tokens(sql)
    if size <= limit:
        return None
    return (
        f"query refused before compiling: with its CTEs written out wherever they are used it is "
        f"{size:,} tokens, over the {limit:,} allowed (a CTE named twice in the next, level after level, "
        "doubles each time)"
    )


__all__ = ["MAX_INLINED_TOKENS", "inlined_tokens", "too_large"]
