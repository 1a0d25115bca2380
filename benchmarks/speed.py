"""Speed benchmark: writes benchmarks/results/speed.json and speed.md.

The same code as ``batchgate bench`` (:mod:`batchgate_gym.app.bench`); this script
only adds the files. ``--quick`` is a smoke run, ``--clock cpu`` times this
process's CPU instead of the wall clock (steadier when the machine is busy).

    python benchmarks/speed.py [--quick] [--clock cpu] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from batchgate_gym.app.bench import add_arguments, config_from, markdown, run_benchmark


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"), help="output directory")
    args = parser.parse_args(argv)
    result = run_benchmark(
        config_from(args), log=lambda stage: print(f"[bench] {stage}", file=sys.stderr), clock=args.clock
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "speed.json").write_text(json.dumps(result, indent=1) + "\n")
    command = "python benchmarks/speed.py " + " ".join(argv if argv is not None else sys.argv[1:])
    (out / "speed.md").write_text(f"<!-- made by: {command.strip()} -->\n\n{markdown(result)}\n")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
