"""What a desk hands ``batchgate audit``: careful's checks, its ablations, the grader's checks.

A desk takes part in the audit by declaring a :class:`DeskAudit` (its policies package
builds one) and naming it in its spec (``DeskSpec.audit``). The class lives here, below
the command line, so that the policies that build one import nothing of the command line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from batchgate_gym.kernel.grader_checks import GraderChecks


@dataclass(frozen=True)
class DeskAudit:
    """What an audit needs from a desk.

    ``careful_checks``: careful's checks, in order; ``ablation(checks)`` builds careful
    without them; ``combined``: ablations of several checks at once, played as well;
    ``attackers(cases)``: the named attackers (oracles told the truth of ``cases``);
    ``capture(env, policy)``: what the episode ``policy`` just played did (with the log it
    hands in, where it edits one), kept to grade it again;
    ``reward(captured)``: its reward under the grader checks on now.
    """

    desk: str
    grader: GraderChecks
    careful_checks: tuple[str, ...]
    target: Callable[[], Any]
    ablation: Callable[[tuple[str, ...]], Any]
    attackers: Callable[[list[Any]], dict[str, Any]]
    capture: Callable[[Any, Any], Any]
    reward: Callable[[Any], Fraction]
    combined: tuple[tuple[str, ...], ...] = ()
    env_kwargs: dict[str, Any] = field(default_factory=dict)
