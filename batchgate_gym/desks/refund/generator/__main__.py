"""``python -m batchgate_gym.desks.refund.generator``: rewrite the committed split files from their seeds."""

from __future__ import annotations

import hashlib
import sys

from .splits import SPLITS, write_split


def main() -> int:
    """Write every split and print its path, case count and sha256."""
    for name in SPLITS:
        path = write_split(name)
        data = path.read_bytes()
        lines = data.count(b"\n")
        print(f"{path}: {lines} cases, sha256 {hashlib.sha256(data).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
