"""AnalystDesk speed per store: writes benchmarks/results/analyst_speed.json and analyst_speed.md.

Runs the analyst desk's bench hook, the code behind ``batchgate bench --desk
analyst`` (medians over repeated runs, pinned to one core where the platform allows
it), and adds the machine's load averages before and after, so a figure taken on a
busy machine says so.

    python benchmarks/analyst_speed.py [--quick] [--repeats N] [--clock cpu] [--out benchmarks/results]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from refund_speed import desk_speed


def main(argv: list[str] | None = None) -> int:
    return desk_speed("analyst", __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
