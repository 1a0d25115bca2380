"""The analyst desk's policies: reference agents, attackers, and the SQL an analyst writes."""

from .agents import ANALYST_ATTACKERS, ANALYST_BASELINES, ANALYST_POLICIES, CarefulAnalyst

__all__ = ["ANALYST_ATTACKERS", "ANALYST_BASELINES", "ANALYST_POLICIES", "CarefulAnalyst"]
