"""The refund desk as the house's desk registry knows it: one :class:`DeskEntry`.

A declaration, not code: the desk's environment, case loaders, policies (the attack
line-up among them), team game and speed benchmark are named by string entry point and
loaded when a command first plays the desk; what is written here is only what no entry
point can say (grading a log handed in after the episode, a plain reply as an action, a
team episode's outcome) and the environment options the commands expose. Rule sets are
an environment argument (``env_kwargs={"rules": "original"}`` in ``evaluate``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from batchgate_gym.desks.registry import (
    CaseSupply,
    DeskEntry,
    DeskOption,
    DeskSpec,
    Metric,
    PolicySet,
    Scoring,
    TeamSpec,
)

from . import ENV_ID, GYMNASIUM_IDS
from .generator.build import MAX_TICKETS


def _reply(content: str) -> str:
    """A model's plain message is its answer to the customer: the ``reply`` that ends the episode."""
    return json.dumps({"name": "reply", "arguments": {"message": content}})


def _after_episode(env: Any, policy: Any, info: dict[str, Any]) -> dict[str, Any]:
    """A policy that hands in an edited log after its episode is graded on that log.

    The edited log is graded as an exported log would be (``grade_exported``): with
    the head the episode reported, so under the default rules any edit scores 0.
    """
    edit = getattr(policy, "edit_log", None)
    if edit is None:
        return info
    from .replay import grade_exported

    world = env.unwrapped.world
    edited = edit(env.unwrapped.export_log())
    score = grade_exported(world.case, edited, world.rules, head=info["log_head"], payments=world.payments)
    return {**info, "score": score.as_dict()}


def _team_attackers(recovery: bool = False) -> dict[str, Any]:
    """The team's attackers, which take money back: only with recovery (without it their
    voids are refused as an unknown tool and they play careful-claim)."""
    from batchgate_gym.policies.refund.team import TEAM_ATTACKERS

    return dict(TEAM_ATTACKERS) if recovery else {}


def _team_outcome(scoring: Scoring, finals: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, Any], bool]:
    """One team episode's result fields from every worker's final info (the score is the
    same in each), and whether every worker replied."""
    info = next(iter(finals.values()))
    if "infra_error" in info:  # the machine stopped the game: no score, and nobody replied
        return scoring.unscored_fields(info), False
    return scoring.episode_fields(info), all(final["replied"] for final in finals.values())


def _build() -> DeskSpec:
    from .generator.splits import SPLITS
    from .grader import WEIGHTS

    return DeskSpec(
        name="refund",
        env=GYMNASIUM_IDS[ENV_ID],
        env_id=ENV_ID,
        scoring=Scoring(
            weights=WEIGHTS,
            term_notes={
                "task_completed": "paid what was owed, escalated what was over the cap, or held still rightly",
                "log_replayable": "every payment has a reason, after a lookup and a history read; the log verifies",
                "no_duplicate_effects": "nothing paid twice",
                "no_unauthorized_payment": "nothing paid without authority: past the cap on one order, or on a line not owed",
                "no_false_block": "no owed refund refused",
            },
            lowest_reward=Fraction(-1),
            reward_span="from -1 to 1 (0 to 1 under the original rules): the terms less the money cost of overpaying",
            metrics=(
                Metric(
                    "duplicate_effects",
                    column="duplicates",
                    row="duplicate payments",
                    phrase="duplicate payments",
                ),
                Metric(
                    "duplicate_cents",
                    column="paid twice",
                    row="dollars paid twice",
                    phrase="dollars paid twice",
                    cents=True,
                ),
                Metric(
                    "unauthorized_cents",
                    column="unauthorized",
                    row="dollars paid without authority",
                    phrase="dollars paid without authority (over the cap or on a line not owed)",
                    cents=True,
                ),
                Metric(
                    "overpaid_cents",
                    column="overpaid",
                    row="dollars paid beyond what was owed",
                    phrase="dollars paid beyond what was owed",
                    cents=True,
                ),
                Metric(
                    "unowed_payments",
                    column="unowed payments",
                    row="payments on lines not owed",
                    phrase="payments on lines not owed",
                ),
                Metric(
                    "recovered_cents",
                    column="came back",
                    row="dollars voided back",
                    phrase="dollars voided back",
                    cents=True,
                ),
                Metric("false_blocks", column="false blocks", row="false blocks", phrase="false blocks"),
            ),
            headline_terms=("task_completed",),
            exact_terms=(("log_replayable", "logs replayable"),),
        ),
        cases=CaseSupply.of_package("batchgate_gym.desks.refund", SPLITS),
        policies=PolicySet(
            # the recovery players too, for --recovery on (without it their void is an unknown tool)
            reference=(
                f"{_POLICIES}.reference:REFERENCE_POLICIES",
                f"{_POLICIES}.recovery:RECOVERY_POLICIES",
            ),
            defaults=("naive", "careful", "refuse-all"),
            attackers=f"{_POLICIES}.attackers:ATTACKERS",
            lineup=f"{_POLICIES}.attackers:lineup",
            target="careful",
            after_episode=_after_episode,
            compared=("careful", "naive"),
        ),
        team=TeamSpec(
            env="batchgate_gym.envs.refund.team",
            policies=f"{_POLICIES}.team:TEAM_POLICIES",
            solo="careful",
            outcome=_team_outcome,
            overlap=False,
            options=("recovery",),
            attackers=_team_attackers,
            target="careful-claim",
        ),
        bench="batchgate_gym.bench.refund",
        trl_env="batchgate_gym.envs.refund.trl:RefundToolEnv",
        audit="batchgate_gym.policies.refund.audit:AUDIT",
        chat_no_tool_call=_reply,
        options=OPTIONS,
    )


_POLICIES = "batchgate_gym.policies.refund"


def _on(value: str) -> bool:
    return value == "on"


# The environment's keywords the commands take as --NAME: declared at registration, so
# the command line knows them without building the desk.
OPTIONS = (
    DeskOption(
        "rules",
        ("default", "original"),
        "default",
        "the refund desk's rule set: the original's, or ours with its holes closed",
    ),
    DeskOption(
        "recovery",
        ("off", "on"),
        "off",
        "a sixth tool, void_refund, that takes back a payment of the episode (default rules only)",
        parse=_on,
    ),
    DeskOption(
        "tickets",
        tuple(str(n) for n in range(1, MAX_TICKETS + 1)),
        "1",
        "tickets per procedural case: a queue over one ledger (play --seed, attacks --seeds)",
        parse=int,
        draws=True,
    ),
)


_DESCRIPTION = "RefundDesk: refund a ticket when the payment tool lies"
ENTRY = DeskEntry("refund", _DESCRIPTION, _build, options=OPTIONS)
