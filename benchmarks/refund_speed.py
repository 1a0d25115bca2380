"""Refund desk speed benchmark: writes benchmarks/results/refund_speed.json and refund_speed.md.

Runs the refund desk's own bench hook, the code behind ``batchgate bench --desk
refund`` (medians over repeated runs, pinned to one core where the platform allows
it), at the default size unless ``--quick`` or ``--repeats`` says otherwise; this
script only adds the files and the machine's load averages before and after the run,
so that a figure taken on a busy machine says so. ``--clock cpu`` times this
process's CPU instead of the wall clock (steadier when the machine is shared).

    python benchmarks/refund_speed.py [--quick] [--repeats N] [--clock cpu] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from batchgate_gym.app.bench import add_arguments, config_from
from batchgate_gym.bench import bench_of
from batchgate_gym.bench.harness import load_average
from batchgate_gym.desks.registry import get


def load_note(result: dict[str, Any]) -> str:
    """One line on how busy the machine was while the figures were taken."""
    cpus = result["machine"].get("cpus")
    before, after = result["load_before"], result["load_after"]
    if before is None or after is None:
        return f"Machine load: not available on this platform ({cpus} CPUs)."
    return (
        f"Machine load (1-minute average) {before[0]:.2f} before and {after[0]:.2f} after, "
        f"on {cpus} CPUs; pinned core {result['machine'].get('pinned_core')}; clock: {result['clock']}."
    )


def desk_speed(desk: str, doc: str | None, argv: list[str] | None = None) -> int:
    """Run ``desk``'s bench hook and write ``<desk>_speed.json`` and ``.md`` (the table, then the
    machine's load): the whole of this script, and of every other desk's speed script."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"), help="output directory")
    args = parser.parse_args(argv)
    hooks = bench_of(get(desk))
    before = load_average()
    result = hooks.run_benchmark(
        config_from(args), log=lambda stage: print(f"[bench] {stage}", file=sys.stderr), clock=args.clock
    )
    result["load_before"], result["load_after"] = before, load_average()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{desk}_speed.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    words = argv if argv is not None else sys.argv[1:]
    command = " ".join([f"python benchmarks/{desk}_speed.py", *words])
    table = f"{hooks.markdown(result)}\n\n{load_note(result)}"
    (out / f"{desk}_speed.md").write_text(f"<!-- made by: {command} -->\n\n{table}\n")
    print(table)
    return 0


def main(argv: list[str] | None = None) -> int:
    return desk_speed("refund", __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
