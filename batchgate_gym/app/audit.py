"""``batchgate audit``: every rule tested from both sides: census, ablations, grader mutations.

A headline table is only as strong as the rules its cases exercise. For one desk, an
audit plays careful, each ablation (careful without one of its checks, generated from
careful's own list of checks) and every named attacker over the desk's ``eval`` and
``holdout`` splits and the procedural cases of the first N seeds, once each, and keeps
what each episode did. Then:

* the **census**: for each of careful's checks, the cases of a split where it decides
  (careful without it scores below careful on the case);
* the **ablations**: each ablation's mean reward and the cases it loses, per source;
* the **grader mutations**: each grader check switched off in turn
  (:func:`~batchgate_gym.kernel.grader_checks.checks_off`), every episode graded again
  from what it did, and which attackers and ablations gain, by how much.

``--split S`` names the split the census is taken on (``holdout`` by default), ``--seeds
N`` the procedural seeds played besides the two splits (100 by default; 0 plays none),
``--json`` prints the three tables' figures as JSON. A desk takes part by giving a
:class:`DeskAudit` (:mod:`batchgate_gym.evaluation.audit`) and naming it in its spec.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.evaluation import run_episode
from batchgate_gym.evaluation.audit import DeskAudit
from batchgate_gym.kernel.grader_checks import checks_off
from batchgate_gym.kernel.text_policy import as_policy
from batchgate_gym.tables import markdown_table

from .shared import desk_of, dumps, env_kwargs, int_in, split_options, unsupported

TARGET = "careful"
SPLITS = ("holdout", "eval")  # the splits an audit plays (eval first), and the census can be taken on


def desk_audit(desk: str) -> DeskAudit:
    """The :class:`DeskAudit` ``desk``'s spec names; ``ValueError`` for a desk without one."""
    audited = audited_desks()
    if desk not in audited:
        raise ValueError(f"batchgate audit covers the {', '.join(audited)} desk so far, not {desk!r}")
    entry = registry.get(desk).audit
    assert entry is not None
    audit: DeskAudit = registry.load(entry)
    return audit


def audited_desks() -> list[str]:
    """The desks whose spec names a :class:`DeskAudit`, in the registry's order."""
    return [name for name in registry.names() if registry.get(name).audit is not None]


def ablation_name(checks: tuple[str, ...]) -> str:
    return "careful-without-" + "+".join(checks)


@dataclass
class Played:
    """One source's episodes: per policy, what each case's episode did, in case order."""

    source: str
    case_ids: list[str]
    captured: dict[str, list[Any]]

    def rewards(self, audit: DeskAudit, policy: str) -> list[Fraction]:
        return [audit.reward(c) for c in self.captured[policy]]


@dataclass
class Audit:
    """Every source played, and the tables drawn from them."""

    audit: DeskAudit
    sources: dict[str, Played]
    ablations: list[str]
    attackers: list[str]
    graded: dict[frozenset[str], dict[str, dict[str, list[Fraction]]]] = field(
        default_factory=dict, repr=False
    )
    """Rewards already graded, by the grader checks off when they were (each table asks again)."""

    def rewards(self) -> dict[str, dict[str, list[Fraction]]]:
        """source -> policy -> per-case rewards, under the grader checks on now."""
        grader = self.audit.grader
        off = frozenset(name for name in grader.names if not grader.on(name))
        if off not in self.graded:
            self.graded[off] = {
                s: {p: played.rewards(self.audit, p) for p in played.captured}
                for s, played in self.sources.items()
            }
        return self.graded[off]

    def mutated(self) -> Iterator[tuple[str, dict[str, dict[str, list[Fraction]]]]]:
        """Each grader check, and every reward with that check switched off."""
        for check in self.audit.grader.names:
            with checks_off(self.audit.grader, check):
                yield check, self.rewards()


def play_source(
    audit: DeskAudit, source: str, cases: list[Any], policies: dict[str, Any], options: dict[str, Any]
) -> Played:
    """Every policy over ``cases``, one environment per policy (``options``: the desk's
    environment options, ``recovery`` say); each episode captured."""
    desk = registry.get(audit.desk)
    captured: dict[str, list[Any]] = {}
    for name, policy in policies.items():
        env = desk.make_env(cases=cases, **audit.env_kwargs, **options)
        player = as_policy(policy)
        try:
            episodes = []
            for i in range(len(cases)):
                run_episode(env, player, i, {"seed": i, "options": {"case_index": i}}, desk)
                episodes.append(audit.capture(getattr(env, "unwrapped", env), player))
            captured[name] = episodes
        finally:
            env.close()
    return Played(source, [_case_id(c) for c in cases], captured)


def _case_id(case: Any) -> str:
    return str(case["case_id"] if isinstance(case, dict) else case.case_id)


def run_audit(
    desk: str,
    seeds: int,
    options: dict[str, Any] | None = None,
    drawing: dict[str, Any] | None = None,
    splits: tuple[str, ...] = SPLITS[::-1],
) -> Audit:
    """Play careful, its ablations and the named attackers on ``splits`` (eval and holdout)
    and seeds 0..seeds-1, under the desk's environment ``options`` (none: its defaults);
    ``drawing``: the options that shape the procedural cases (a refund queue's ``tickets``, say)."""
    options = dict(options or {})
    audit = desk_audit(desk)
    spec = registry.get(desk)
    sources = {split: spec.fixed_cases(None, split) for split in splits}
    if seeds:
        sources[f"seeds 0-{seeds - 1}"] = spec.procedural_cases(range(seeds), **(drawing or {}))
    ablations = [(c,) for c in audit.careful_checks] + list(audit.combined)
    played = {}
    attackers: list[str] = []
    for source, cases in sources.items():
        named = audit.attackers(cases)
        attackers = list(named)
        policies = {
            TARGET: audit.target(),
            **{ablation_name(a): audit.ablation(a) for a in ablations},
            **named,
        }
        played[source] = play_source(audit, source, cases, policies, options)
    return Audit(audit, played, [ablation_name(a) for a in ablations], attackers)


TAKES_DESK_OPTIONS = True  # plays the desk's environment: --recovery applies
DEFAULT_SEEDS = 100
SHOWN_GAINS = 4  # gaining policies a mutation's row names; the rest are counted


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--split", choices=SPLITS, default="holdout", help="the split the census is taken on")
    parser.add_argument(
        "--seeds", type=int_in(0), default=DEFAULT_SEEDS, metavar="N", help="procedural cases of seeds 0..N-1"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")


def run(args: argparse.Namespace) -> int:
    desk = desk_of(args)
    if desk.audit is None:
        raise unsupported(
            "audit", desk, "audit yet (careful's checks, its ablations and named grader checks)"
        )
    drawing, playing = split_options(env_kwargs(args, desk), desk)
    audit = run_audit(desk.name, args.seeds, playing, drawing)
    print(dumps(audit_json(audit, args.split)) if args.json else audit_tables(audit, args.split))
    return 0


def lost(rewards: dict[str, list[Fraction]], policy: str) -> list[int]:
    """The cases (indices) where ``policy`` scores below careful."""
    return [i for i, (r, t) in enumerate(zip(rewards[policy], rewards[TARGET], strict=True)) if r < t]


def mean(values: list[Fraction]) -> Fraction:
    return sum(values, Fraction(0)) / len(values) if values else Fraction(0)


def census(audit: Audit, split: str) -> dict[str, list[str]]:
    """Each of careful's checks: the cases of ``split`` where it decides."""
    rewards, ids = audit.rewards()[split], audit.sources[split].case_ids
    return {c: [ids[i] for i in lost(rewards, ablation_name((c,)))] for c in audit.audit.careful_checks}


def ablations(audit: Audit) -> dict[str, dict[str, tuple[Fraction, list[str]]]]:
    """Each ablation, per source: its mean reward and the cases it loses."""
    rewards = audit.rewards()
    return {
        a: {s: (mean(r[a]), [audit.sources[s].case_ids[i] for i in lost(r, a)]) for s, r in rewards.items()}
        for a in audit.ablations
    }


def mutations(audit: Audit) -> dict[str, dict[str, dict[str, Fraction]]]:
    """Each grader check switched off: per attacker or ablation that gains, its gain per source."""
    before = audit.rewards()
    out: dict[str, dict[str, dict[str, Fraction]]] = {}
    for check, after in audit.mutated():
        gains: dict[str, dict[str, Fraction]] = {}
        for source, rewards in after.items():
            for policy in audit.attackers + audit.ablations:
                gain = mean(rewards[policy]) - mean(before[source][policy])
                if gain > 0:
                    gains.setdefault(policy, {})[source] = gain
        out[check] = gains
    return out


def audit_tables(audit: Audit, split: str) -> str:
    return "\n\n".join((census_table(audit, split), ablation_table(audit), mutation_table(audit)))


def census_table(audit: Audit, split: str) -> str:
    rows = [[c, str(len(ids)), ", ".join(ids)] for c, ids in census(audit, split).items()]
    return f"### Census: where each of careful's checks decides ({split})\n\n" + markdown_table(
        ["check", "cases it decides", "cases"], rows, rest="---"
    )


def ablation_table(audit: Audit) -> str:
    sources = list(audit.sources)
    header = ["ablation", *(h for s in sources for h in (s, "lost"))]
    rows = [
        [name, *(cell for s in sources for cell in (f"{float(by[s][0]):.4f}", str(len(by[s][1]))))]
        for name, by in ablations(audit).items()
    ]
    careful = [
        TARGET,
        *(cell for s in sources for cell in (f"{float(mean(audit.rewards()[s][TARGET])):.4f}", "")),
    ]
    sizes = ", ".join(f"{s} {len(audit.sources[s].case_ids)}" for s in sources)
    return f"### Ablations: careful without each check (cases: {sizes})\n\n" + markdown_table(
        header, [careful, *rows]
    )


def mutation_table(audit: Audit) -> str:
    rows = []
    for check, gains in mutations(audit).items():
        best = sorted(
            ((max(g.values()), p, max(g, key=lambda s: g[s])) for p, g in gains.items()), reverse=True
        )
        shown = [f"{p} +{float(g):.4f} ({s})" for g, p, s in best[:SHOWN_GAINS]]
        more = f"; {len(best) - SHOWN_GAINS} more" if len(best) > SHOWN_GAINS else ""
        rows.append([check, audit.audit.grader.meanings[check], str(len(best)), "; ".join(shown) + more])
    return "### Grader mutations: each check switched off, who gains\n\n" + markdown_table(
        ["check off", "what it holds", "policies that gain", "largest gains (where)"], rows, rest="---"
    )


def audit_json(audit: Audit, split: str) -> dict[str, Any]:
    return {
        "desk": audit.audit.desk,
        "census": {"split": split, "checks": census(audit, split)},
        "ablations": {
            a: {s: {"reward": float(r), "lost": ids} for s, (r, ids) in by.items()}
            for a, by in ablations(audit).items()
        },
        "mutations": {
            c: {p: {s: float(g) for s, g in by.items()} for p, by in gains.items()}
            for c, gains in mutations(audit).items()
        },
    }


__all__ = [
    "TARGET",
    "Audit",
    "DeskAudit",
    "Played",
    "ablation_name",
    "audited_desks",
    "desk_audit",
    "run_audit",
]
