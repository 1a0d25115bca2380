"""The refund desk's world, one test per rule of the spec, under both rule sets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from batchgate_gym.desks.refund.cases import UNSENT_PAYMENTS, case_from_dict, case_to_dict, load_cases
from batchgate_gym.desks.refund.prompt import task_text
from batchgate_gym.desks.refund.replay import replay
from batchgate_gym.desks.refund.tools import REFUND_ENDING, REFUND_TOOLS, tool_schemas
from batchgate_gym.desks.refund.world import RefundWorld, effect_id
from batchgate_gym.envs.refund.text import RefundDeskEnv
from batchgate_gym.kernel.codec import ActionError, ToolCall, parse_action
from batchgate_gym.kernel.episode import Episode, EpisodeLimits
from batchgate_gym.kernel.ledger import verify_chain

DATA = Path(__file__).resolve().parents[2] / "data"
CASES = {case.case_id: case for case in load_cases(DATA / "dsed_eval_curated.jsonl")}
BOTH = ("original", "default")


def desk(case_id: str, rules: str = "original") -> RefundWorld:
    world = RefundWorld(rules=rules)
    world.reset(CASES[case_id])
    return world


def call(world: RefundWorld, name: str, **args: Any) -> Any:
    return world.call(ToolCall(name, args))


def pay(world: RefundWorld, order_id: str, amount: int, key: str, sku: str = "", reason: str = "owed") -> Any:
    return call(
        world,
        "issue_refund",
        order_id=order_id,
        amount_cents=amount,
        idempotency_key=key,
        reason=reason,
        sku=sku,
    )


def actions(world: RefundWorld) -> list[tuple[str, bool]]:
    return [(e.action, e.executed) for e in world.ledger.entries[1:]]


# -- the log and the state ------------------------------------------------------------------
@pytest.mark.parametrize("rules", BOTH)
def test_entry_zero_binds_the_case_and_the_settings(rules):
    world = RefundWorld(rules=rules, hints=True)
    world.reset(CASES["cur-clean-01"])
    first = world.ledger.entries[0]
    assert first.action == "begin"
    assert first.args == {
        "case_digest": CASES["cur-clean-01"].digest,
        "settings": {"rules": rules, "hints": True},
    }
    assert world.log_settings() == {"rules": rules, "hints": True}


def test_settings_are_checked():
    with pytest.raises(ValueError, match="rules"):
        RefundWorld(rules="lenient")
    with pytest.raises(ValueError, match="hints"):
        RefundWorld(hints=1)  # type: ignore[arg-type]


def test_a_reset_starts_a_fresh_desk():
    world = desk("cur-timeout-01")
    pay(world, "ORD-1041", 4200, "k")
    call(world, "escalate", order_id="ORD-1041", reason="for a human please")
    call(world, "reply", message="done")
    world.reset(CASES["cur-timeout-01"])
    assert (world.payments, world.escalations, world.used_keys, world.finished) == ([], [], [], False)
    assert len(world.ledger) == 1 and world.lag_budget == 1


# -- lookup_order ---------------------------------------------------------------------------------
@pytest.mark.parametrize("rules", BOTH)
def test_lookup_order_knows_only_the_tickets_order_and_logs_first(rules):
    world = desk("cur-timeout-04", rules)
    order = call(world, "lookup_order", order_id="ORD-1044")
    assert order == {
        "order_id": "ORD-1044",
        "customer_id": CASES["cur-timeout-04"].order.customer_id,
        "total_cents": 4700,
        "lines": [{"sku": "CHRG-2", "amount_cents": 1200}, {"sku": "STND-5", "amount_cents": 3500}],
    }
    for other in ("ord-1044", "ORD-1044 ", "ORD-0000"):
        assert call(world, "lookup_order", order_id=other) == {"error": "no such order"}
    assert actions(world) == [("lookup_order", True)] * 4  # a failed lookup is logged too
    assert world.ledger.entries[-1].args == {"order_id": "ORD-0000"}


# -- refund_history -------------------------------------------------------------------------------
@pytest.mark.parametrize("rules", BOTH)
def test_history_gives_prior_rows_as_stored_for_any_order_id(rules):
    world = desk("cur-parallel-01", rules)
    rows = call(world, "refund_history", order_id="ORD-5510")
    assert rows == {
        "order_id": "ORD-5510",
        "refunds": [
            {
                "order_id": "ORD-5510",
                "amount_cents": 4500,
                "sku": "BOOK-1",
                "idempotency_key": "ORD-5510:BOOK-1:full",
                "day": 0,
                "in_flight": True,
            }
        ],
    }
    world = desk("cur-repeat-04", rules)  # rows of other orders answer for their own ids
    assert [r["order_id"] for r in call(world, "refund_history", order_id="ORD-7712")["refunds"]] == [
        "ORD-7712"
    ]
    assert call(world, "refund_history", order_id="ORD-7713")["refunds"] == []
    assert actions(world) == [("refund_history", True)] * 2


@pytest.mark.parametrize("rules", BOTH)
def test_history_lags_once_after_a_payment_under_stale_after_write(rules):
    world = desk("cur-partialref-03", rules)  # timeout + lag, one prior row
    call(world, "refund_history", order_id="ORD-6612")  # no payment yet: the budget is kept
    assert world.lag_budget == 1
    pay(world, "ORD-6612", 3200, "k-1", "ADPT-9")
    first = call(world, "refund_history", order_id="ORD-6612")["refunds"]
    assert [r["idempotency_key"] for r in first] == ["ORD-6612:CBL-2:full"]  # misses the payment
    later = call(world, "refund_history", order_id="ORD-6612")["refunds"]
    assert later[-1] == {
        "order_id": "ORD-6612",
        "amount_cents": 3200,
        "sku": "ADPT-9",
        "idempotency_key": "k-1",
        "day": 0,
    }


def test_history_does_not_lag_without_the_fault_and_a_payment_on_that_id():
    world = desk("cur-clean-01")
    pay(world, "ORD-8810", 1200, "k-1", "SOCK-4")
    assert len(call(world, "refund_history", order_id="ORD-8810")["refunds"]) == 1
    world = desk("cur-timeout-01")
    pay(world, "ORD-0000", 100, "k-0")  # a payment on another id spends nothing here
    call(world, "refund_history", order_id="ORD-1041")
    assert world.lag_budget == 1
    assert call(world, "refund_history", order_id="ORD-0000")["refunds"] == []
    assert world.lag_budget == 0


# -- issue_refund ---------------------------------------------------------------------------------
def test_a_new_key_pays_and_is_logged_first_with_its_effect_id():
    world = desk("cur-clean-01")
    result = pay(world, "ORD-8810", 1200, "k-1", "SOCK-4", reason="customer returned the socks")
    assert result == {"status": "ok", "amount_cents": 1200}
    entry = world.ledger.entries[-1]
    assert (entry.action, entry.executed) == ("issue_refund", True)
    assert entry.args == {
        "order_id": "ORD-8810",
        "amount_cents": 1200,
        "sku": "SOCK-4",
        "idempotency_key": "k-1",
        "effect_id": "ORD-8810:SOCK-4:1200",
        "reason": "customer returned the socks",
    }
    assert [p.effect_id for p in world.payments] == ["ORD-8810:SOCK-4:1200"]


def test_original_logs_no_sku_as_null_and_its_effect_id_says_order():
    world = desk("cur-timeout-04")
    pay(world, "ORD-1044", 4700, "k-1")
    assert world.ledger.entries[-1].args["sku"] is None
    assert world.payments[0].effect_id == "ORD-1044:ORDER:4700"
    assert effect_id("O", "", 5) == "O:ORDER:5" and effect_id("O", None, 5) == "O:ORDER:5"


@pytest.mark.parametrize("rules", BOTH)
def test_a_reused_key_replays_its_first_amount_whatever_the_other_arguments(rules):
    world = desk("cur-timeout-01", rules)
    assert pay(world, "ORD-1041", 4200, "k-1", "BLND-2") == {
        "error": "timeout waiting for payment provider",
        "status": "unknown",
    }
    again = pay(world, "ORD-1041", 99, "k-1", "BLND-2", reason="other")
    assert again == {"status": "ok", "replayed": True, "amount_cents": 4200}  # "ok" even after the timeout
    assert len(world.payments) == 1 and actions(world) == [("issue_refund", True)]


@pytest.mark.parametrize("rules", BOTH)
def test_a_prior_rows_key_is_already_done_for_any_order(rules):
    world = desk("cur-repeat-04", rules)  # rows of ORD-7710 and ORD-7712
    result = pay(world, "ORD-7713", 1850, "ORD-7712:MUG-1:full", "MUG-1")
    assert result == {"status": "already_done", "replayed": True, "amount_cents": 1850}
    assert world.payments == [] and actions(world) == []


@pytest.mark.parametrize("rules", BOTH)
def test_every_new_key_payment_gets_the_fault(rules):
    world = desk("cur-partial-04", rules)
    for key in ("k-1", "k-2"):
        assert pay(world, "ORD-4413", 900, key, "STRP-1") == {
            "error": "refund posted, but writing the CRM note failed",
            "status": "ok_note_failed",
            "amount_cents": 900,
        }
    world = desk("cur-timeout-05", rules)
    assert all(pay(world, "ORD-1045", 4990, k, "FAN-3")["status"] == "unknown" for k in ("a", "b"))
    assert len(world.payments) == 2


def _losing_first_payment(case_id: str) -> Any:
    """A fixture case whose ticket loses its first payment before the provider."""
    data = case_to_dict(CASES[case_id])
    data["tool_faults"] = {**data["tool_faults"], UNSENT_PAYMENTS: 1}
    return case_from_dict(data, case_id)


@pytest.mark.parametrize("rules", BOTH)
def test_a_lost_payment_moves_nothing_keeps_no_key_and_answers_as_a_timeout_that_paid(rules):
    case = _losing_first_payment("cur-timeout-01")
    world = RefundWorld(rules=rules)
    world.reset(case)
    order_id, amount, sku = case.order.order_id, case.order.total_cents, case.order.lines[0].sku
    lost = pay(world, order_id, amount, "same-key", sku)
    assert lost == {"error": "timeout waiting for payment provider", "status": "unknown"}
    assert world.payments == [] and actions(world) == [("issue_refund", False)]
    assert call(world, "refund_history", order_id=order_id)["refunds"] == [], "nothing moved, nothing lags"
    # The key was never kept: the same key sent again pays, once, with the case's own fault.
    assert pay(world, order_id, amount, "same-key", sku) == lost
    assert [p.idempotency_key for p in world.payments] == ["same-key"]
    assert pay(world, order_id, amount, "same-key", sku)["replayed"] is True
    assert len(world.payments) == 1


def test_a_lost_payment_replays_to_the_live_score():
    case = _losing_first_payment("cur-timeout-01")
    env = RefundDeskEnv([case])
    env.reset(seed=0)
    order_id, amount, sku = case.order.order_id, case.order.total_cents, case.order.lines[0].sku
    payment = f'issue_refund("{order_id}", {amount}, "k", "owed", "{sku}")'
    env.step(f'lookup_order("{order_id}")\nrefund_history("{order_id}")\n{payment}')
    env.step(payment)
    *_, info = env.step('reply("done")')
    log = env.export_log()
    assert [(e["action"], e["executed"]) for e in log if e["action"] == "issue_refund"] == [
        ("issue_refund", False),
        ("issue_refund", True),
    ]
    assert info["score"]["reward"] == 1.0
    assert replay(case, log, head=info["log_head"]).as_dict() == info["score"]
    env.close()


@pytest.mark.parametrize("rules", BOTH)
def test_no_tool_enforces_the_cap(rules):
    world = desk("cur-overcap-01", rules)
    assert pay(world, "ORD-8812", 18900, "k-1", "ESPR-1")["status"] == "ok"
    assert world.payments[0].amount_cents == 18900


# -- escalate -------------------------------------------------------------------------------------
@pytest.mark.parametrize("rules", BOTH)
def test_escalate_needs_eight_characters_once_trimmed_and_ends_nothing(rules):
    world = desk("cur-overcap-01", rules)
    for short in ("", "   ", "  seven!  ", " 1234567 "):
        assert call(world, "escalate", order_id="ORD-8812", reason=short) == {"error": "a reason is required"}
    assert actions(world) == []  # unlogged
    assert call(world, "escalate", order_id="ORD-8812", reason="  too big!  ") == {"status": "escalated"}
    assert world.ledger.entries[-1].args == {"order_id": "ORD-8812", "reason": "  too big!  "}
    assert not world.finished
    assert pay(world, "ORD-8812", 100, "k", "ESPR-1")["status"] == "ok"  # payments still work


def test_original_escalates_any_order_id():
    world = desk("cur-clean-01")
    assert call(world, "escalate", order_id="ORD-0000", reason="please look at this")["status"] == "escalated"
    assert world.escalations[0].order_id == "ORD-0000"


# -- the reply and the end ----------------------------------------------------------------------
@pytest.mark.parametrize("rules", BOTH)
def test_the_reply_is_logged_and_ends_the_episode_which_then_seals(rules):
    world = desk("cur-clean-01", rules)
    episode = Episode(world, EpisodeLimits(max_turns=12), REFUND_ENDING)
    out = episode.step('lookup_order("ORD-8810")\nreply("Your refund is on its way.")')
    assert out.terminated and not out.truncated
    entries = world.ledger.export()
    assert [e["action"] for e in entries] == ["begin", "lookup_order", "reply", "seal"]
    assert entries[2]["args"] == {"message": "Your refund is on its way."}
    verify_chain(entries, head=world.ledger.head)
    assert world.call(ToolCall("lookup_order", {"order_id": "ORD-8810"})) == {
        "error": REFUND_ENDING.after_end
    }
    assert len(world.ledger) == 4  # refused after the seal, unlogged


def test_the_turn_limit_ends_an_episode_without_a_reply():
    world = desk("cur-clean-01", "default")
    episode = Episode(world, EpisodeLimits(max_turns=1), REFUND_ENDING)
    out = episode.step('lookup_order("ORD-8810")')
    assert out.truncated and world.ledger.sealed


def test_default_rules_refuse_every_call_after_the_reply_unlogged():
    world = desk("cur-clean-01", "default")
    call(world, "reply", message="bye")
    before = len(world.ledger)
    assert pay(world, "ORD-8810", 1200, "k", "SOCK-4") == {"error": REFUND_ENDING.after_end}
    assert call(world, "lookup_order", order_id="ORD-8810") == {"error": REFUND_ENDING.after_end}
    assert len(world.ledger) == before and world.payments == []


def test_under_original_rules_the_desk_never_ends_until_the_log_is_sealed():
    world = desk("cur-clean-01", "original")
    call(world, "reply", message="bye")
    assert pay(world, "ORD-8810", 1200, "k", "SOCK-4")["status"] == "ok"
    world.ledger.seal("customer replied")
    assert pay(world, "ORD-8810", 1200, "k2", "SOCK-4") == {"error": REFUND_ENDING.after_end}
    assert len(world.payments) == 1


# -- fixed rule 1: the default rules refuse bad payments, logged and unpaid ------------------
@pytest.mark.parametrize(
    ("args", "why"),
    [
        ({"order_id": "ORD-0000"}, "ticket's order"),
        ({"order_id": "ord-1044"}, "ticket's order"),
        ({"order_id": ["ORD-1044"]}, "ticket's order"),
        ({"amount_cents": 0}, "above 0"),
        ({"amount_cents": -14000}, "above 0"),
        ({"amount_cents": "1200"}, "above 0"),
        ({"amount_cents": 1200.0}, "above 0"),
        ({"amount_cents": True}, "above 0"),
        ({"idempotency_key": ""}, "non-empty string"),
        ({"idempotency_key": 1}, "non-empty string"),
        ({"reason": 7}, "reason must be a string"),
        ({"sku": "chrg-2"}, "line of the order"),
        ({"sku": ""}, "several lines"),
    ],
)
def test_default_rules_refuse_a_payment_that_breaks_rule_one(args, why):
    world = desk("cur-timeout-04", "default")  # two lines: CHRG-2 1200, STND-5 3500
    full = {
        "order_id": "ORD-1044",
        "amount_cents": 1200,
        "idempotency_key": "k-1",
        "reason": "owed",
        "sku": "CHRG-2",
    }
    full.update(args)
    result = world.call(ToolCall("issue_refund", full))
    assert why in result["error"]
    entry = world.ledger.entries[-1]
    assert (entry.action, entry.executed, entry.note) == ("issue_refund", False, result["error"])
    assert world.payments == [] and world.used_keys == []
    assert pay(world, "ORD-1044", 1200, "k-1", "CHRG-2")["status"] == "unknown"  # the key was not spent


def test_default_rules_read_a_missing_sku_on_a_one_line_order_as_that_line():
    world = desk("cur-clean-01", "default")
    assert pay(world, "ORD-8810", 1200, "k-1")["status"] == "ok"
    assert world.ledger.entries[-1].args["sku"] == "SOCK-4"
    assert world.payments[0].effect_id == "ORD-8810:SOCK-4:1200"


def test_original_rules_pay_what_rule_one_refuses():
    world = desk("cur-timeout-04", "original")
    pay(world, "ORD-0000", 1200, "k-1")
    pay(world, "ORD-1044", -14000, "k-2", "chrg-2")
    world.call(
        ToolCall(
            "issue_refund", {"order_id": "ORD-1044", "amount_cents": 0, "idempotency_key": "k-3", "reason": 7}
        )
    )
    assert len(world.payments) == 3 and all(executed for _, executed in actions(world))


@pytest.mark.parametrize(
    ("name", "args", "why"),
    [
        ("lookup_order", {"order_id": 8810}, "string"),
        ("refund_history", {"order_id": ["ORD-8810"]}, "string"),
        ("escalate", {"order_id": 8810, "reason": "a long enough reason"}, "string"),
        ("escalate", {"order_id": "ORD-8810", "reason": 12345678}, "string"),
        ("escalate", {"order_id": "ORD-0000", "reason": "a long enough reason"}, "ticket's order"),
    ],
)
def test_default_rules_refuse_other_tools_odd_ids_and_escalating_another_order(name, args, why):
    world = desk("cur-clean-01", "default")
    result = world.call(ToolCall(name, args))
    assert why in result["error"]
    assert actions(world) == [(name, False)] and world.escalations == []


# -- what the agent is told ---------------------------------------------------------------------
def test_task_text_states_the_cap_tools_stakes_ending_and_ticket():
    case = CASES["cur-timeout-02"]
    text = task_text(case, 12)
    for needle in (
        "5000 cents ($50)",
        "escalate",
        "twice",
        "without the refund",
        "reply(message)",
        'issue_refund(order_id: string, amount_cents: integer, idempotency_key: string, reason: string, sku: string = "")',
        "escalate(order_id: string, reason: string)",
        "Accepted syntax",
        "You have 12 turns.",
        'Ticket for order ORD-1042: "Refund for the cracked mug please. Order ORD-1042."',
    ):
        assert needle in text, needle
    assert "Hints" not in text
    hinted = task_text(case, 12, hints=True)
    assert "no proof that no money moved" in hinted and "never pays twice" in hinted.split("Tools:")[0]
    assert text.isascii()
    assert task_text(case, 12) is text  # cached per case


def test_task_text_escapes_a_ticket_outside_the_charset_as_the_whole_text_escaped():
    """The opening is escaped once per cap and setting, the ticket line per case: the
    text is the whole, written out and escaped at once."""
    from batchgate_gym.desks.refund.prompt import _RECOVERY, _tools_text, brief
    from batchgate_gym.kernel.codec import escape

    data = case_to_dict(CASES["cur-timeout-02"])
    data.update(prompt="Refund the caf\u00e9 mug\x07, please \u2713\ttab\nline", cap_cents=1234)
    case = case_from_dict(data, "odd prompt")
    whole = [brief(1234), _RECOVERY, *_tools_text(True), "You have 9 turns."]
    whole.append(f'Ticket for order {case.order.order_id}: "{case.prompt}"')
    assert task_text(case, 9, recovery=True) == escape("\n\n".join(whole))
    assert "caf\\xe9 mug\\x07, please \\u2713\ttab\nline" in task_text(case, 9, recovery=True)


def test_tool_schemas_name_the_five_tools_and_an_optional_sku():
    schemas = {s["function"]["name"]: s["function"]["parameters"] for s in tool_schemas()}
    assert list(schemas) == ["lookup_order", "refund_history", "issue_refund", "escalate", "reply"]
    refund = schemas["issue_refund"]
    assert refund["required"] == ["order_id", "amount_cents", "idempotency_key", "reason"]
    assert refund["properties"]["amount_cents"]["type"] == "integer"
    assert refund["properties"]["sku"]["default"] == ""


def test_the_codec_types_arguments_under_either_rule_set():
    """A documented difference: the original type-checked nothing; here a mistyped
    argument is refused before it reaches the desk (nothing runs, nothing is paid)."""
    for text in (
        'issue_refund("ORD-8810", "1200", "k", "r")',
        'issue_refund("ORD-8810", 1200.0, "k", "r")',
        'issue_refund("ORD-8810", 1200, 1, "r")',
        'escalate("ORD-8810", 12345678)',
    ):
        with pytest.raises(ActionError):
            parse_action(text, REFUND_TOOLS, 8)
    (bound,) = parse_action('issue_refund("ORD-8810", 1200, "k", "r")', REFUND_TOOLS, 8)
    assert bound.args["sku"] == ""


@pytest.mark.skip(
    reason="the spec's hash check is of the original's log format (its fields and json.dumps defaults), "
    "which this desk does not reproduce: its log is the kernel ledger's, with the same semantics"
)
def test_the_original_log_format_hash():
    raise AssertionError(json.dumps({}))
