"""``python -m batchgate_gym.desks.analyst.generator``: rewrite the committed split files from their seeds."""

from __future__ import annotations

import sys

from batchgate_gym.kernel.case_files import rewrite_splits

from .splits import SPLITS, write_split


def main() -> int:
    """Write every split and print its path, case count and sha256."""
    print("\n".join(rewrite_splits(SPLITS, write_split)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
