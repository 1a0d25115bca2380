"""The refund desk's entry in the ``batchgate`` command's desk registry.

Wiring, not core: how the commands make the refund desk's environment, where its
cases come from, its policies and attackers, and the terms and metrics its tables
show, and its speed benchmark (``batchgate bench --desk refund``). Imports of the
desk's environment and policies happen inside functions, so naming the desk costs
nothing until a command plays it. Rule sets are an
environment argument (``env_kwargs={"rules": "original"}`` in ``evaluate``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from batchgate_gym.app.desks import Desk, DeskOption, Metric, TeamGame, cases_drawn, get, register

from .generator.build import MAX_TICKETS


def _env(cases: Any = None, **kwargs: Any) -> Any:
    from batchgate_gym.envs.refund.text import RefundDeskEnv

    return RefundDeskEnv(cases, **kwargs)


def _load_cases(source: Any) -> list[Any]:
    from .cases import load_cases

    return load_cases(source)


def _split_cases(name: str) -> list[Any]:
    from .sources import split_cases

    return split_cases(name)


def _attacks(cases: list[Any]) -> dict[str, Any]:
    """careful first, then every attacker (none needs the truth of the cases); the queue
    attackers too when a case holds a queue (with one ticket they would play careful)."""
    from batchgate_gym.policies.refund.attackers import ATTACKERS, QUEUE_ATTACKERS
    from batchgate_gym.policies.refund.reference import CarefulRefundPolicy

    attackers = {**ATTACKERS, **(QUEUE_ATTACKERS if any(case.queue for case in cases) else {})}
    return {"careful": CarefulRefundPolicy(), **{name: cls() for name, cls in attackers.items()}}


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


# -- the speed benchmark ------------------------------------------------------------------


_BENCH_SIZES = ("repeats", "episodes", "steps", "resets", "procedural_resets")
"""The fields of the benchmark's config the refund desk uses (the rest are the gate's)."""


class RefundBench:
    """``batchgate bench --desk refund``: the refund desk's speed, measured like the gate's.

    Episodes per second of careful and naive on our eval split through the full text
    interface (each graded, as ``evaluate`` plays it), steps per second of one cheap
    call (``lookup_order``), and the time of a reset to a built case and to a fresh
    procedural one. Every figure is a median over ``config.repeats`` runs, pinned to
    one core where the platform allows it; the sizes come from the gate's
    :class:`~batchgate_gym.app.bench.config.BenchConfig` (``episodes``, ``steps``,
    ``resets``, ``procedural_resets``, ``repeats``).
    """

    @staticmethod
    def run_benchmark(config: Any, log: Any = lambda _: None, clock: str = "wall") -> dict[str, Any]:
        from batchgate_gym.app.bench.harness import machine, one_core, use_clock

        use_clock(clock)
        result: dict[str, Any] = {
            "desk": "refund",
            "machine": machine(),
            "config": {name: getattr(config, name) for name in _BENCH_SIZES},
            "clock": clock,
        }
        with one_core() as core:
            result["machine"]["pinned_core"] = core
            log("episodes")
            result["episodes"] = {name: _episodes_per_second(name, config) for name in ("careful", "naive")}
            log("steps")
            result["steps_per_second"] = {"lookup_order": _lookup_steps_per_second(config)}
            log("resets")
            result["reset"] = _reset_times(config)
        return result

    @staticmethod
    def markdown(result: dict[str, Any]) -> str:
        from batchgate_gym.app.tables import markdown_table

        episodes, reset = result["episodes"], result["reset"]
        rows = [
            (
                "careful, episodes/s (eval split, text interface, graded)",
                f"{episodes['careful']['episodes_per_second']:,.0f}",
            ),
            ("naive, episodes/s", f"{episodes['naive']['episodes_per_second']:,.0f}"),
            ("lookup_order, steps/s", f"{result['steps_per_second']['lookup_order']:,.0f}"),
            ("reset, built case (µs)", f"{reset['reset_built_us']:,.1f}"),
            ("reset, fresh procedural case (ms)", f"{reset['reset_procedural_ms']:,.3f}"),
        ]
        return markdown_table(["measure (median)", "value"], rows)


def _episodes_per_second(name: str, config: Any) -> dict[str, Any]:
    from batchgate_gym.app.bench.harness import median_rate, timed_runs
    from batchgate_gym.app.desks import get
    from batchgate_gym.app.evaluate import run_episode
    from batchgate_gym.policies.refund.reference import REFERENCE_POLICIES

    desk = get("refund")
    env = _env("eval")
    policy = REFERENCE_POLICIES[name]()
    n_cases = len(env.source)

    def loop(count: int) -> int:
        calls = 0
        for index in range(count):
            reset = {"options": {"case_index": index % n_cases}}
            calls += run_episode(env, policy, index, reset, desk).calls
        return calls

    calls = loop(n_cases)  # builds every case once; counts the calls of one pass
    runs = timed_runs(lambda: loop(config.episodes), config.repeats)
    env.close()
    rate = median_rate(runs, config.episodes)
    return {
        "episodes_per_second": round(rate, 1),
        "ms_per_episode": round(1000 / rate, 4),
        "calls_per_episode": round(calls / n_cases, 2),
    }


def _lookup_steps_per_second(config: Any) -> float:
    from batchgate_gym.app.bench.harness import median_rate, timed_runs

    env = _env("eval", max_turns=config.steps + 1)  # no run reaches the turn limit
    env.reset(seed=0, options={"case_index": 0})
    step = f'lookup_order("{env.unwrapped.world.case.order.order_id}")'

    def run() -> None:
        env.reset(options={"case_index": 0})  # a fresh log each run
        for _ in range(config.steps):
            env.step(step)

    rate = median_rate(timed_runs(run, config.repeats), config.steps)
    env.close()
    return round(rate, 1)


def _reset_times(config: Any) -> dict[str, float]:
    from batchgate_gym.app.bench.measures import reset_times

    return reset_times(config, make_fixed=lambda: _env("eval"), make_fresh=_env)


def _bench() -> Any:
    return RefundBench


def _team_env(parallel: bool = False, **kwargs: Any) -> Any:
    from batchgate_gym.envs.refund import team as refund_team

    return refund_team.parallel_env(**kwargs) if parallel else refund_team.env(**kwargs)


def _team_policies() -> dict[str, Any]:
    from batchgate_gym.policies.refund.team import TEAM_POLICIES

    return dict(TEAM_POLICIES)


def _team_attackers(recovery: bool = False) -> dict[str, Any]:
    """The team's attackers, which take money back: only with recovery (without it their
    voids are refused as an unknown tool and they play careful-claim)."""
    from batchgate_gym.policies.refund.team import TEAM_ATTACKERS

    return dict(TEAM_ATTACKERS) if recovery else {}


def _team_result(seed: int, finals: Mapping[str, Mapping[str, Any]]) -> Any:
    """One team episode's result from every worker's final info (the score is the same in each)."""
    from batchgate_gym.app.evaluate import EpisodeResult

    info = next(iter(finals.values()))
    replied = all(final["replied"] for final in finals.values())
    return EpisodeResult(
        index=seed,
        seed=seed,
        turns=max(final["turn"] for final in finals.values()),
        calls=0,  # not counted for team episodes
        terminated=replied,
        truncated=not replied,
        **get("refund").episode_fields(info),
    )


def _make() -> Desk:
    from batchgate_gym.policies.refund.attackers import ATTACKERS
    from batchgate_gym.policies.refund.recovery import RECOVERY_POLICIES
    from batchgate_gym.policies.refund.reference import REFERENCE_POLICIES

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
        term_notes={
            "task_completed": "paid what was owed, escalated what was over the cap, or held still rightly",
            "log_replayable": "every payment has a reason, after a lookup and a history read; the log verifies",
            "no_duplicate_effects": "nothing paid twice",
            "no_unauthorized_payment": "nothing paid without authority: past the cap on one order, or on a line not owed",
            "no_false_block": "no owed refund refused",
        },
        reward_span="from -1 to 1 (0 to 1 under the original rules): the terms less the money cost of overpaying",
        # the recovery players too, for --recovery on (without it their void is an unknown tool)
        reference_policies={**REFERENCE_POLICIES, **RECOVERY_POLICIES},
        default_policies=("naive", "careful", "refuse-all"),
        splits=tuple(SPLITS),
        default_split="eval",
        split_cases=_split_cases,
        load_cases=_load_cases,
        procedural_cases=cases_drawn(_env),
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
        attackers=dict(ATTACKERS),
        build_attacks=_attacks,
        attack_target="careful",
        attack_kind=_kind,
        after_episode=_after_episode,
        bench=_bench,
        chat_no_tool_call=_reply,
        team=TeamGame(
            make_env=_team_env,
            policies=_team_policies,
            solo="careful",
            result=_team_result,
            overlap=False,
            options=("recovery",),
            attackers=_team_attackers,
            target="careful-claim",
        ),
        options=OPTIONS,
    )


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
register("refund", _DESCRIPTION, _make, options=OPTIONS)
