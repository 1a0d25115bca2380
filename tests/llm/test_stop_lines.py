"""The lines a run that cannot go on says: the server's error once, not three times, and
a first request that finds no server says so at once, before the retries."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from batchgate_gym.llm.runner import RunStopped, stop_message

from .support import run_model

openai = pytest.importorskip("openai")
httpx = pytest.importorskip("httpx")

BASE = "http://127.0.0.1:9/v1"


def _not_found() -> Exception:
    body = {
        "error": {
            "message": "The model `gpt-nope` does not exist.",
            "type": "invalid_request_error",
            "code": "model_not_found",
        }
    }
    response = httpx.Response(404, request=httpx.Request("POST", f"{BASE}/chat/completions"))
    # The client's own message, as it builds it: the status and the body again.
    return openai.NotFoundError(f"Error code: 404 - {body}", response=response, body=body["error"])


def test_an_unknown_model_is_named_once_with_the_servers_words():
    config = SimpleNamespace(base_url=BASE, model="gpt-nope", api_key_env="KEY")
    line = stop_message(_not_found(), config)
    assert line == (
        f"{BASE} does not know the model 'gpt-nope' (404: The model `gpt-nope` does not exist."
        f" (model_not_found)); check --model ({BASE}/models lists them)"
    )
    assert line.count("does not exist") == 1


def test_an_unreachable_server_is_said_at_the_first_failure_then_the_run_stops(tmp_path: Path, caplog):
    stopped = pytest.raises(RunStopped, match=re.escape(f"cannot reach {BASE}"))
    with caplog.at_level(logging.WARNING, logger="batchgate_gym.llm.runner"), stopped:
        run_model(BASE, tmp_path / "x.jsonl", "m", split="eval", n=1, max_retries=2, backoff=0.01)
    (waiting,) = [record.getMessage() for record in caplog.records]
    assert (
        waiting
        == f"cannot reach {BASE} (APIConnectionError); trying 2 more times over 0.03 s (--max-retries, --backoff)"
    )
