"""The brief fits the mode, every enabled tool is offered, and a run's settings are recorded and
guard its resume."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from batchgate_gym.app.cli import main
from batchgate_gym.desks import registry
from batchgate_gym.llm import ChatEpisode, ChatSettings
from batchgate_gym.llm.runner import RunConfig, SettingsMismatch, select

from .support import rows, run_model, serving

DESK_OPTIONS = {"gate": {}, "refund": {"recovery": True}, "analyst": {}}


def opened(desk_name: str, mode: str, **env: Any) -> tuple[ChatEpisode, list[str]]:
    desk = registry.get(desk_name)
    chat = ChatEpisode(
        desk.make_env(desk.fixed_cases(), **env),
        None,
        ChatSettings(mode=mode, no_tool_call=desk.chat_no_tool_call),
    )
    chat.reset(options={"case_index": 0})
    return chat, [tool["function"]["name"] for tool in chat.tools]


@pytest.mark.parametrize("desk_name", list(DESK_OPTIONS))
def test_the_tools_mode_brief_shows_no_text_call_syntax(desk_name: str) -> None:
    chat, names = opened(desk_name, "tools", **DESK_OPTIONS[desk_name])
    system = chat.messages[0]["content"]
    text_call = re.compile(r"\b(" + "|".join(names) + r")\(")
    assert not text_call.search(system), text_call.search(system)
    assert "Accepted syntax" not in system and '{"name"' not in system and "Tools:" not in system
    assert "tool-calling interface" in system
    nudged = chat.step({"role": "assistant", "content": "Let me think about it first."}).messages
    for message in nudged:
        assert "Accepted syntax" not in message["content"] and not text_call.search(message["content"])
    text, _ = opened(desk_name, "text", **DESK_OPTIONS[desk_name])
    assert "Accepted syntax" in text.messages[0]["content"] or "one per line" in text.messages[0]["content"]


@pytest.mark.parametrize("mode", ["tools", "text"])
def test_the_refund_brief_says_a_plain_message_is_the_reply_that_ends_it(mode: str) -> None:
    chat, _ = opened("refund", mode)
    assert "A plain message, with no tool call, is your reply" in chat.messages[0]["content"]
    step = chat.step({"role": "assistant", "content": "Your refund is on its way."})
    assert step.terminated  # in both modes
    gate, _ = opened("gate", mode)
    assert "A plain message" not in gate.messages[0]["content"]


def test_recovery_offers_void_refund_to_run_model(tmp_path: Path) -> None:
    _, plain = opened("refund", "tools")
    _, recovering = opened("refund", "tools", recovery=True)
    assert "void_refund" not in plain and recovering == [*plain[:-1], "void_refund", "reply"]
    out = tmp_path / "recovery.jsonl"
    with serving("careful", desk="refund") as server:
        run_model(server.base_url, out, "m", desk="refund", split="eval", n=1, env_kwargs={"recovery": True})
        offered = [tool["function"]["name"] for tool in server.stats.last_settings["tools"]]
    assert "void_refund" in offered
    assert "void_refund" in rows(out)[0]["messages"][0]["content"]


def test_a_system_prompt_file_replaces_the_brief_and_is_recorded(tmp_path: Path) -> None:
    out = tmp_path / "prompted.jsonl"
    with serving("naive") as server:
        run_model(server.base_url, out, "m", split="eval", n=1, system_prompt="You gate loads. Be quick.")
    row = rows(out)[0]
    assert row["messages"][0] == {"role": "system", "content": "You gate loads. Be quick."}
    assert (
        row["system_prompt"]
        == json.loads((tmp_path / "prompted.jsonl.meta.json").read_text())["settings"]["system_prompt_sha256"]
    )


def test_sampling_settings_and_headers_reach_every_request(tmp_path: Path) -> None:
    out = tmp_path / "sampled.jsonl"
    with serving("careful") as server:
        run_model(
            server.base_url, out, "m", split="eval", n=1, temperature=0.3, top_p=0.9, max_tokens=4000,
            seed=10, sampling_args={"min_p": 0.05}, headers={"X-Team": "evals"},
        )  # fmt: skip
        sent, headers = server.stats.last_settings, server.stats.last_headers
    assert (sent["temperature"], sent["top_p"], sent["max_tokens"], sent["seed"]) == (0.3, 0.9, 4000, 10)
    assert sent["min_p"] == 0.05 and "x-team" in headers
    meta = json.loads((tmp_path / "sampled.jsonl.meta.json").read_text())
    assert meta["settings"]["temperature"] == 0.3 and meta["settings"]["header_names"] == ["x-team"]
    assert meta["versions"]["desk_env"] == "batchgate_gym/BadBatchGate-v0"
    assert meta["runs"][0]["counts"]["scored"] == 1 and meta["runs"][0]["ended"]
    assert rows(out)[0]["settings_key"] == meta["settings_key"]


def test_a_rerun_with_other_settings_is_refused_naming_them(tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "run.jsonl"
    with serving("careful") as server:
        run_model(server.base_url, out, "m", split="eval", n=2, mode="text")
        before = out.read_text()
        with pytest.raises(SettingsMismatch, match=r'mode: "text" -> "tools"'):
            run_model(server.base_url, out, "m", split="eval", n=2, mode="tools")
        with pytest.raises(SettingsMismatch, match=r"temperature: null -> 0.5"):
            run_model(server.base_url, out, "m", split="eval", n=2, mode="text", temperature=0.5)
        asked = server.stats.requests
        again = run_model(server.base_url, out, "m", split="eval", n=2, mode="text")
        assert server.stats.requests == asked and again.skipped == 2  # the same settings resume
        refund = tmp_path / "refund.jsonl"
        run_model(server.base_url, refund, "m", desk="refund", split="eval", n=1, max_retries=0)
        with pytest.raises(SettingsMismatch, match=r"desk_options.recovery: false -> true"):
            run_model(
                server.base_url, refund, "m", desk="refund", split="eval", n=1, env_kwargs={"recovery": True}
            )
    assert out.read_text() == before


def test_case_selection_by_id_and_by_a_seeded_sample() -> None:
    base = {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": "k", "out": Path("x.jsonl")}
    cases = registry.get("gate").fixed_cases(split="eval")
    picked = select(cases, RunConfig(**base, case_ids=(cases[5].case_id, cases[2].case_id)))
    assert picked == [5, 2]
    first = select(cases, RunConfig(**base, sample=6, sample_seed=3))
    assert first == select(cases, RunConfig(**base, sample=6, sample_seed=3)) and len(set(first)) == 6
    assert first != select(cases, RunConfig(**base, sample=6, sample_seed=4))
    assert select(cases, RunConfig(**base, n=3)) == [0, 1, 2]
    with pytest.raises(ValueError, match="no case 'nope'"):
        select(cases, RunConfig(**base, case_ids=("nope",)))
    with pytest.raises(ValueError, match="not both"):
        RunConfig(**base, n=3, sample=2)


def test_the_command_takes_case_and_sample_and_refuses_them_together(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    args = ["run-model", "--split", "eval", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    args += ["--out", str(tmp_path / "o.jsonl")]
    with pytest.raises(SystemExit):
        main([*args, "--case", "eval-clean-control-0", "--sample", "3"])
    assert "not allowed with argument" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="--sample-seed seeds --sample"):
        main([*args, "--sample-seed", "4"])
    with pytest.raises(SystemExit, match=r"--sampling-args wants a JSON object"):
        main([*args, "--sampling-args", "[1, 2]"])
    with pytest.raises(SystemExit, match=r"a --header is 'Name: value'"):
        main([*args, "--header", "no colon"])
