"""``batchgate verify``: check results files against a public key, on their own.

A file of episodes a signed server handed out (``serve-env --sign-key``: OpenEnv's
state ``result`` or MCP's result resource, one JSON object a line) is checked episode
by episode: each certificate the key's, signing exactly its result, whose log replays
on its case (from its source, or drawn again from its seed) to its score.

Every row of each ``FILE`` (written by ``run-model --sign-key``) must carry a
certificate of the key ``--trust KEY.pub`` that signs exactly the row's provenance
and outcome, its log must replay under its head to its score (an infra error's,
to its sealed failure), its case and source must be the ones its digests name, and
the run's manifest (``FILE.meta.json``) must be signed by the same key and hold
every planned (case, rollout) once. Prints one line per file and one per row that
fails; exit status 0 only when every row verifies and every run is complete, 1
otherwise, 2 for a file or key that cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .shared import UsageError

TAKES_DESK = False  # the rows name their desk


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="run-model results files (JSONL)")
    parser.add_argument(
        "--trust", required=True, metavar="KEY.pub", help="the public key the rows must be signed by"
    )


def verify_served_file(path: Path, key: Any) -> Any:
    """A file of results a signed server handed out (OpenEnv's state ``result``, MCP's result
    resource, one JSON object a line), checked episode by episode; None for any other file."""
    from batchgate_gym.llm.results import ResultsError, read_rows
    from batchgate_gym.llm.verification import FileVerdict
    from batchgate_gym.serving.certificates import is_served_result, verify_served_rows

    try:
        rows = read_rows(path)
    except (ResultsError, OSError, UnicodeDecodeError):
        return None  # verify_file names the problem
    if not rows or not all(is_served_result(row) for _, row in rows):
        return None
    problems = verify_served_rows(rows, key, str(path))
    return FileVerdict(path, len(rows), len(rows) - len(problems), problems=problems, served=True)


def run(args: argparse.Namespace) -> int:
    from batchgate_gym.kernel.certificate import CertificateError, TrustedKey
    from batchgate_gym.llm.verification import verify_file

    try:
        key = TrustedKey.load(args.trust)
    except CertificateError as exc:  # no such key, or not a public key: the user's to fix
        raise UsageError(f"batchgate verify: {exc}") from None
    first_problem = ""
    failed = False
    for name in args.files:
        path = Path(name)
        if not path.is_file():
            raise UsageError(f"batchgate verify: {path}: no such results file")
        outcome = verify_served_file(path, key) or verify_file(path, key)
        for problem in outcome.problems:
            print(f"  {problem}")
        print(outcome.line())
        failed = failed or not outcome.ok
        first_problem = first_problem or next(iter(outcome.problems), "")
    if failed:
        print(
            f"batchgate verify: not verified{': ' + first_problem if first_problem else ''}", file=sys.stderr
        )
    return 1 if failed else 0
