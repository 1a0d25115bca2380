"""AnalystDesk as a Gymnasium environment with text actions and observations.

The environment is the shared :class:`~batchgate_gym.envs.text_env.TextDeskEnv` with the analyst
desk's adapter; this module adds the desk's arguments and their checks.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from typing import Any

# First: without the analyst extra, one line naming it rather than an error from polars.
from batchgate_gym.desks.analyst import (
    TURNS,
    dependencies,  # noqa: F401
)
from batchgate_gym.desks.analyst.cases import AnalystCase
from batchgate_gym.desks.analyst.prompt import task_text
from batchgate_gym.desks.analyst.replay import score_live
from batchgate_gym.desks.analyst.sources import case_source
from batchgate_gym.desks.analyst.tools import ANALYST_ENDING
from batchgate_gym.desks.analyst.world import AnalystWorld
from batchgate_gym.kernel.case_sources import CaseSource, cases_or_split
from batchgate_gym.kernel.episode import EpisodeLimits

from ..text_env import DeskAdapter, TextDeskEnv, checked_settings

ANALYST_LIMITS = EpisodeLimits(max_turns=TURNS)


def analyst_case_info(case: AnalystCase) -> dict[str, Any]:
    """The case's fields of the last ``info``: id, template (as ``family``), level and store."""
    return {"case_id": case.case_id, "family": case.family, "level": case.level, "store": case.store}


def analyst_adapter(
    source: CaseSource, log_key: bytes | None = None
) -> DeskAdapter[AnalystWorld, AnalystCase]:
    return DeskAdapter(
        make_world=functools.partial(AnalystWorld, log_key=log_key),
        source=source,
        task_text=task_text,
        score=score_live,
        case_info=analyst_case_info,
        ending=ANALYST_ENDING,
        close_world=AnalystWorld.close,
    )


class AnalystDeskEnv(TextDeskEnv[AnalystWorld, AnalystCase]):
    """Answer one business question from a shop's data, with evidence, or decline it.

    The data (a procedural marketplace: customers, sellers, products, orders,
    order_items, payments, reviews, with planted dirt; at level 7, TPC-H generated
    locally at scale factor 0.01) sits in one store, or two at level 4: ``sqlite`` (the kernel's guarded SQLite), ``duckdb`` (a DuckDB database
    opened read-only), ``lake`` (Parquet through DuckDB) or ``files`` (CSV and JSON
    through DuckDB), each started by the environment, bounded and read-only.

    **Action space** ``Text(max_length=65536)`` over printable ASCII plus tab and
    newline: one or more tool calls in call syntax or JSON. Any ``str`` is accepted;
    a malformed action runs nothing and yields an error observation.

    Tools: ``list_tables(store)``, ``describe_table(store, table)``,
    ``run_sql(store, query)`` (one SELECT, at most 50 rows back, bounded in time and
    memory), ``submit_answer(answer, evidence)`` (the answer as JSON text; the
    evidence a JSON list of ``{"store", "query"}``) and ``decline(reason)``; the
    last two end the episode.

    **Observation space** ``Text(max_length=max_observation_chars)``: the task
    (brief, stores, tools, answer shape, question) after ``reset``; ``turn t of T``
    and each call with its JSON result after ``step``.

    **Reward** 0 until the episode ends; then ``0.45 correct + 0.10 partial_credit
    + 0.25 evidence_reproduces + 0.20 abstention_correct``, recomputed from the log
    and a re-run of the cited queries (:mod:`batchgate_gym.desks.analyst.grader`).

    **Info** ``turn`` and ``calls`` every step; reset's adds ``case_id``, ``family`` and
    ``split`` (``cases``: the file; ``seed``: the case seed of a procedural case); the last adds ``case_id``,
    ``family`` (the template), ``level``, ``store``, ``score`` (reward, terms and
    the metrics ``fully_supported``, ``wrong_answers``, ``infra_errors``),
    ``log_intact``, ``log_entries`` and ``log_head``.

    **Arguments** ``cases``: ``None`` (a procedural case per reset; knobs
    ``level``, ``template``, ``store``, ``scale`` as arguments or reset options,
    and ``case_seed``), a split name (``"eval"``, 108 cases over levels 1 to 7;
    ``"train"``, 420; ``"tpch"``, 28; ``"chdb"``, 26), a JSONL path, a list of case
    dicts or cases, or a source; ``split`` names a split too (``split="eval"`` is
    ``cases="eval"``; give one of the two). ``max_turns`` (16),
    ``max_calls_per_step`` (32), ``max_observation_chars`` (65,536) (each ``None`` for its default), ``log_key``,
    ``render_mode`` (``"ansi"``, ``"human"``). Bounds are checked before anything is built.
    """

    def __init__(
        self,
        cases: str | os.PathLike[str] | Iterable[Any] | CaseSource | None = None,
        *,
        split: str | None = None,
        max_turns: int | None = None,
        max_calls_per_step: int | None = None,
        max_observation_chars: int | None = None,
        log_key: bytes | None = None,
        render_mode: str | None = None,
        **knobs: Any,
    ) -> None:
        limits = checked_settings(
            render_mode,
            self.metadata["render_modes"],
            ANALYST_LIMITS,
            max_turns,
            max_calls_per_step,
            max_observation_chars,
        )
        if log_key is not None and (not isinstance(log_key, bytes) or not log_key):
            raise ValueError("log_key must be None or non-empty bytes")
        source = case_source(cases_or_split(cases, split), **knobs)
        super().__init__(analyst_adapter(source, log_key), limits, render_mode=render_mode)


__all__ = ["AnalystDeskEnv", "analyst_adapter", "analyst_case_info"]
