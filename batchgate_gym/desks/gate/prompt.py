"""The text an agent starts from: its job, its tools, how to call them, the case."""

from __future__ import annotations

import functools

from batchgate_gym.kernel.codec import escape, tool_lines

from .cases import Case
from .tools import GATE_TOOLS

_BRIEF = """\
You gate tonight's warehouse load. Batches of rows wait in staging. For each batch,
either load it into the warehouse or quarantine it, citing the column and defect
type that break the data contract; then submit a report of what you did. The
loader accepts anything and always answers "errors: 0", so a bad batch you load
silently becomes a wrong revenue number. Loads cannot be undone; a batch that is
loaded and then quarantined stays loaded. Check the batches before you act.

Your score is computed from what actually reached the warehouse and from the
environment's own log of your tool calls, not from what you say. The episode ends
when you submit the report; without a report, nothing counts."""

_SYNTAX = """\
How to act: each turn, send one or more tool calls, either as calls (one per line
or separated by ";"):
  list_batches()
  quarantine_batch(batch_id="B-1", column="amount", defect_type="missing_value")
or as JSON: {"name": "load_batch", "arguments": {"batch_id": "B-1"}}, or a JSON
list of such objects. Calls run in order; each result comes back as JSON."""


def task_text(case: Case, max_turns: int) -> str:
    """The reset observation; made once per case and turn limit."""
    return case.derived(("task_text", max_turns), lambda: _task_text(case, max_turns))


def _task_text(case: Case, max_turns: int) -> str:
    return _head(max_turns) + escape(case.prompt)


@functools.lru_cache(maxsize=16)
def _head(max_turns: int) -> str:
    """Everything before the case's prompt, the same for every case (inside the charset:
    escaping it, then the prompt, is escaping the whole)."""
    return escape(
        f"{_BRIEF}\n\nTools:\n{tool_lines(GATE_TOOLS)}\n\n{_SYNTAX}\n\nYou have {max_turns} turns.\n\nTask: "
    )
