"""AnalystDesk speed per store: writes benchmarks/results/analyst_speed.json and analyst_speed.md.

Runs the analyst desk's bench hook, the code behind ``batchgate bench --desk
analyst`` (medians over repeated runs, pinned to one core where the platform allows
it), and adds the machine's load averages before and after, so a figure taken on a
busy machine says so.

    python benchmarks/analyst_speed.py [--quick] [--repeats N] [--clock cpu] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from batchgate_gym.app.bench import add_arguments, config_from
from batchgate_gym.app.desks import get

sys.path.insert(0, str(Path(__file__).parent))
from refund_speed import load_average, load_note


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    bench = get("analyst").bench
    assert bench is not None, "the analyst desk has a bench hook"
    hooks = bench()
    before = load_average()
    result = hooks.run_benchmark(
        config_from(args), log=lambda stage: print(f"[bench] {stage}", file=sys.stderr), clock=args.clock
    )
    result["load_before"], result["load_after"] = before, load_average()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "analyst_speed.json").write_text(
        json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    text = hooks.markdown(result) + "\n\n" + load_note(result)
    (out / "analyst_speed.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
