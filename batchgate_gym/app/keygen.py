"""``batchgate keygen``: a new Ed25519 key pair for signing results.

Writes ``--out KEY`` (the private key, PEM, readable by its owner only) and
``KEY.pub`` (the public key, PEM). ``run-model --sign-key KEY`` and ``serve-env
--sign-key KEY`` sign what they play with it; anyone given ``KEY.pub`` checks the
rows with ``batchgate verify FILE --trust KEY.pub`` or ``batchgate report --results
FILE --trust KEY.pub``. An existing file is never overwritten.
"""

from __future__ import annotations

import argparse
import sys

from .shared import UsageError

TAKES_DESK = False  # a key is no desk's


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", required=True, metavar="KEY", help="the private key's path; KEY.pub is the public key"
    )


def run(args: argparse.Namespace) -> int:
    from batchgate_gym.kernel.certificate import CertificateError, write_key_pair

    try:
        private, public = write_key_pair(args.out)
    except CertificateError as exc:  # a key there already, or a folder that is not: the user's to fix
        raise UsageError(f"batchgate keygen: {exc}") from None
    print(f"batchgate keygen: wrote {private} (private, mode 0600) and {public} (public)", file=sys.stderr)
    return 0
