"""The refund desk through the chat adapter: a plain message is the reply that ends it."""

from __future__ import annotations

from batchgate_gym.desks import registry
from batchgate_gym.desks.refund.tools import tool_schemas
from batchgate_gym.llm import ChatEpisode, ChatSettings, ScriptedModel
from batchgate_gym.policies.refund.reference import CarefulRefundPolicy


def test_a_message_without_tool_calls_replies_and_ends_the_refund_episode() -> None:
    desk = registry.get("refund")
    env = desk.make_env("eval")
    chat = ChatEpisode(env, tool_schemas(), ChatSettings(no_tool_call=desk.chat_no_tool_call))
    chat.reset(options={"case_index": 0})
    step = chat.step({"role": "assistant", "content": "Your refund is on its way."})
    assert step.terminated and "score" in step.info
    reply = [e for e in env.unwrapped.export_log() if e["action"] == "reply"]
    assert reply and reply[0]["args"]["message"] == "Your refund is on its way."


def test_careful_through_chat_scores_one_on_every_refund_eval_case() -> None:
    desk = registry.get("refund")
    env = desk.make_env("eval")
    for index in range(32):
        chat = ChatEpisode(env, tool_schemas(), ChatSettings(no_tool_call=desk.chat_no_tool_call))
        chat.reset(options={"case_index": index})
        model = ScriptedModel(CarefulRefundPolicy())
        while True:
            step = chat.step(model.respond(chat.messages))
            if step.done:
                break
        assert step.info["score"]["reward"] == 1.0, step.info["case_id"]
