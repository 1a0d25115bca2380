"""Every refund attacker against careful, with and without recovery, on a single ticket
and on queues: writes benchmarks/results/refund_attacks.{json,md}.

The same runs as ``batchgate attacks --desk refund --seeds N [--recovery on]
[--tickets 4]``: careful and every attacker (the queue attackers on queues) play the
same procedural cases through the text interface, graded as any episode. Per setting
and attacker: the mean reward, how far below careful (careful with recovery for the
recovery settings), and the money it moved (beyond what was owed, without authority,
taken back) and the owed orders it left unpaid. Nothing is timed.

    python benchmarks/refund_attacks.py [--seeds 200] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from batchgate_gym.app.attacks import run_attacks
from batchgate_gym.desks.registry import get
from batchgate_gym.tables import markdown_table, money

SETTINGS = (("1", False), ("1", True), ("4", False), ("4", True))
CENTS = ("overpaid_cents", "unauthorized_cents", "recovered_cents")


def measure(seeds: int) -> dict[str, Any]:
    desk = get("refund")
    rows = []
    for tickets, recovery in SETTINGS:
        drawing = {"tickets": int(tickets)} if tickets != "1" else {}
        cases = desk.procedural_cases(range(seeds), **drawing)
        results = run_attacks(cases, desk="refund", env_kwargs={"recovery": True} if recovery else {})
        target = float(results["careful"].overall.mean("reward"))
        for name, result in results.items():
            overall = result.overall
            row = {"tickets": int(tickets), "recovery": recovery, "policy": name}
            row["mean_reward"] = float(overall.mean("reward"))
            row["below_careful"] = target - row["mean_reward"]
            row.update({metric: int(overall.total(metric)) for metric in (*CENTS, "false_blocks")})
            rows.append(row)
    return {"seeds": seeds, "rows": rows}


def table(figures: dict[str, Any]) -> str:
    header = [
        "tickets",
        "recovery",
        "policy",
        "mean reward",
        "below careful",
        "overpaid",
        "unauthorized",
        "came back",
        "owed orders unpaid",
    ]
    body = [
        [
            str(row["tickets"]),
            "on" if row["recovery"] else "off",
            row["policy"],
            f"{row['mean_reward']:.4f}",
            "" if row["policy"] == "careful" else f"{row['below_careful']:.4f}",
            *(money(row[metric] / 100) for metric in CENTS),
            str(row["false_blocks"]),
        ]
        for row in figures["rows"]
    ]
    made_by = f"<!-- made by: python benchmarks/refund_attacks.py --seeds {figures['seeds']} -->"
    seeds = f"Procedural seeds 0..{figures['seeds'] - 1} per setting, the same for every policy."
    return f"{made_by}\n{markdown_table(header, body, rest='---:')}\n\n{seeds}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200, help="procedural seeds per setting (default 200)")
    parser.add_argument("--out", default="benchmarks/results", help="directory for the files")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    figures = measure(args.seeds)
    (out / "refund_attacks.json").write_text(json.dumps(figures, indent=2) + "\n")
    (out / "refund_attacks.md").write_text(table(figures) + "\n")
    print(table(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
