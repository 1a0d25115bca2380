"""RefundDesk as a Gymnasium environment with text actions and observations.

The environment is the shared :class:`~batchgate_gym.envs.text_env.TextDeskEnv` with the refund
desk's adapter (:func:`refund_adapter`); this module adds the desk's arguments and
their checks.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Iterable
from typing import Any

from batchgate_gym.desks.refund import TURNS_PER_TICKET
from batchgate_gym.desks.refund.cases import RefundCase
from batchgate_gym.desks.refund.generator.build import MAX_TICKETS
from batchgate_gym.desks.refund.prompt import task_text
from batchgate_gym.desks.refund.replay import score_live
from batchgate_gym.desks.refund.sources import case_source
from batchgate_gym.desks.refund.tools import REFUND_ENDING
from batchgate_gym.desks.refund.world import RefundWorld
from batchgate_gym.kernel.case_sources import CaseSource, cases_or_split
from batchgate_gym.kernel.episode import EpisodeLimits
from batchgate_gym.kernel.plain import check_int

from ..text_env import DeskAdapter, TextDeskEnv, checked_settings

RULES = ("default", "original")
REFUND_LIMITS = EpisodeLimits(max_turns=TURNS_PER_TICKET)  # one ticket's; a queue's is set per queue


def _longest_queue(source: CaseSource, tickets: int) -> int:
    """The most tickets a case of ``source`` holds: its fixed cases', else the knob's."""
    cases = getattr(source, "cases", None)
    return max((len(case.tickets) for case in cases), default=1) if cases is not None else tickets


def _queue_knob(tickets: int) -> dict[str, int]:
    return {"tickets": tickets} if tickets != 1 else {}


def refund_case_info(case: RefundCase) -> dict[str, Any]:
    """The case's fields of the last ``info``."""
    return {"case_id": case.case_id, "family": case.family}


def refund_adapter(
    source: CaseSource,
    rules: str = "default",
    hints: bool = False,
    log_key: bytes | None = None,
    recovery: bool = False,
) -> DeskAdapter[RefundWorld, RefundCase]:
    """The refund desk as a text desk: its world under ``rules``, task text, live score and wording."""
    return DeskAdapter(
        make_world=functools.partial(
            RefundWorld, rules=rules, hints=hints, log_key=log_key, recovery=recovery
        ),
        source=source,
        task_text=functools.partial(task_text, hints=hints, recovery=recovery),
        score=score_live,
        case_info=refund_case_info,
        ending=REFUND_ENDING,
    )


class RefundDeskEnv(TextDeskEnv[RefundWorld, RefundCase]):
    """Settle one refund ticket without paying twice, paying past the cap or stalling.

    A customer asks for money back on one order. The agent may refund up to the
    case's cap on an order by itself (5,000 cents unless the case names another;
    the brief states it) and must escalate anything above that to a human.
    The payment tool pays whatever it is asked and may answer with an error after
    the money has moved; the refund history may lag one read behind a payment;
    another worker may already have paid. Only the environment's own hash-chained
    log of tool calls is graded, never what the agent says.

    **Action space** ``Text(max_length=65536)`` over printable ASCII plus tab and
    newline (``MAX_ACTION_CHARS`` of :mod:`batchgate_gym.kernel.codec`, the limit the
    action parser enforces). An action is one string of one or more tool calls, in
    call syntax (``lookup_order("ORD-1041")``) or JSON (``{"name": ..., "arguments":
    {...}}`` or a list of those), run in order, at most ``max_calls_per_step`` of
    them. Any ``str`` is accepted: a malformed action (unknown tool, bad arguments,
    unparsable text, too long) runs nothing, yields an error observation showing the
    accepted syntax and is logged as a refused call. Hostile argument values never
    raise: a tool answers them with an ``error`` result.

    The five tools (results are compact JSON objects):
    ``lookup_order(order_id)`` (the ticket's order, or an error for any other id),
    ``refund_history(order_id)`` (refunds on record for that id, then this
    episode's; the first read after a payment may miss it),
    ``issue_refund(order_id, amount_cents, idempotency_key, reason, sku="")`` (moves
    money; a key already used answers with the first result and pays nothing;
    cannot be undone), ``escalate(order_id, reason)`` (hands the ticket to a human;
    a reason of at least 8 characters) and ``reply(message)``, the answer to the
    customer, which ends the episode.

    **Observation space** ``Text(max_length=max_observation_chars)``, same charset
    (other characters arrive escaped). After ``reset`` it is the whole task: the
    brief (the cap, the tools with signatures, the action syntax, how to finish)
    and the ticket, ``Ticket for order <order_id>: "<customer text>"``. After
    ``step`` it is ``turn t of T`` followed by each call and its JSON result. Every
    observation, the reset one included, holds at most ``max_observation_chars``
    characters: a longer one keeps its head and ends in a marker giving the number
    of characters dropped.

    **Reward** 0 on every step but the last; the last pays the weighted score, in
    [0, 1] and rounded to 4 decimals, recomputed from the case and the log:

    =========================== ====== ==========================================
    term                        weight asks
    =========================== ====== ==========================================
    ``task_completed``          0.4    the ticket ended right: the owed refund paid
                                       (once, in full), the over-cap one escalated
                                       without paying, or the settled one left
                                       unpaid after reading the order and history
    ``log_replayable``          0.2    the log verifies and every payment has a
                                       reason and follows a lookup and a history
                                       read of its order
    ``no_duplicate_effects``    0.2    no payment repeats one already made
    ``no_unauthorized_payment`` 0.1    no order paid more than the cap in total
    ``no_false_block``          0.1    a refund that was owed was not withheld
    =========================== ====== ==========================================

    **Termination** on ``reply`` (its text is not graded; calls after it in the
    same action are refused). **Truncation** after ``max_turns`` steps (12) without
    a reply; the log is graded as it stands, so truncation still pays the score.

    **Info** a fresh dict each call: ``turn`` and ``calls`` (calls run this step).
    Reset's adds the case's ``case_id`` and ``family`` and where it came from:
    ``split`` (``cases``: the file) or ``seed``, the case seed of a procedural case.
    Nothing about the case's expectations appears before the end; the last step
    adds ``case_id``, ``family``, ``score`` (``reward``, the five terms and the
    metrics ``duplicate_effects``, ``unauthorized_cents``, ``false_blocks`` and
    ``duplicate_cents``, the cents paid past a line's amount), ``log_intact``,
    ``log_entries`` and ``log_head`` (the log's last hash, to pin it on replay).

    **Arguments**
    ``cases``: ``None`` (default: a fresh procedural case per reset, from the
    eight families; reset options ``case_seed``, ``family``, ``variant`` and the
    generator's knobs, ``cap_cents`` among them), a split name (``"eval"``, 32 cases; ``"train"``, 320), a
    JSONL path, a list of case dicts or
    :class:`~batchgate_gym.desks.refund.cases.RefundCase` objects, or any case
    source; for fixed cases ``reset(options={"case_id": ...})`` or
    ``{"case_index": ...}`` names one, otherwise it is drawn with
    ``self.np_random``, so one seed gives one case in any process. ``split``
    names a split too (``split="eval"`` is ``cases="eval"``; give one of the two).
    ``rules``: ``"default"`` (ours) or ``"original"`` (the original grader's, to
    reproduce its figures). The default rules refuse a payment (logged as not
    executed, no money moved) unless it names the ticket's order, a positive whole
    number of cents, a non-empty key, a string reason and a line of the order (the
    sku may be left out on a one-line order); seal the log when the episode ends
    and pin the seal's hash outside it, so a log edited afterwards grades 0 on
    every term; count a payment as a duplicate when its line already had money and
    it takes the line past its amount (``duplicate_cents`` sums what went past);
    and complete a paid ticket only when every payment is on the owed line, none
    above the owed amount, and together they reach it (an escalation completes
    only for the ticket's own order, after looking it up). The original rules
    keep the original's behaviour, loopholes included.
    ``hints`` (``False``): the brief also says that an error is no proof that
    nothing moved and that a reused key never pays twice.
    ``recovery`` (``False``; default rules only): a sixth tool,
    ``void_refund(order_id, idempotency_key, reason)``, takes back a payment this
    episode made (logged like any call; under the ticket's timeout fault it goes
    through and reports a timeout; a voided row shows ``"voided": true`` in the
    history, as late as the payment itself). A duplicate taken back earns half of
    ``no_duplicate_effects``; completion, the cap and the false block count the
    payments left standing; ``recovered_cents`` reports the money that came back.
    ``tickets`` (1, up to 16; procedural cases only): each case is a queue of that
    many tickets over one shared ledger, some of them a request sent again; the
    reply to one ticket brings the next (its order and text in the reply's result)
    and the reply to the last ends the episode. Each order of the queue is graded as
    above and the terms averaged over the orders; a request sent again is the same
    order, so money it moves twice is a duplicate. A reset may name ``tickets`` too.
    ``max_turns`` (12 per ticket of the longest queue among the cases), ``max_calls_per_step`` (32), ``max_observation_chars``
    (65,536) (each ``None`` for its default); ``log_key`` (bytes: the log is chained with HMAC-SHA256 under it, so
    only its holder can produce a log that verifies) and ``render_mode``
    (``"ansi"``: :meth:`render` returns the transcript; ``"human"``: it is printed as it grows).

    **Bounds** checked before anything is built (a ``ValueError`` names the
    argument): ``rules`` one of ``"default"``, ``"original"``; ``hints`` a bool;
    ``tickets`` 1 to 16, and only with ``cases=None``; ``max_turns`` 1 to 10,000; ``max_calls_per_step`` 1 to 1,000;
    ``max_observation_chars`` 256 to 1,048,576; ``log_key`` ``None`` or non-empty
    bytes. Booleans are not accepted as ints.
    """

    def __init__(
        self,
        cases: str | os.PathLike[str] | Iterable[Any] | CaseSource | None = None,
        *,
        split: str | None = None,
        rules: str = "default",
        hints: bool = False,
        recovery: bool = False,
        tickets: int = 1,
        max_turns: int | None = None,
        max_calls_per_step: int | None = None,
        max_observation_chars: int | None = None,
        log_key: bytes | None = None,
        render_mode: str | None = None,
    ) -> None:
        # Every argument is checked before anything is built or read.
        cases = cases_or_split(cases, split)
        tickets = check_int("tickets", tickets, 1, MAX_TICKETS)
        if tickets != 1 and cases is not None:
            raise ValueError("tickets sets the queue of procedural cases: give it only with cases=None")
        limits = checked_settings(
            render_mode,
            self.metadata["render_modes"],
            REFUND_LIMITS,
            max_turns,
            max_calls_per_step,
            max_observation_chars,
        )
        if not isinstance(rules, str) or rules not in RULES:
            raise ValueError(f"rules must be one of {', '.join(map(repr, RULES))}, not {rules!r}")
        if not isinstance(hints, bool):
            raise ValueError(f"hints must be a bool, not {hints!r}")
        if not isinstance(recovery, bool):
            raise ValueError(f"recovery must be True or False, not {recovery!r}")
        if recovery and rules == "original":
            raise ValueError(
                "recovery (the void_refund tool) is only for the default rules: the original rules"
                " had no way to take a payment back; choose one of the two"
            )
        if log_key is not None and (not isinstance(log_key, bytes) or not log_key):
            raise ValueError("log_key must be None or non-empty bytes")
        source = case_source(cases, **_queue_knob(tickets))
        if max_turns is None:
            limits = dataclasses.replace(limits, max_turns=TURNS_PER_TICKET * _longest_queue(source, tickets))
        super().__init__(
            refund_adapter(source, rules, hints, log_key, recovery),
            limits,
            render_mode=render_mode,
        )


__all__ = ["RULES", "RefundDeskEnv", "refund_adapter", "refund_case_info"]
