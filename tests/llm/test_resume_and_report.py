"""A killed run resumes without redoing finished rollouts; report re-grades every row and refuses edits."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from batchgate_gym.app.cli import main
from batchgate_gym.llm.results import ResultsError, load_results, read_rows

from .support import rows, run_model, serving

ROOT = Path(__file__).resolve().parents[2]


def cli(args: list[str], capsys: Any) -> str:
    assert main(args) == 0
    return capsys.readouterr().out


@pytest.mark.slow  # server: a run killed and resumed
def test_a_run_killed_midway_resumes_without_redoing_a_rollout(tmp_path: Path) -> None:
    out = tmp_path / "killed.jsonl"
    with serving("careful", delay=0.03) as server:
        command = [
            sys.executable, "-m", "batchgate_gym", "run-model", "--split", "eval", "-n", "6", "-r", "2",
            "--model", "careful", "--base-url", server.base_url, "--api-key-env", "TEST_KEY",
            "--concurrency", "2", "--out", str(out),
        ]  # fmt: skip
        process = subprocess.Popen(command, cwd=ROOT, env={**os.environ, "TEST_KEY": "local"})
        try:
            deadline = time.monotonic() + 60
            while (not out.exists() or out.read_text().count("\n") < 3) and time.monotonic() < deadline:
                time.sleep(0.01)
            process.kill()
        finally:
            process.wait()
        assert process.returncode != 0  # killed, not finished
        with out.open("a") as handle:
            handle.write('{"desk": "gate", "case_id": "eval-')  # a line cut short
        before = [row for _line, row in read_rows(out)]
        assert 3 <= len(before) < 12
        kept = out.read_bytes()[: out.read_bytes().rfind(b"\n") + 1]
        asked = server.stats.requests
        summary = run_model(server.base_url, out, "careful", split="eval", n=6, rollouts=2)
        asked = server.stats.requests - asked
    after = rows(out)
    assert out.read_bytes().startswith(kept)  # finished rows kept as they were; the cut line dropped
    assert summary.skipped == len(before) and summary.scored == 12 - len(before)
    assert len(after) == 12 and len({(r["case_id"], r["rollout"]) for r in after}) == 12
    assert asked == sum(
        r["requests"] for r in after[len(before) :]
    )  # only the missing rollouts were asked for
    assert all(r["score"]["reward"] == 1.0 for r in after)


def test_a_limited_run_then_a_rerun_asks_exactly_what_one_run_asks(tmp_path: Path) -> None:
    with serving("naive") as server:
        run_model(server.base_url, tmp_path / "whole.jsonl", "naive", split="eval", n=4, rollouts=2)
        whole = server.stats.requests
        part = tmp_path / "parts.jsonl"
        first = run_model(server.base_url, part, "naive", split="eval", n=4, rollouts=2, limit=3)
        second = run_model(server.base_url, part, "naive", split="eval", n=4, rollouts=2)
        third = run_model(server.base_url, part, "naive", split="eval", n=4, rollouts=2)
        assert server.stats.requests - whole == whole
    assert (first.scored, second.scored, second.skipped, third.scored, third.skipped) == (3, 5, 3, 0, 8)
    assert len(rows(part)) == 8


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("results")
    paths = {}
    for policy in ("careful", "naive"):
        paths[policy] = folder / f"{policy}.jsonl"
        with serving(policy) as server:
            run_model(server.base_url, paths[policy], f"scripted-{policy}", split="eval", n=4, rollouts=2)
    return paths


def edited(results: dict[str, Path], tmp_path: Path, change: Any, line: int = 2) -> Path:
    """A copy of careful's file with ``change(row)`` applied to its ``line``-th row."""
    lines = results["careful"].read_text().splitlines()
    row = json.loads(lines[line - 1])
    change(row)
    lines[line - 1] = json.dumps(row)
    path = tmp_path / "edited.jsonl"
    path.write_text("\n".join(lines) + "\n")
    Path(f"{path}.meta.json").write_text(Path(f"{results['careful']}.meta.json").read_text())
    return path


def test_report_has_one_column_per_model(results: dict[str, Path], capsys: Any) -> None:
    paths = [str(results["careful"]), str(results["naive"])]
    text = cli(["report", "--desk", "gate", "--results", *paths], capsys)
    assert "| scripted-careful | scripted-naive |" in text
    assert "| perfect rollouts | 8 / 8 |" in text and "| infra errors (not scored) | 0 | 0 |" in text
    report = json.loads(cli(["report", "--results", *paths, "--json"], capsys))
    careful = report["policies"]["scripted-careful"]
    assert careful["mean_reward"] == 1.0 and careful["infra_errors"] == 0
    assert len(careful["per_case"]) == 4
    assert all(entry["rollouts"] == 2 and entry["reward"] == 1.0 for entry in careful["per_case"].values())
    assert report["policies"]["scripted-naive"]["mean_reward"] < 1.0


def test_a_scored_row_rewritten_as_an_infra_error_without_its_log_is_refused(
    results: dict[str, Path], tmp_path: Path
) -> None:
    # An infra error is left out of the mean: one that carried no evidence would let a bad
    # rollout be dropped by rewriting it. Genuine ones keep their sealed log (test_run_model).
    def failed(row: dict[str, Any]) -> None:
        row.update(score=None, log=None, head=None, error={"kind": "infra", "class": "APITimeoutError"})

    path = edited(results, tmp_path, failed)
    with pytest.raises(SystemExit, match=r"edited\.jsonl:2: an infra error without its evidence"):
        main(["report", "--results", str(path)])


@pytest.mark.parametrize(
    "change",
    [
        lambda row: row["log"][2]["args"].update(batch_id="B-0000"),
        lambda row: row["log"].pop(),
        lambda row: row.update(head="0" * 64),
        lambda row: row["score"].update(reward=0.5),
    ],
    ids=["log-entry-edited", "log-cut-short", "head-replaced", "score-edited"],
)
def test_an_edited_row_is_refused_naming_the_file_and_line(
    results: dict[str, Path], tmp_path: Path, change: Any
) -> None:
    path = edited(results, tmp_path, change, line=2)
    with pytest.raises(ResultsError, match=re.escape(f"{path}:2: ")):
        load_results([path])
    with pytest.raises(SystemExit, match=r"edited\.jsonl:2: "):
        main(["report", "--results", str(path)])


def test_a_cut_last_line_is_left_out_and_a_broken_middle_line_is_refused(
    results: dict[str, Path], tmp_path: Path
) -> None:
    text = results["careful"].read_text()
    cut = tmp_path / "cut.jsonl"
    cut.write_text(text + text[:40])
    assert len(load_results([cut])["scripted-careful"].rollouts) == 8
    broken = tmp_path / "broken.jsonl"
    broken.write_text(text[:40] + "\n" + text)
    with pytest.raises(ResultsError, match=re.escape(f"{broken}:1: not a JSON row")):
        load_results([broken])


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"base_url": "notaurl"}, r"base_url is an http\(s\) address"),
        ({"base_url": "ftp://127.0.0.1/v1"}, r"base_url is an http\(s\) address"),
        ({"n": 0}, "n is at least 1 when given"),
        ({"limit": 0}, "limit is at least 1 when given"),
    ],
)
def test_a_run_that_could_only_write_infra_errors_is_refused_before_any_request(
    tmp_path, options, reason
) -> None:
    """A malformed address would fail every request, each rollout then written down as an
    infra error; zero cases or rollouts would play nothing. Both are refused up front."""
    from batchgate_gym.llm.runner import RunConfig

    given = {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": "k", "out": tmp_path / "o.jsonl"}
    with pytest.raises(ValueError, match=reason):
        RunConfig(**{**given, **options})
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.slow  # server: one model played under two rule sets
def test_one_models_rows_under_other_desk_settings_are_refused_or_named(tmp_path: Path, capsys: Any) -> None:
    with serving("naive", desk="refund") as server:
        for rules in ("default", "original"):
            run_model(
                server.base_url, tmp_path / f"{rules}.jsonl", "m", desk="refund", split="eval", n=6,
                env_kwargs={"rules": rules},
            )  # fmt: skip
    default, lenient = tmp_path / "default.jsonl", tmp_path / "original.jsonl"
    # The lenient rules pay the same transcripts far more: merged under one name, they
    # would have replaced the default rows and passed for the model's figure.
    strict_mean = load_results([default], "refund")["m"]
    lenient_mean = load_results([lenient], "refund")["m"]
    assert (strict_mean.settings, lenient_mean.settings) == ("", "rules=original")
    with pytest.raises(ResultsError, match=r"original\.jsonl:1: model 'm' was played under rules=original"):
        load_results([default, lenient], "refund")
    shown = cli(["report", "--desk", "refund", "--results", str(lenient)], capsys)
    assert "| played under | rules=original |" in shown
    plain = cli(["report", "--desk", "refund", "--results", str(default)], capsys)
    assert "played under" not in plain
    as_json = json.loads(cli(["report", "--desk", "refund", "--results", str(lenient), "--json"], capsys))
    assert as_json["policies"]["m"]["settings"] == "rules=original"
