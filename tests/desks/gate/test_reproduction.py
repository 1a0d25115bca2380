"""Our environment, driven through its text interface by our own policies,
reproduces the original grader's figures on its eval fixture, case by case."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest
from conftest import FIXTURE_CASES

from batchgate_gym.app.cli import main

FIGURES = (
    "reward",
    "disposition",
    "report",
    "evidence",
    "inspected",
    "bad_batches_loaded",
    "revenue_error_usd",
)
TOTALS = ("mean_reward", "mean_disposition", "bad_batches_loaded", "revenue_error_usd")


def test_fixture_is_the_published_one():
    digest = hashlib.sha256(FIXTURE_CASES.read_bytes()).hexdigest()
    assert digest == "62d25f196301b72cfd097fd9fe51d65d3c80932cb95a5311c76b4361e865ac7b"


@pytest.fixture(scope="module")
def report():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "batchgate_gym",
            "report",
            "--cases",
            str(FIXTURE_CASES),
            "--json",
            "--no-progress",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)


@pytest.mark.parametrize("policy", ["naive", "careful", "refuse-all"])
def test_every_per_case_figure_matches(report, expected, policy):
    ours = report["policies"][policy]
    theirs = expected["policies"][policy]
    assert set(ours["per_case"]) == set(theirs["per_case"])
    for case_id, figures in theirs["per_case"].items():
        mine = ours["per_case"][case_id]
        for name in FIGURES:
            assert mine[name] == figures[name], (policy, case_id, name)
        assert mine["family"] == case_id.removeprefix("eval-").rsplit("-", 1)[0]
    for name in TOTALS:
        assert ours[name] == theirs[name], (policy, name)


def test_json_shape_is_exactly_the_documented_one(report):
    for result in report["policies"].values():
        assert set(result) == {
            "mean_reward",
            "mean_disposition",
            "bad_batches_loaded",
            "revenue_error_usd",
            "per_case",
        }
        for figures in result["per_case"].values():
            assert set(figures) == {"family", *FIGURES}


def test_human_report_prints_the_headline(capsys):
    assert main(["report", "--cases", str(FIXTURE_CASES), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "| mean reward | 0.5344 | 1.0000 | 0.3875 |" in text
    assert "| defective batches loaded | 24 / 24 | 0 / 24 | 0 / 24 |" in text
    assert "$746,410.24" in text and "$567,192.38" in text
    assert "| no disposition | 0.2375 | 0.5000 | 0.2000 |" in text
