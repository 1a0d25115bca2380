"""Helpers for the model tests: a real server on 127.0.0.1 and a real client run against it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from batchgate_gym.llm.runner import RunConfig, RunSummary, run_rollouts
from batchgate_gym.llm.server import ServerSettings, serve_in_thread

FAST = {"timeout": 5.0, "backoff": 0.01, "max_backoff": 0.05}


def serving(policy: str, **settings: Any) -> Any:
    """A scripted server in a thread of this process, on a free port of 127.0.0.1."""
    settings.setdefault("retry_after", 0.01)
    return serve_in_thread(ServerSettings(policy=policy, **settings))


def run_model(base_url: str, out: Path, model: str, **options: Any) -> RunSummary:
    """``run_rollouts`` with the official client against ``base_url`` (short delays unless told)."""
    config = RunConfig(model=model, base_url=base_url, out=out, **{"api_key": "local", **FAST, **options})
    return asyncio.run(run_rollouts(config))


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
