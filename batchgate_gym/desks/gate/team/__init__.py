"""BadBatchGate for a team: N gate agents sharing one warehouse, staging area and log.

Core code (no Gymnasium, no PettingZoo): the shared world with claims and
per-agent attribution, the team grader, and the game both PettingZoo interfaces in
``batchgate_gym.envs.gate.team`` drive.
"""

from __future__ import annotations

from .game import GateTeamGame, deal_lists
from .grader import AgentContribution, TeamScore, agent_of, grade_team, replay_team
from .tools import TEAM_TOOLS
from .world import AttributedLedger, TeamWorld, agent_names

__all__ = [
    "TEAM_TOOLS",
    "AgentContribution",
    "AttributedLedger",
    "GateTeamGame",
    "TeamScore",
    "TeamWorld",
    "agent_names",
    "agent_of",
    "deal_lists",
    "grade_team",
    "replay_team",
]
