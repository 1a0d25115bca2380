"""The refund desk's queue knob measured: writes benchmarks/results/refund_queue.json and .md.

A queue case holds several tickets over one shared ledger, some of them a request
sent again (the ``tickets`` knob of ``RefundDeskEnv``). This script plays the three
reference policies on procedural queues of 1, 2, 4 and 8 tickets (seeds ``0..N-1``,
the same seeds for every policy) through the text interface, graded as any episode,
and tabulates the mean reward, the duplicate payments and the money paid twice or
past the cap. Nothing here is timed: the figures depend only on the code and seeds.

    python benchmarks/refund_queue.py [--seeds 200] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from batchgate_gym.app.evaluate import evaluate
from batchgate_gym.app.tables import markdown_table, money
from batchgate_gym.policies.refund import REFUND_POLICIES

QUEUE_LENGTHS = (1, 2, 4, 8)
POLICIES = ("naive", "careful", "refuse-all")
METRICS = ("duplicate_effects", "duplicate_cents", "unauthorized_cents", "false_blocks")


def measure(seeds: int) -> dict[str, Any]:
    """Per queue length and policy: the mean reward and the summed metrics."""
    rows = []
    for tickets in QUEUE_LENGTHS:
        for name in POLICIES:
            result = evaluate(
                REFUND_POLICIES[name](),
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


def table(figures: dict[str, Any]) -> str:
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
        "over the cap",
        "false blocks",
    ]
    made_by = f"<!-- made by: python benchmarks/refund_queue.py --seeds {figures['seeds']} -->"
    return f"{made_by}\n{markdown_table(header, body, rest='---:')}\n\nProcedural seeds 0..{figures['seeds'] - 1} per row."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200, help="procedural seeds per row (default 200)")
    parser.add_argument("--out", default="benchmarks/results", help="directory for the two files")
    args = parser.parse_args(argv)
    figures = measure(args.seeds)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "refund_queue.json").write_text(json.dumps(figures, indent=2) + "\n")
    (out / "refund_queue.md").write_text(table(figures) + "\n")
    print(table(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
