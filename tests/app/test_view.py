"""batchgate view: the recorded scripted runs of all three desks in a real headless Chromium."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from browser import chromium_page, screenshot

from batchgate_gym.app.view import load_view, render_html
from batchgate_gym.llm.results import ResultsError, read_rows

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "llm"
# The gate's runs include injected transport faults (infra errors) and model mistakes.
FILES = [
    RESULTS / "scripted-careful-faults.jsonl",
    RESULTS / "scripted-naive.jsonl",
    RESULTS / "refund" / "scripted-careful.jsonl",
    RESULTS / "refund" / "scripted-naive.jsonl",
    RESULTS / "analyst" / "scripted-careful.jsonl",
    RESULTS / "analyst" / "scripted-one-short.jsonl",
]

# What the page shows of each rollout, read back from the DOM.
READ_DOM = """() => [...document.querySelectorAll('article.rollout')].map(a => ({
  model: a.dataset.model, case: a.dataset.case, desk: a.dataset.desk, outcome: a.dataset.outcome,
  calls: [...a.querySelectorAll('li.call')].map(c => [c.dataset.tool, c.querySelector('pre.args').textContent]),
  results: a.querySelectorAll('li.tool pre.result').length,
  terms: [...a.querySelectorAll('table.score tr[data-term]')].map(t => [t.dataset.term, t.querySelector('td').textContent]),
  brief: a.querySelector('li.system pre') ? a.querySelector('li.system pre').textContent : null,
  infra: a.querySelector('.infra-error') ? a.querySelector('.infra-error').textContent : null,
  hidden: a.hidden,
}))"""


def decoded(text: str):
    """JSON arguments as a value; the arguments a model botched (not JSON) as written."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def expected_rollouts():
    """Each row of the files, as the DOM must show it."""
    for path in FILES:
        for _, row in read_rows(path):
            messages = row["messages"]
            calls = [
                (call["function"]["name"], decoded(call["function"]["arguments"]))
                for m in messages
                if m["role"] == "assistant"
                for call in m.get("tool_calls") or []
            ]
            score = row["score"] or {}
            terms = {name: value for name, value in score.items() if name != "reward"}
            yield row, calls, {**terms, **(row["info_metrics"] or {})}


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module; ``outside`` collects requests off this machine."""
    outside: list[str] = []
    with chromium_page(outside) as page:
        yield page, outside


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("view") / "report.html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "batchgate_gym",
            "view",
            *(str(f.relative_to(ROOT)) for f in FILES),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == f"{out}: {sum(1 for _ in expected_rollouts())} rollouts of 6 models"
    return out


@pytest.mark.slow  # renders every recorded rollout
def test_the_page_stands_alone(report):
    text = report.read_text()
    assert "http://" not in text and "https://" not in text and "<link" not in text
    assert "<script src" not in text and "@import" not in text


@pytest.mark.slow  # browser
def test_every_rollout_call_result_and_term_is_in_the_rendered_page(report, browser, tmp_path):
    page, outside = browser
    page.goto(report.as_uri())
    shown = page.evaluate(READ_DOM)
    screenshot(page, tmp_path / "viewer.png")
    assert outside == []
    expected = list(expected_rollouts())
    assert len(shown) == len(expected)
    for dom, (row, calls, terms) in zip(shown, expected, strict=True):
        assert (dom["model"], dom["case"], dom["desk"]) == (row["model"], row["case_id"], row["desk"])
        assert [(name, decoded(args)) for name, args in dom["calls"]] == calls
        tool_messages = sum(1 for m in row["messages"] if m["role"] == "tool")
        assert dom["results"] == tool_messages
        assert dom["brief"] == row["messages"][0]["content"]
        assert dict(dom["terms"]).keys() == terms.keys()
        for name, value in terms.items():
            assert dict(dom["terms"])[name] == (f"{value:.4f}" if isinstance(value, float) else str(value))
        if row["error"] is None:
            assert dom["infra"] is None and dom["outcome"] != "infra error"
        else:
            assert dom["outcome"] == "infra error" and row["error"]["message"] in dom["infra"]
    assert {d["desk"] for d in shown} == {"gate", "refund", "analyst"}
    assert any(d["infra"] for d in shown) and any(d["outcome"] == "partial" for d in shown)


@pytest.mark.slow  # browser
def test_a_filter_hides_the_other_models(report, browser, tmp_path):
    page, _ = browser
    page.goto(report.as_uri())
    page.click("#filter-model")
    page.select_option("#filter-model", "scripted-naive")
    page.keyboard.press("Escape")
    shown = page.evaluate(READ_DOM)
    page.evaluate("() => document.querySelector('article.rollout:not([hidden])').scrollIntoView()")
    screenshot(page, tmp_path / "viewer-filtered.png")
    visible_models = page.evaluate(
        "() => [...document.querySelectorAll('#models tr.model-row, .grid [data-model]')]"
        ".filter(e => e.offsetParent !== null).map(e => e.dataset.model)"
    )
    counter = page.inner_text("#shown")
    page.select_option("#filter-outcome", "perfect")
    perfect_naive = page.evaluate(READ_DOM)
    page.select_option("#filter-model", "")
    page.select_option("#filter-outcome", "infra error")
    infra = page.evaluate(READ_DOM)
    naive = [d for d in shown if not d["hidden"]]
    assert naive and {d["model"] for d in naive} == {"scripted-naive"}
    assert len(naive) == sum(1 for row, _, _ in expected_rollouts() if row["model"] == "scripted-naive")
    assert counter == str(len(naive))
    assert set(visible_models) == {"scripted-naive"}
    assert [d for d in perfect_naive if not d["hidden"]] == []  # naive is never perfect here
    infra_shown = [d for d in infra if not d["hidden"]]
    assert infra_shown and {d["outcome"] for d in infra_shown} == {"infra error"}


def test_an_edited_row_is_refused_with_its_file_and_line(tmp_path):
    rows = (RESULTS / "refund" / "scripted-naive.jsonl").read_text().splitlines()
    edited = json.loads(rows[2])
    edited["score"]["reward"] = 1.0
    rows[2] = json.dumps(edited)
    forged = tmp_path / "forged.jsonl"
    forged.write_text("\n".join(rows) + "\n")
    with pytest.raises(ResultsError, match=rf"{forged}:3: the recorded score"):
        load_view([forged])
    done = subprocess.run(
        [sys.executable, "-m", "batchgate_gym", "view", str(forged), "--out", str(tmp_path / "r.html")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and f"batchgate view: {forged}:3:" in done.stderr
    assert not (tmp_path / "r.html").exists()


def test_view_takes_no_desk_option_and_needs_an_out(tmp_path):
    for extra in (["--desk", "refund", "--out", str(tmp_path / "r.html")], []):
        done = subprocess.run(
            [sys.executable, "-m", "batchgate_gym", "view", str(FILES[0]), *extra],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2


def test_text_is_escaped():
    view = load_view([RESULTS / "refund" / "scripted-careful.jsonl"])
    page = render_html(view)
    assert "<script>" in page and page.count("<script>") == 1
    assert "&quot;Sent the kettle back" in page or "Sent the kettle back" not in page


@pytest.mark.slow  # browser, and the docs site built
def test_the_docs_site_renders_its_index_and_a_desk_page(browser, tmp_path):
    if not os.environ.get("CI"):  # CI installs the docs extra
        pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        check=True,
    )
    page, outside = browser
    page.goto((site / "index.html").as_uri())
    title = page.inner_text("article h1").removesuffix("¶")
    nav = page.evaluate("() => [...document.querySelectorAll('nav a')].map(a => a.textContent.trim())")
    screenshot(page, tmp_path / "docs-index.png")
    page.goto((site / "gate" / "index.html").as_uri())
    gate_title = page.inner_text("article h1")
    tables = page.evaluate("() => document.querySelectorAll('article table').length")
    headline = page.inner_text("article table >> nth=0")
    page.goto((site / "models" / "index.html").as_uri())
    curve = page.evaluate(
        "() => [...document.querySelectorAll('article img')].map(i => [i.alt, i.naturalWidth])"
    )
    assert outside == []
    assert title == "batchgate_gym"
    for page_name in ("BadBatchGate", "RefundDesk", "AnalystDesk", "Integrity and replay", "Speed"):
        assert page_name in nav
    assert gate_title.startswith("BadBatchGate") and tables >= 10
    assert "disposition" in headline
    assert curve and all(width > 100 for _, width in curve)


# -- batchgate play --record: an episode played by hand, as a row the viewer shows ---------------


def careful_actions(case_id: str) -> list[str]:
    import gymnasium

    from batchgate_gym.policies.refund.reference import CarefulRefundPolicy

    env = gymnasium.make("batchgate_gym/RefundDesk-v0", split="eval")
    observation, info = env.reset(options={"case_id": case_id})
    policy = CarefulRefundPolicy()
    policy.reset(observation, info)
    actions, done = [], False
    while not done:
        actions.append(policy.act(observation))
        observation, _, terminated, truncated, _ = env.step(actions[-1])
        done = terminated or truncated
    return actions


def play_main(monkeypatch, argv: list[str], lines: list[str]) -> None:
    import io

    from batchgate_gym.app.cli import main

    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(f"{line}\n" for line in lines)))
    assert main(["play", *argv]) == 0


def test_play_record_appends_rows_that_regrade_and_show(monkeypatch, tmp_path, capsys):
    from batchgate_gym.llm.results import load_results

    case_id = "eval-timeout-then-retry-0"
    actions = careful_actions(case_id)
    record = tmp_path / "played.jsonl"
    argv = ["--desk", "refund", "--case", case_id, "--record", str(record)]
    play_main(monkeypatch, argv, actions)
    play_main(monkeypatch, argv, actions)
    assert f"Recorded in {record}: {case_id}, rollout 1." in capsys.readouterr().out
    rows = [row for _, row in read_rows(record)]
    assert [(r["model"], r["case_id"], r["rollout"], r["mode"]) for r in rows] == [
        ("play", case_id, 0, "text"),
        ("play", case_id, 1, "text"),
    ]
    assert [m["content"] for m in rows[0]["messages"] if m["role"] == "assistant"] == actions
    (played,) = load_results([record], "refund").values()  # re-graded from the logs
    assert [r.episode["reward"] for r in played.rollouts] == [1.0, 1.0]
    page = render_html(load_view([record]))
    assert page.count("<article class='rollout'") == 2
    assert all(html.escape(action) in page for action in actions)  # each action, as written


def test_play_record_needs_a_fixed_case_and_an_ended_episode(monkeypatch, tmp_path, capsys):
    from batchgate_gym.app.cli import main

    record = tmp_path / "played.jsonl"
    with pytest.raises(SystemExit) as stopped:
        main(["play", "--desk", "refund", "--seed", "3", "--record", str(record)])
    assert stopped.value.code == 2 and "--record is not used here" in capsys.readouterr().err
    play_main(monkeypatch, ["--desk", "refund", "--split", "eval", "--record", str(record)], [":quit"])
    assert "Not recorded" in capsys.readouterr().out and not record.exists()


def test_play_policy_plays_and_records_under_its_name(monkeypatch, tmp_path, capsys):
    from batchgate_gym.app.cli import main
    from batchgate_gym.llm.results import load_results

    record = tmp_path / "played.jsonl"
    argv = ["--desk", "analyst", "--case", "eval-top-states-sqlite-0", "--policy", "one-short"]
    play_main(monkeypatch, [*argv, "--record", str(record)], [])  # no input read: the policy plays
    out = capsys.readouterr().out
    (row,) = [row for _, row in read_rows(record)]
    actions = [m["content"] for m in row["messages"] if m["role"] == "assistant"]
    assert actions and all(f"action> {action}" in out for action in actions)
    assert (row["model"], row["mode"]) == ("one-short", "text")
    (played,) = load_results([record], "analyst").values()
    assert played.rollouts[0].episode["reward"] == row["score"]["reward"] < 1.0  # one part left out
    with pytest.raises(SystemExit, match="has no policy 'nope'; known: careful"):
        main(["play", "--desk", "analyst", "--split", "eval", "--policy", "nope"])
