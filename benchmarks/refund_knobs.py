"""Two of the refund desk's knobs measured: writes benchmarks/results/refund_queue.{json,md}
and refund_recovery.{json,md}.

The queue (``tickets``): a case holds several tickets over one shared ledger, some of
them a request sent again. The three reference policies play procedural queues of
1, 2, 4 and 8 tickets (the same seeds for every policy).

Recovery (``recovery=True``): a payment made in the episode can be taken back
(``void_refund``). The references, ``notice-and-void`` (blind retrying, then
noticing the duplicate and voiding it) and the ``pay-twice-void`` attacker play the
eval split and procedural seeds.

Every episode runs through the text interface and is graded as any other; the
tables give the mean reward, duplicate payments and money paid twice, past the cap
or taken back. Nothing is timed: the figures depend only on the code and the seeds.

    python benchmarks/refund_knobs.py [--queue-seeds 200] [--recovery-seeds 1000] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from batchgate_gym.evaluation import evaluate
from batchgate_gym.policies.refund.recovery import RECOVERY_POLICIES
from batchgate_gym.policies.refund.reference import REFERENCE_POLICIES
from batchgate_gym.tables import markdown_table, money

QUEUE_LENGTHS = (1, 2, 4, 8)
QUEUE_POLICIES = ("naive", "careful", "refuse-all")
METRICS = ("duplicate_effects", "duplicate_cents", "unauthorized_cents", "false_blocks")


def measure_queue(seeds: int) -> dict[str, Any]:
    """Per queue length and policy: the mean reward and the summed metrics."""
    rows = []
    for tickets in QUEUE_LENGTHS:
        for name in QUEUE_POLICIES:
            result = evaluate(
                REFERENCE_POLICIES[name](),
                seeds=range(seeds),
                env_kwargs={"tickets": tickets},
                desk="refund",
                progress=False,
            )
            overall = result.overall
            row = {"tickets": tickets, "policy": name, "mean_reward": overall.mean("reward")}
            row["seeds_below_1"] = sum(1 for episode in result.episodes if episode.reward < 1)
            row.update({metric: int(overall.total(metric)) for metric in METRICS})
            rows.append(row)
    return {"seeds": seeds, "rows": rows}


def queue_table(figures: dict[str, Any]) -> str:
    body = [
        [
            str(row["tickets"]),
            row["policy"],
            f"{row['mean_reward']:.4f}",
            str(row["seeds_below_1"]),
            str(row["duplicate_effects"]),
            money(row["duplicate_cents"] / 100),
            money(row["unauthorized_cents"] / 100),
            str(row["false_blocks"]),
        ]
        for row in figures["rows"]
    ]
    header = [
        "tickets",
        "policy",
        "mean reward",
        "seeds < 1",
        "duplicate payments",
        "paid twice",
        "unauthorized",
        "false blocks",
    ]
    made_by = f"<!-- made by: python benchmarks/refund_knobs.py --queue-seeds {figures['seeds']} -->"
    return f"{made_by}\n{markdown_table(header, body, rest='---:')}\n\nProcedural seeds 0..{figures['seeds'] - 1} per row."


RECOVERY_POLICY_NAMES = ("careful", "notice-and-void", "pay-twice-void", "refuse-all", "naive")


def measure_recovery(seeds: int) -> dict[str, Any]:
    known = {**REFERENCE_POLICIES, **RECOVERY_POLICIES}
    rows = []
    for cases, source in ((None, "eval"), (range(seeds), f"seeds 0..{seeds - 1}")):
        for name in RECOVERY_POLICY_NAMES:
            where: dict[str, Any] = {"split": "eval"} if cases is None else {"seeds": cases}
            result = evaluate(
                known[name](), env_kwargs={"recovery": True}, desk="refund", progress=False, **where
            ).overall
            rows.append(
                {
                    "cases": source,
                    "policy": name,
                    "mean_reward": result.mean("reward"),
                    "duplicate_effects": int(result.total("duplicate_effects")),
                    "duplicate_cents": int(result.total("duplicate_cents")),
                    "recovered_cents": int(result.total("recovered_cents")),
                }
            )
    return {"seeds": seeds, "rows": rows}


def recovery_table(figures: dict[str, Any]) -> str:
    header = ["cases", "policy", "mean reward", "duplicate payments", "paid twice", "came back"]
    body = [
        [
            row["cases"],
            row["policy"],
            f"{row['mean_reward']:.4f}",
            str(row["duplicate_effects"]),
            money(row["duplicate_cents"] / 100),
            money(row["recovered_cents"] / 100),
        ]
        for row in figures["rows"]
    ]
    made_by = f"<!-- made by: python benchmarks/refund_knobs.py --recovery-seeds {figures['seeds']} -->"
    return f"{made_by}\n{markdown_table(header, body)}"


def write(out: Path, stem: str, figures: dict[str, Any], table: Callable[[dict[str, Any]], str]) -> None:
    (out / f"{stem}.json").write_text(json.dumps(figures, indent=2) + "\n")
    (out / f"{stem}.md").write_text(table(figures) + "\n")
    print(table(figures), end="\n\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queue-seeds", type=int, default=200, help="seeds per queue row (default 200)")
    parser.add_argument("--recovery-seeds", type=int, default=1000, help="procedural seeds (default 1000)")
    parser.add_argument("--out", default="benchmarks/results", help="directory for the files")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write(out, "refund_queue", measure_queue(args.queue_seeds), queue_table)
    write(out, "refund_recovery", measure_recovery(args.recovery_seeds), recovery_table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
