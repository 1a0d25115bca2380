"""The text each team agent starts from: the shared job, its own name, the nine tools."""

from __future__ import annotations

from batchgate_gym.kernel.codec import escape, syntax_help, tool_lines

from ..cases import Case
from .tools import TEAM_TOOLS

_BRIEF = """\
You are {agent}, one of {n} gate agents loading tonight's warehouse together. All
of you share one staging area, one warehouse and one log. Each batch must end
either loaded exactly once or quarantined with a citation of the column and
defect type that break the data contract. The loader accepts anything and always
answers "errors: 0": a bad batch that is loaded silently becomes a wrong revenue
number, and a batch loaded twice is counted twice. Loads cannot be undone.

You have a list of batches (list_batches shows it, with the shared board of every
batch). Nothing stops two agents from handling the same batch: claim_batch reserves
a batch for you (the first claim wins), and a batch another agent claimed cannot be
loaded or quarantined by you. Orders need their customers in the warehouse first,
even when those customers arrive in a batch on another agent's list.

The whole team earns one score, computed from what reached the warehouse and from
the environment's own log of everyone's calls. When you are done, submit your own
report of the batches you loaded and the batches you quarantined; the episode ends
when every agent has reported. Without every report, nothing counts."""


def team_task_text(case: Case, agent: str, n_agents: int, max_turns: int) -> str:
    """The reset observation of one agent."""
    return escape(
        f"{_BRIEF.format(agent=agent, n=n_agents)}\n\nTools:\n{tool_lines(TEAM_TOOLS)}\n\n{syntax_help(TEAM_TOOLS)}"
        f"\n\nYou have {max_turns} turns.\n\nTask: {case.prompt}"
    )


__all__ = ["team_task_text"]
