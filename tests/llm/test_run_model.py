"""run-model against a real local server: scores equal evaluate's, faults and mistakes kept apart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from batchgate_gym import evaluate
from batchgate_gym.llm.results import load_results
from batchgate_gym.llm.summary import model_report_json

from .support import rows, run_model, serving


@pytest.fixture(scope="module")
def direct() -> dict[str, Any]:
    return {name: evaluate(name_policy(name), split="eval", progress=False) for name in ("careful", "naive")}


def name_policy(name: str) -> Any:
    from batchgate_gym.policies.gate.reference import REFERENCE_POLICIES

    return REFERENCE_POLICIES[name]


@pytest.mark.parametrize("policy", ["careful", "naive"])
@pytest.mark.slow  # server: the whole eval split
def test_through_the_server_every_case_scores_what_evaluate_gives(
    policy: str, direct: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    with serving(policy) as server:
        summary = run_model(server.base_url, out, f"scripted-{policy}", split="eval", concurrency=8)
    assert summary.scored == 32 and summary.infra_errors == 0 and summary.retries == 0
    expected = {episode.case_id: episode.reward for episode in direct[policy].episodes}
    got = {row["case_id"]: row["score"]["reward"] for row in rows(out)}
    assert got == expected
    report = model_report_json(load_results([out]), "gate")["policies"][f"scripted-{policy}"]
    assert {case: entry["reward"] for case, entry in report["per_case"].items()} == expected
    assert report["mean_reward"] == direct[policy].overall.mean("reward")
    assert report["infra_errors"] == 0


def test_text_mode_plays_the_same_episodes(direct: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "text.jsonl"
    with serving("careful") as server:
        run_model(server.base_url, out, "scripted-careful", split="eval", n=4, mode="text")
    found = rows(out)
    assert all(m["role"] != "tool" for row in found for m in row["messages"])
    expected = {episode.case_id: episode.reward for episode in direct["careful"].episodes[:4]}
    assert {row["case_id"]: row["score"]["reward"] for row in found} == expected


def test_with_transport_faults_each_rollout_is_scored_or_an_infra_error(tmp_path: Path) -> None:
    out = tmp_path / "faults.jsonl"
    with serving("careful", faults=0.2, seed=3, stall=1.0) as server:
        summary = run_model(
            server.base_url, out, "careful", split="eval", n=6, rollouts=2, timeout=0.4, max_retries=1
        )
        kinds = set(server.stats.faults)
    found = rows(out)
    assert len(found) == 12 and len({(r["case_id"], r["rollout"]) for r in found}) == 12
    assert kinds == {"rate_limit", "server_error", "stall", "bad_json"}  # every fault met the client
    assert summary.retries > 0
    scored = [r for r in found if r["error"] is None]
    infra = [r for r in found if r["error"] is not None]
    assert scored and infra  # this seed gives both
    assert all(r["score"]["reward"] == 1.0 for r in scored)  # transport faults never touch the episode
    assert all(r["error"]["kind"] == "infra" and r["score"] is None for r in infra)
    # Each keeps its evidence: the log as far as it went, sealed as the machine's failure.
    assert all(r["log"][-1]["args"]["reason"].startswith("infra error: ") for r in infra)
    assert all(r["head"] == r["log"][-1]["hash"] for r in infra)
    report = model_report_json(load_results([out]), "gate")["policies"]["careful"]
    assert report["infra_errors"] == len(infra)
    assert report["scored"] == len(scored) and report["mean_reward"] == 1.0
    assert report["reward_distribution"]["0 to <0.25"] == 0  # no infra error counted as a 0


def test_model_errors_are_scored_never_infra(tmp_path: Path) -> None:
    out = tmp_path / "mistakes.jsonl"
    with serving("careful", model_errors=0.3, seed=1) as server:
        summary = run_model(server.base_url, out, "careful", split="eval", n=6, rollouts=2)
        made = sum(server.stats.model_errors.values())
    found = rows(out)
    assert summary.infra_errors == 0 and all(r["error"] is None for r in found)
    assert made > 0
    refused = [r for r in found if any(e.get("action") == "invalid_action" for e in r["log"])]
    assert len(refused) > 0  # the environment refused and logged the mistakes
    assert all(r["score"] is not None for r in refused)
    calls = [c["function"]["name"] for r in found for m in r["messages"] for c in m.get("tool_calls") or []]
    assert "drop_warehouse" in calls
    # careful goes on after a refused mistake as if it had not happened
    assert all(r["score"]["disposition"] == 1.0 for r in found)
