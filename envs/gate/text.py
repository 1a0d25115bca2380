"""BadBatchGate as a Gymnasium environment with text actions and observations.

The environment is the shared :class:`~batchgate_gym.envs.text_env.TextDeskEnv` with the batch
gate's adapter (:func:`gate_adapter`); this module adds the gate's arguments and
their checks.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from typing import Any

from batchgate_gym.desks.gate.cases import Case
from batchgate_gym.desks.gate.generator.build import (
    DEFAULT_BATCHES,
    DEFAULT_DEFECTS_PER_BATCH,
    DEFAULT_ROWS_PER_BATCH,
    KNOB_DEFAULTS,
    check_knobs,
)
from batchgate_gym.desks.gate.prompt import task_text
from batchgate_gym.desks.gate.replay import score_live
from batchgate_gym.desks.gate.sources import CaseSource, case_source
from batchgate_gym.desks.gate.tools import GATE_ENDING
from batchgate_gym.desks.gate.world import GateWorld
from batchgate_gym.kernel.case_sources import cases_or_split
from batchgate_gym.kernel.episode import EpisodeLimits
from batchgate_gym.kernel.sqlguard import SqlBudget

from ..text_env import DeskAdapter, TextDeskEnv, checked_settings

GATE_LIMITS = EpisodeLimits()  # the defaults: 30 turns, in the single-agent and the team game


def gate_case_info(case: Case) -> dict[str, Any]:
    """The case's fields of the last ``info``, in the single-agent and the team game."""
    return {
        "case_id": case.case_id,
        "family": case.family,
        "batches": len(case.batches),
        "defective_batches": case.n_defective,
    }


def _close_world(world: GateWorld) -> None:
    world.close()


def gate_adapter(
    source: CaseSource, sql_budget: SqlBudget | None = None, log_key: bytes | None = None
) -> DeskAdapter[GateWorld, Case]:
    """The batch gate as a text desk: its world, task text, live score and wording."""
    return DeskAdapter(
        make_world=functools.partial(GateWorld, sql_budget, log_key),
        source=source,
        task_text=task_text,
        score=score_live,
        case_info=gate_case_info,
        ending=GATE_ENDING,
        close_world=_close_world,
    )


class BatchGateEnv(TextDeskEnv[GateWorld, Case]):
    """Gate a nightly warehouse load: inspect staged batches, load or quarantine, report.

    **Action space** ``Text(max_length=65536)`` over printable ASCII plus tab and
    newline (the length is ``MAX_ACTION_CHARS`` of :mod:`batchgate_gym.kernel.codec`,
    the limit the action parser enforces). An action is a string of one or more
    tool calls, in call syntax (``load_batch("B-1")``) or JSON (``{"name": ...,
    "arguments": {...}}`` or a list of those). Any ``str`` is accepted: a malformed
    action (unknown tool, bad arguments, unparsable text, over 65,536 characters)
    yields an error observation that shows the accepted syntax, and is logged as a
    refused call.

    **Observation space** ``Text(max_length=max_observation_chars)``, same charset
    (other characters arrive escaped). After ``reset`` it is the whole task: the
    brief, the seven tools with signatures, the action syntax and the case prompt.
    After ``step`` it is ``turn t of T`` followed by each call and its JSON result.
    Every observation, the reset one included, holds at most
    ``max_observation_chars`` characters: a longer one keeps its head and ends in
    a marker giving the number of characters dropped.

    **Reward** 0 on every step except the one that submits the report: that step
    terminates the episode and pays the weighted score
    ``0.50 disposition + 0.20 report + 0.15 evidence + 0.15 inspected`` (in [0, 1]),
    recomputed from the warehouse and the environment's hash-chained log.

    **Termination** on ``submit_report``. **Truncation** after ``max_turns`` steps
    without a report, with reward 0 (no report, no credit).

    **Info** a fresh dict each call: ``turn`` and ``calls`` (calls run this step).
    Reset's adds the case's ``case_id`` and ``family`` and where it came from:
    ``split`` (``cases``: the file) or ``seed``, the case seed of a procedural case.
    Nothing about the truth appears before the end; the last step adds ``case_id``, ``family``, ``score`` (reward, the four terms,
    ``bad_batches_loaded``, ``revenue_error_usd``), ``log_intact``,
    ``log_entries`` and ``log_head`` (the log's last hash, to pin it on replay).

    **Arguments**
    ``cases``: ``None`` (default: a fresh procedural case per reset, from the eight
    families), a JSONL path, a list of case dicts or :class:`Case` objects, or any
    case source; ``split``: ``"eval"`` (32 cases) or ``"train"`` (320). Scale knobs
    for procedural cases: ``family``, ``variant``, ``rows_per_batch`` (a number or
    a ``(low, high)`` pair; default ``(3, 20)``), ``batches`` (per case, default 2)
    and ``defects_per_batch`` (default 1). ``max_turns`` (30),
    ``max_calls_per_step`` (32), ``max_observation_chars`` (65,536) (each ``None`` for its default), ``sql_budget``,
    ``log_key`` (bytes: the log is chained with HMAC-SHA256 under this key, so that
    only its holder can produce a log that replays) and ``render_mode`` (``"ansi"``:
    :meth:`render` returns the transcript; ``"human"``: it is printed as it grows).

    **Bounds** checked before anything is built (a ``ValueError`` names the
    argument and its bound): ``rows_per_batch`` an int or a ``(low, high)`` pair of
    ints, ``1 <= low <= high <= 100_000``; ``batches`` 2 to 12; ``defects_per_batch``
    1 to 9 (a customers batch carries at most its table's 5); ``family`` ``None`` or
    one of the eight family names; ``variant`` ``None`` or, with ``family`` only, 0
    to ``variants(family) - 1``; ``case_seed`` an int in ``[-2**63, 2**63)``;
    ``max_turns`` 1 to 10,000; ``max_calls_per_step`` 1 to 1,000;
    ``max_observation_chars`` 256 to 1,048,576. Booleans are not accepted as ints.
    The same check applies to the knobs given as reset options.

    ``reset(seed=..., options=...)`` picks a case: for fixed cases
    ``{"case_id": ...}`` or ``{"case_index": ...}``; for procedural ones any scale
    knob above or ``{"case_seed": ...}``. Without options the case is drawn with
    ``self.np_random``, so the same seed gives the same case in any process.
    """

    def __init__(
        self,
        cases: str | os.PathLike[str] | Iterable[Any] | CaseSource | None = None,
        *,
        split: str | None = None,
        family: str | None = None,
        variant: int | None = None,
        rows_per_batch: int | tuple[int, int] = DEFAULT_ROWS_PER_BATCH,
        batches: int = DEFAULT_BATCHES,
        defects_per_batch: int = DEFAULT_DEFECTS_PER_BATCH,
        max_turns: int | None = None,
        max_calls_per_step: int | None = None,
        max_observation_chars: int | None = None,
        sql_budget: SqlBudget | None = None,
        log_key: bytes | None = None,
        render_mode: str | None = None,
    ) -> None:
        # Every argument is checked before anything is built or read.
        limits = checked_settings(
            render_mode,
            self.metadata["render_modes"],
            GATE_LIMITS,
            max_turns,
            max_calls_per_step,
            max_observation_chars,
        )
        knobs = check_knobs(
            family=family,
            variant=variant,
            rows_per_batch=rows_per_batch,
            batches=batches,
            defects_per_batch=defects_per_batch,
        )
        cases = cases_or_split(cases, split)
        procedural_only = {k: v for k, v in knobs.items() if v != KNOB_DEFAULTS[k]}
        source = case_source(cases, **(knobs if cases is None else procedural_only))
        super().__init__(gate_adapter(source, sql_budget, log_key), limits, render_mode=render_mode)


__all__ = ["BatchGateEnv", "gate_adapter", "gate_case_info"]
