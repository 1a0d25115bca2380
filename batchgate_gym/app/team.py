"""``batchgate team``: the team policies on the PettingZoo team environment, side by side.

Each policy plays ``--seeds`` episodes (reset seeds 0..K-1) with ``--agents``
gate agents, one policy instance per agent, through the AEC or the parallel
interface. The table gives the exact mean reward and terms, how many seeds fell
short of 1.0, and what went wrong (repeat loads, orders loaded with orphan rows,
clean batches quarantined, bad batches loaded); a last row runs the single-agent
naive policy over the very same cases. ``--json`` prints the same as JSON.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from batchgate_gym.desks.gate.cases import Case
from batchgate_gym.desks.gate.grader import TERMS

from .evaluate import Aggregate, evaluate
from .tables import markdown_table

_MISHAPS = ("repeat_loads", "orphan_loads", "miscited_duplicate", "miscited_orphan")


@dataclass(frozen=True, slots=True)
class TeamEpisodeResult:
    seed: int
    case_id: str
    reward: float
    disposition: float
    report: float
    evidence: float
    inspected: float
    bad_batches_loaded: int
    revenue_error_usd: float
    defective_batches: int
    repeat_loads: int
    orphan_loads: int
    miscited_duplicate: int  # quarantines citing duplicate_key that earn no evidence
    miscited_orphan: int  # quarantines citing orphan_reference that earn no evidence
    turns: int
    all_reported: bool


def _result(seed: int, finals: dict[str, dict[str, Any]]) -> TeamEpisodeResult:
    """One episode's result from every agent's final info (the score is the same in each)."""
    info = next(iter(finals.values()))
    score = info["score"]
    parts = [final["contribution"] for final in finals.values()]
    return TeamEpisodeResult(
        seed=seed,
        case_id=info["case_id"],
        **{name: score[name] for name in ("reward", *TERMS, "bad_batches_loaded", "revenue_error_usd")},
        defective_batches=info["defective_batches"],
        repeat_loads=sum(part["repeat_loads"] for part in parts),
        orphan_loads=sum(part["orphan_loads"] for part in parts),
        miscited_duplicate=_cited(parts, "duplicate_key"),
        miscited_orphan=_cited(parts, "orphan_reference"),
        turns=max(final["turn"] for final in finals.values()),
        all_reported=all(part["reported"] for part in parts),
    )


def _cited(parts: list[dict[str, Any]], defect_type: str) -> int:
    return sum(part["wrong_citations"].count(defect_type) for part in parts)


def play_aec(env: Any, policy_class: Callable[[], Any], seed: int) -> TeamEpisodeResult:
    """One episode through the AEC interface; one policy object per agent."""
    env.reset(seed=seed)
    policies = {agent: policy_class() for agent in env.agents}
    for agent, policy in policies.items():
        policy.reset(env.observe(agent)["text"], {})
    finals: dict[str, dict[str, Any]] = {}
    for agent in env.agent_iter():
        observation, _reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            finals[agent] = info
            env.step(None)
        else:
            env.step(policies[agent].act(observation["text"]))
    return _result(seed, finals)


def play_parallel(env: Any, policy_class: Callable[[], Any], seed: int) -> TeamEpisodeResult:
    """One episode through the parallel interface; agents that reported send nothing."""
    observations, infos = env.reset(seed=seed)
    policies = {agent: policy_class() for agent in env.agents}
    for agent, policy in policies.items():
        policy.reset(observations[agent]["text"], infos[agent])
    while env.agents:
        actions = {
            agent: policies[agent].act(observations[agent]["text"])
            for agent in env.agents
            if not env.unwrapped.game.done(agent)
        }
        observations, _rewards, _terminations, _truncations, infos = env.step(actions)
    return _result(seed, infos)


def run_team(
    policy_class: Callable[[], Any], seeds: Sequence[int], *, parallel: bool = False, **env_kwargs: Any
) -> tuple[list[TeamEpisodeResult], list[Case]]:
    """Every seed's result, and the case each seed drew."""
    from batchgate_gym.envs.team import env as aec_env
    from batchgate_gym.envs.team import parallel_env

    env = parallel_env(**env_kwargs) if parallel else aec_env(**env_kwargs)
    play = play_parallel if parallel else play_aec
    results, cases = [], []
    try:
        for seed in seeds:
            results.append(play(env, policy_class, seed))
            cases.append(env.game.case)
    finally:
        env.close()
    return results, cases


def summary(results: Sequence[Any]) -> dict[str, Any]:
    aggregate = Aggregate.of(results)
    out: dict[str, Any] = {"episodes": aggregate.episodes}
    out.update({f"mean_{name}": aggregate.mean(name) for name in ("reward", *TERMS)})
    out["seeds_below_1"] = sum(1 for r in results if r.reward < 1)
    for name in _MISHAPS:
        # The single-agent results have no such counts: shown as missing, not as zero.
        out[name] = sum(getattr(r, name) for r in results) if results and hasattr(results[0], name) else None
    out["bad_batches_loaded"] = aggregate.bad_batches_loaded
    out["revenue_error_usd"] = aggregate.revenue_error_usd
    return out


def team_table(n_agents: int, seeds: Sequence[int], parallel: bool, overlap: float) -> dict[str, Any]:
    from batchgate_gym.policies import NaivePolicy
    from batchgate_gym.policies.team import TEAM_POLICIES

    rows: dict[str, Any] = {}
    cases: list[Case] = []
    for name, policy_class in TEAM_POLICIES.items():
        results, cases = run_team(policy_class, seeds, parallel=parallel, n_agents=n_agents, overlap=overlap)
        rows[name] = summary(results)
    single = evaluate(NaivePolicy, cases=cases, progress=False)
    rows["naive (one agent, same cases)"] = summary(single.episodes)
    return {
        "agents": n_agents,
        "seeds": len(seeds),
        "api": "parallel" if parallel else "aec",
        "overlap": overlap,
        "policies": rows,
    }


_COLUMNS = (
    ("mean_reward", "reward"),
    ("mean_disposition", "disposition"),
    ("mean_report", "report"),
    ("mean_evidence", "evidence"),
    ("mean_inspected", "inspected"),
    ("seeds_below_1", "seeds < 1"),
    ("repeat_loads", "repeat loads"),
    ("orphan_loads", "orphan loads"),
    ("miscited_duplicate", "wrongly cited duplicate"),
    ("miscited_orphan", "wrongly cited orphan"),
    ("bad_batches_loaded", "bad loaded"),
)


def markdown(table: dict[str, Any]) -> str:
    title = (
        f"### Team of {table['agents']} agents, {table['seeds']} seeds, {table['api']} API,"
        f" overlap {table['overlap']}"
    )
    header = ["policy", *(h for _, h in _COLUMNS)]
    rows = [[name, *(_cell(key, row[key]) for key, _ in _COLUMNS)] for name, row in table["policies"].items()]
    return f"{title}\n\n" + markdown_table(header, rows, rest="---")


def _cell(key: str, value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.4f}" if key.startswith("mean_") else str(value)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agents", type=int, default=2, help="gate agents in the team (default 2)")
    parser.add_argument(
        "--seeds", type=int, default=200, help="episodes per policy, seeds 0..K-1 (default 200)"
    )
    parser.add_argument("--parallel", action="store_true", help="use the parallel API instead of AEC")
    parser.add_argument(
        "--overlap", type=float, default=0.25, help="chance a batch is also on a second list (default 0.25)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    table = team_table(args.agents, range(args.seeds), args.parallel, args.overlap)
    print(json.dumps(table, indent=2) if args.json else markdown(table))
    return 0
