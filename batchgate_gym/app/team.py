"""``batchgate team``: the team policies on the PettingZoo team environment, side by side.

Each policy plays ``--seeds`` episodes (reset seeds 0..K-1) with ``--agents``
agents, one policy instance per agent, through the AEC or the parallel
interface. The table gives the exact mean reward and terms, how many seeds fell
short of 1.0, and what went wrong (the desk's metrics, and its game's mishaps: on
the gate repeat loads, orders loaded with orphan rows, clean batches quarantined,
bad batches loaded); a last row runs the game's single-agent reference policy (the
gate's naive, the refund desk's careful) over the very same cases. A desk's options that its team game takes
(the refund desk's ``--recovery``) set every environment, the last row's too; where
the game has attackers under them, they follow the policies, with how far below
the game's honest policy each lands. ``--json`` prints the same as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.desks.registry import DEFAULT_DESK
from batchgate_gym.evaluation import Aggregate, EpisodeResult, evaluate
from batchgate_gym.evaluation.progress import bar
from batchgate_gym.tables import markdown_table

from .shared import (
    UsageError,
    add_backend_options,
    add_quiet_option,
    check_backend_options,
    desk_of,
    env_kwargs,
    int_in,
    nodes_line,
    probability,
    unsupported,
)

TAKES_DESK_OPTIONS = True  # those the desk's team game takes (TeamSpec.options); the rest are refused


def desk_options(desk: str) -> tuple[str, ...] | None:
    """The desk's options its team game takes, for ``--help`` (None: not known without the
    desk's extra, and every option is shown)."""
    try:
        game = registry.get(desk).team
    except ModuleNotFoundError:
        return None
    return () if game is None else tuple(game.options)


def _game(desk: registry.DeskSpec | str) -> registry.TeamSpec:
    spec = registry.get(desk) if isinstance(desk, str) else desk
    if spec.team is None:
        raise unsupported("team", spec, "team game")
    return spec.team


def _result(
    desk: registry.DeskSpec | str, seed: int, finals: Mapping[str, Mapping[str, Any]]
) -> EpisodeResult:
    """One team episode's result from every agent's final info, as the desk's game reads it."""
    spec = registry.get(desk) if isinstance(desk, str) else desk
    fields, finished = _game(spec).outcome(spec.scoring, finals)
    return EpisodeResult(
        index=seed,
        seed=seed,
        turns=max(final["turn"] for final in finals.values()),
        calls=0,  # not counted for team episodes
        terminated=finished,
        truncated=not finished,
        **fields,
    )


def play_aec(env: Any, policy_class: Callable[[], Any], seed: int, desk: str = DEFAULT_DESK) -> EpisodeResult:
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
    return _result(desk, seed, finals)


def play_parallel(
    env: Any, policy_class: Callable[[], Any], seed: int, desk: str = DEFAULT_DESK
) -> EpisodeResult:
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
    return _result(desk, seed, infos)


def run_team(
    policy_class: Callable[[], Any],
    seeds: Sequence[int],
    *,
    parallel: bool = False,
    desk: str = DEFAULT_DESK,
    on_episode: Callable[[int], Any] | None = None,
    **env_kwargs: Any,
) -> tuple[list[EpisodeResult], list[Any]]:
    """Every seed's result, and the case each seed drew (``on_episode(1)`` after each)."""
    game = _game(desk)
    env = game.make_env(parallel, **env_kwargs)
    play = play_parallel if parallel else play_aec
    results, cases = [], []
    try:
        for seed in seeds:
            results.append(play(env, policy_class, seed, desk))
            cases.append(game.case_of(env))
            if on_episode is not None:
                on_episode(1)
    finally:
        env.close()
    return results, cases


def _team_job(
    job: tuple[Callable[[], Any], Sequence[int], dict[str, Any]],
) -> tuple[list[EpisodeResult], list[Any]]:
    """One Ray task: :func:`run_team` over a run of seeds."""
    policy_class, seeds, kwargs = job
    return run_team(policy_class, seeds, **kwargs)


def play_team(
    policy_class: Callable[[], Any],
    seeds: Sequence[int],
    *,
    backend: str = "local",
    on_episode: Callable[[int], Any] | None = None,
    **kwargs: Any,
) -> tuple[list[EpisodeResult], list[Any]]:
    """:func:`run_team` here, or over Ray tasks of a few seeds each (the same results: a game is
    fixed by its seed, not by where it runs)."""
    if backend != "ray":
        return run_team(policy_class, seeds, on_episode=on_episode, **kwargs)
    from batchgate_gym.evaluation.ray_backend import ray_map, task_count

    seeds = list(seeds)
    size = max(1, -(-len(seeds) // task_count(1)))
    jobs = [(policy_class, seeds[i : i + size], kwargs) for i in range(0, len(seeds), size)]
    results: list[EpisodeResult] = []
    cases: list[Any] = []
    for found, drawn in ray_map(_team_job, jobs):
        results += found
        cases += drawn
        if on_episode is not None:
            on_episode(len(found))
    return results, cases


def summary(
    results: Sequence[EpisodeResult], mishaps: Sequence[str] = (), totals: Sequence[str] = ()
) -> dict[str, Any]:
    """Exact means, seeds short of 1, mishaps and other totals; a mishap the results do not count is None."""
    aggregate = Aggregate.of(results)
    out: dict[str, Any] = {"episodes": aggregate.episodes}
    out.update({f"mean_{name}": aggregate.mean(name) for name in aggregate.means})
    # A game the machine stopped has no score: it is counted apart, not as a seed short of 1.
    out["seeds_below_1"] = sum(1 for r in results if r.reward < 1 and not r.infra_error)
    if aggregate.infra_episodes:
        out["infra_episodes"] = aggregate.infra_episodes
    for name in mishaps:
        # The single-agent results have no such counts: shown as missing, not as zero.
        out[name] = aggregate.counts.get(name)
    for name in totals:
        out[name] = aggregate.total(name)
    return out


def team_table(
    n_agents: int,
    seeds: Sequence[int],
    parallel: bool,
    overlap: float,
    desk: str = DEFAULT_DESK,
    *,
    progress: bool = False,
    options: dict[str, Any] | None = None,
    backend: str = "local",
) -> dict[str, Any]:
    spec = registry.get(desk)
    game = _game(spec)
    mishaps = [name for name, _ in game.mishaps]
    totals = [metric.name for metric in spec.scoring.shown_metrics]
    rows: dict[str, Any] = {}
    cases: list[Any] = []
    options = dict(options or {})
    dealing = {"overlap": overlap} if game.overlap else {}
    attackers = game.team_attackers(**options)
    policies = {**game.team_policies(), **attackers}
    with bar(len(policies) * len(seeds), "team episodes", enabled=progress) as shown:
        for name, policy_class in policies.items():
            results, cases = play_team(
                policy_class,
                seeds,
                backend=backend,
                parallel=parallel,
                desk=desk,
                on_episode=shown.update,
                n_agents=n_agents,
                **dealing,
                **options,
            )
            rows[name] = summary(results, mishaps, totals)
    single = evaluate(
        spec.policies.reference_policies[game.solo],
        cases=cases,
        progress=False,
        desk=desk,
        env_kwargs=options,
        backend=backend,
    )
    rows[f"{game.solo} (one agent, same cases)"] = summary(single.episodes, mishaps, totals)
    if attackers and game.target is not None:
        honest = rows[game.target]["mean_reward"]
        for name, row in rows.items():
            row["below_target"] = None if name == game.target else honest - row["mean_reward"]
    return {
        "agents": n_agents,
        "seeds": len(seeds),
        "api": "parallel" if parallel else "aec",
        **dealing,
        **({"options": options} if options else {}),
        **({"target": game.target} if attackers else {}),
        "policies": rows,
    }


def columns(desk: str = DEFAULT_DESK) -> list[tuple[str, str]]:
    """(key, header) of every column of the team table."""
    spec = registry.get(desk)
    out = [(f"mean_{name}", name) for name in ("reward", *spec.scoring.terms)]
    out.append(("seeds_below_1", "seeds < 1"))
    out += list(_game(spec).mishaps)
    out += [(m.name, m.column or m.name) for m in spec.scoring.shown_metrics if not m.money]
    return out


def markdown(table: dict[str, Any], desk: str = DEFAULT_DESK) -> str:
    title = f"### Team of {table['agents']} agents, {table['seeds']} seeds, {table['api']} API"
    if "overlap" in table:
        title += f", overlap {table['overlap']}"
    for name, value in table.get("options", {}).items():
        title += f", {name} {_option_text(value)}"
    shown = columns(desk)
    if any("infra_episodes" in row for row in table["policies"].values()):
        shown.append(("infra_episodes", "infra errors"))
    if "target" in table:
        shown.append(("below_target", f"below {table['target']}"))
    metrics = {metric.name: metric for metric in registry.get(desk).scoring.shown_metrics}
    header = ["policy", *(h for _, h in shown)]
    rows = [
        [
            name,
            *(
                _cell(key, row.get(key, 0) if key == "infra_episodes" else row[key], metrics.get(key))
                for key, _ in shown
            ),
        ]
        for name, row in table["policies"].items()
    ]
    return f"{title}\n\n" + markdown_table(header, rows, rest="---")


def _option_text(value: Any) -> str:
    """An option's value as the command line spells it (a switch as on/off)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _cell(key: str, value: Any, metric: registry.Metric | None = None) -> str:
    if value is None:
        return "-"
    if key.startswith("mean_") or key == "below_target":
        return f"{value:.4f}"
    return metric.text(value) if metric is not None else str(value)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agents", type=int_in(1), default=2, help="agents in the team")
    parser.add_argument("--seeds", type=int_in(1), default=200, help="episodes per policy, seeds 0..K-1")
    parser.add_argument("--parallel", action="store_true", help="use the parallel API instead of AEC")
    parser.add_argument(
        "--overlap",
        type=probability,
        default=0.25,
        help="chance a batch is also on a second list",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_backend_options(parser)
    add_quiet_option(parser)


def unused_options(args: argparse.Namespace, desk: registry.DeskSpec) -> dict[str, str]:
    """``--overlap`` on a team game that deals no lists (the refund desk's workers share one
    queue), and the desk's options its team game does not take."""
    if desk.team is None:
        return {}
    unused = {
        option.name: f"the {desk.name} desk's team game does not take it"
        for option in desk.options
        if option.name not in desk.team.options
    }
    if not desk.team.overlap:
        unused["overlap"] = f"the {desk.name} desk's team game deals no lists for a batch to overlap on"
    return unused


def run(args: argparse.Namespace) -> int:
    desk = desk_of(args)
    game = _game(desk)  # a desk without a team game stops here, before any work
    dealing = {"overlap": args.overlap} if game.overlap else {}
    options = env_kwargs(args, desk)
    try:  # a team size the game refuses stops here too, with the game's reason
        game.make_env(args.parallel, n_agents=args.agents, **dealing, **options).close()
    except ValueError as exc:
        raise UsageError(f"batchgate team: {exc}") from None
    check_backend_options(args.backend, args.ray_address, "team")
    table = team_table(
        args.agents,
        range(args.seeds),
        args.parallel,
        args.overlap,
        desk.name,
        progress=not args.quiet,
        options=options,
        backend=args.backend,
    )
    if args.backend == "ray":
        print(nodes_line("team"), file=sys.stderr)
    print(json.dumps(table, indent=2) if args.json else markdown(table, desk.name))
    return 0
