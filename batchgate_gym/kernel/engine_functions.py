"""Which SQL functions an agent's query may call, engine by engine: an allow-list.

Every store an agent queries runs a real engine, and an engine's catalogue grows
with its versions. A guard that lists only what it refuses lets a new version's
new function through until someone notices; so each engine's functions are
sorted here into two lists, the ones an agent needs (allowed) and every other
(refused, each with its reason), and a guard allows only the first. A test reads
each engine's own catalogue (SQLite's ``PRAGMA function_list``, DuckDB's
``duckdb_functions()``, chDB's ``system.functions``) and fails on any function on
neither list, so an engine upgrade that brings a new function fails the tests
until someone sorts it.

This module holds the shape of the lists (:class:`FunctionLists`) and SQLite's,
which the gate and analyst SQLite stores share (:mod:`.sqlguard` applies them);
the analyst desk keeps DuckDB's and chDB's beside their stores.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


def names(text: str) -> frozenset[str]:
    """The names in a block of text, split on white space."""
    return frozenset(text.split())


@dataclass(frozen=True)
class FunctionLists:
    """One engine's functions: those allowed, and those refused with their reasons.

    ``fold_case``: the engine reads function names in any case (SQLite, DuckDB), so
    names are compared lower case; chDB's canonical names keep their case.
    """

    engine: str
    allowed: frozenset[str]
    refused: Mapping[str, frozenset[str]]  # reason -> the functions refused for it
    fold_case: bool = True

    def __post_init__(self) -> None:
        refused = self.refused_names()
        both = sorted(self.allowed & refused)
        if both:
            raise ValueError(f"{self.engine}: functions both allowed and refused: {', '.join(both)}")

    def _name(self, name: str) -> str:
        return name.lower() if self.fold_case else name

    def allows(self, name: str) -> bool:
        """Whether a query may call ``name``; anything not on the allow-list is refused."""
        return self._name(name) in self.allowed

    def refused_names(self) -> frozenset[str]:
        return frozenset().union(*self.refused.values())

    def reason(self, name: str) -> str:
        """Why ``name`` is refused: its list's reason, or that it is on no list."""
        wanted = self._name(name)
        for reason, listed in self.refused.items():
            if wanted in listed:
                return reason
        return f"it is not on the {self.engine} store's list of functions an agent may call"

    def unsorted(self, catalogue: Iterable[str]) -> list[str]:
        """The functions of an engine's own catalogue on neither list, sorted."""
        known = self.allowed | self.refused_names()
        return sorted({self._name(n) for n in catalogue} - known)


SQLITE_CLOCK_AND_CHANCE = names("random current_timestamp current_date current_time")
"""Allowed, but refused under ``deterministic=True``: they read the clock or draw at random."""

SQLITE = FunctionLists(
    "SQLite",
    allowed=names(
        """
        abs acos acosh asin asinh atan atan2 atanh avg ceil ceiling char coalesce cos cosh
        count cume_dist date datetime degrees dense_rank exp first_value floor format glob
        group_concat hex ifnull iif instr json json_array json_array_length json_extract
        json_group_array json_group_object json_insert json_object json_patch json_quote
        json_remove json_replace json_set json_type json_valid julianday lag last_value lead
        length like likelihood likely ln log log10 log2 lower ltrim max min mod nth_value ntile
        nullif percent_rank pi pow power printf quote radians rank replace round row_number
        rtrim sign sin sinh soundex sqrt strftime substr substring sum tan tanh time total trim
        trunc typeof unicode unixepoch unlikely upper -> ->>
        """
    )
    | SQLITE_CLOCK_AND_CHANCE,
    refused={
        "it allocates as much memory as its argument asks": names("zeroblob randomblob"),
        "it loads native code": names("load_extension"),
        "it hands out or registers a native pointer (an FTS3 tokenizer)": names("fts3_tokenizer"),
        "it serves full-text or R-tree tables, which no store here has": names(
            "fts5 fts5_source_id bm25 highlight snippet matchinfo offsets optimize match "
            "rtreecheck rtreedepth rtreenode"
        ),
        "it tells the engine's build, version or connection, not the data": names(
            "sqlite_version sqlite_source_id sqlite_compileoption_get sqlite_compileoption_used "
            "changes total_changes last_insert_rowid subtype"
        ),
        "it writes to the engine's error log": names("sqlite_log"),
    },
)

__all__ = ["SQLITE", "SQLITE_CLOCK_AND_CHANCE", "FunctionLists", "names"]
