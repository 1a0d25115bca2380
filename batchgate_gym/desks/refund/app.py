"""The refund desk's entry in the ``batchgate`` command's desk registry.

Wiring, not core: how the commands make the refund desk's environment, where its
cases come from, its policies and attackers, and the terms and metrics its tables
show. Imports of the desk's environment and policies happen inside functions, so
naming the desk costs nothing until a command plays it. Rule sets are an
environment argument (``env_kwargs={"rules": "original"}`` in ``evaluate``).
"""

from __future__ import annotations

import json
from typing import Any

from batchgate_gym.app.desks import Desk, DeskOption, Metric, register


def _env(cases: Any = None, **kwargs: Any) -> Any:
    from batchgate_gym.envs.refund import RefundDeskEnv

    return RefundDeskEnv(cases, **kwargs)


def _load_cases(source: Any) -> list[Any]:
    from .cases import load_cases

    return load_cases(source)


def _split_cases(name: str) -> list[Any]:
    from .sources import split_cases

    return split_cases(name)


def _procedural(seeds: Any) -> list[Any]:
    """The cases ``reset(seed=s)`` draws by default, read back from the world."""
    env = _env()
    try:
        found = []
        for seed in seeds:
            env.reset(seed=seed)
            found.append(env.unwrapped.world.case)
        return found
    finally:
        env.close()


def _attacks(cases: list[Any]) -> dict[str, Any]:
    """careful first, then every attacker (none needs the truth of the cases)."""
    from batchgate_gym.policies.refund import REFUND_ATTACKERS, CarefulRefundPolicy

    return {"careful": CarefulRefundPolicy(), **{name: cls() for name, cls in REFUND_ATTACKERS.items()}}


def _reply(content: str) -> str:
    """A model's plain message is its answer to the customer: the ``reply`` that ends the episode."""
    return json.dumps({"name": "reply", "arguments": {"message": content}})


def _kind(name: str) -> str:
    return "target" if name == "careful" else "attacker"


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


def _make() -> Desk:
    from batchgate_gym.policies.refund import REFUND_ATTACKERS, REFUND_POLICIES

    from . import ENV_ID
    from .generator.splits import SPLITS
    from .grader import TERMS, WEIGHTS

    return Desk(
        name="refund",
        description=_DESCRIPTION,
        env_id=ENV_ID,
        make_env=_env,
        terms=tuple(TERMS),
        weights=dict(WEIGHTS),
        reference_policies=dict(REFUND_POLICIES),
        default_policies=("naive", "careful", "refuse-all"),
        splits=tuple(SPLITS),
        default_split="eval",
        split_cases=_split_cases,
        load_cases=_load_cases,
        procedural_cases=_procedural,
        metrics=(
            Metric(
                "duplicate_effects",
                column="duplicates",
                row="duplicate payments",
                phrase="duplicate payments",
            ),
            Metric(
                "duplicate_cents",
                column="cents paid twice",
                row="cents paid twice",
                phrase="cents paid twice",
            ),
            Metric(
                "unauthorized_cents",
                column="cents over the cap",
                row="cents paid over the cap",
                phrase="cents paid over the cap",
            ),
            Metric("false_blocks", column="false blocks", row="false blocks", phrase="false blocks"),
        ),
        headline_terms=("task_completed",),
        exact_terms=(("log_replayable", "logs replayable"),),
        attackers=dict(REFUND_ATTACKERS),
        build_attacks=_attacks,
        attack_target="careful",
        attack_kind=_kind,
        after_episode=_after_episode,
        chat_no_tool_call=_reply,
        options=(
            DeskOption(
                "rules",
                ("default", "original"),
                "default",
                "the refund desk's rule set: the original's, or ours with its holes closed",
            ),
        ),
    )


_DESCRIPTION = "RefundDesk: refund a ticket when the payment tool lies"
register("refund", _DESCRIPTION, _make)
