"""The replay properties every desk's log must have, checked on one played episode.

A desk's property tests play drawn episodes their own way and hand each one here with
the desk's ``replay``: the exported log replays to exactly the live score (pinned to
the reported head, and to the key alone where there is one), while one drawn change to
it (:func:`batchgate_gym.testing.tampered_logs`) and its replay under another case are
refused with ``LogIntegrityError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import strategies as st

from batchgate_gym.kernel.ledger import LogIntegrityError
from batchgate_gym.testing import tampered_logs

Replay = Callable[..., Any]  # a desk's replay(case, log, *, head=, key=, nonce=) -> its score


def check_log_replays_and_any_change_is_refused(
    replay: Replay, case: Any, env: Any, info: dict[str, Any], key: bytes | None, data: st.DataObject
) -> None:
    """The episode ``env`` ended with ``info`` replays to its score; one drawn change to its log does not."""
    log, head = env.export_log(), info["log_head"]
    assert info["log_intact"]
    assert replay(case, log, head=head, key=key).as_dict() == info["score"]
    if key is not None:
        assert replay(case, log, key=key, nonce=info["log_nonce"]).as_dict() == info["score"]
    kind, tampered = data.draw(tampered_logs(log), label="tampered")
    assert kind and tampered != log, kind
    with pytest.raises(LogIntegrityError):
        replay(case, tampered, head=head, key=key)
    if key is not None:  # the key alone, no head: re-chained, re-sealed or cut logs still fail
        with pytest.raises(LogIntegrityError):
            replay(case, tampered, key=key, nonce=info["log_nonce"])


def check_log_is_refused_under(
    replay: Replay, other: Any, case: Any, env: Any, info: dict[str, Any], key: bytes | None
) -> None:
    """The log of an episode on ``case`` does not replay under ``other`` (unless it is the same case)."""
    if other.digest == case.digest:
        return
    with pytest.raises(LogIntegrityError, match="this case"):
        replay(other, env.export_log(), head=info["log_head"], key=key)
