"""``batchgate view``: result files as one self-contained HTML page, to read what was done.

``batchgate view RESULTS.jsonl [more.jsonl ...] --out report.html`` reads rows of
``batchgate run-model`` (a model, or a scripted player served by ``batchgate serve``)
and of ``batchgate play --record``, of any desk, and writes one HTML file that needs
nothing else (no network: its style and script are inside it): the table of models,
a case x model grid coloured by reward, and every rollout's conversation (the system
brief, each assistant turn, the tool calls with their arguments, the tool results,
the score's terms and metrics, and infra errors), with filters by model, case,
family and outcome. Every scored row is re-graded from its log first, as
``batchgate report --results`` does, so a row whose log, head or score was edited
stops the command with the file and line instead of being shown.
"""

from __future__ import annotations

import argparse
import html
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batchgate_gym.desks import registry
from batchgate_gym.llm.results import ResultsError, load_results, read_rows
from batchgate_gym.llm.summary import summarize

from .shared import UsageError

TAKES_DESK = False  # the rows name their desk

OUTCOMES = ("perfect", "partial", "zero", "infra error")
FILTERS = ("model", "case", "family", "outcome")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", metavar="RESULTS.jsonl", help="result files, of any desks")
    parser.add_argument("--out", required=True, metavar="REPORT.html", help="the HTML file to write")


@dataclass(frozen=True)
class RolloutRow:
    """One row of a results file, as the page shows it."""

    desk: str
    model: str
    case_id: str
    family: str
    rollout: int
    reward: float | None  # None for an infra error
    row: Mapping[str, Any]
    where: str  # file:line

    @property
    def outcome(self) -> str:
        if self.reward is None:
            return "infra error"
        return "perfect" if self.reward == 1.0 else "zero" if self.reward == 0.0 else "partial"


@dataclass(frozen=True)
class View:
    """Everything on the page: rollouts in file order, and each desk's models summed up."""

    files: tuple[str, ...]
    rollouts: tuple[RolloutRow, ...]
    summaries: Mapping[str, Mapping[str, Mapping[str, Any]]]  # desk -> model -> summarize()


def load_view(paths: Sequence[Path | str]) -> View:
    """Read and re-grade every file (a file holds one desk's rows; files may differ in desk)."""
    by_desk: dict[str, list[Path]] = {}
    rollouts: list[RolloutRow] = []
    for path in map(Path, paths):
        if not path.exists():
            raise ResultsError(f"{path}: no such results file")
        rows = read_rows(path)
        if not rows:
            raise ResultsError(f"{path}: no rows")
        desk = str(rows[0][1].get("desk", ""))
        by_desk.setdefault(desk, []).append(path)
        for number, row in rows:
            score = row.get("score")
            reward = (
                float(score["reward"]) if isinstance(score, Mapping) and row.get("error") is None else None
            )
            rollouts.append(
                RolloutRow(
                    desk=str(row.get("desk", "")),
                    model=str(row.get("model", "")),
                    case_id=str(row.get("case_id", "")),
                    family=str(row.get("family", "")),
                    rollout=int(row.get("rollout") or 0),
                    reward=reward,
                    row=row,
                    where=f"{path}:{number}",
                )
            )
    summaries = {}
    for desk, files in by_desk.items():
        if desk not in registry.names():
            raise ResultsError(f"{files[0]}:1: a row of an unknown desk {desk!r}")
        results = load_results(files, desk)  # re-grades every scored row; refuses edited ones
        summaries[desk] = {model: summarize(result, desk) for model, result in results.items()}
    return View(tuple(str(p) for p in paths), tuple(rollouts), summaries)


# -- HTML ----------------------------------------------------------------------------


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def reward_colour(reward: float | None) -> str:
    """Red at 0 through yellow to green at 1; grey for no score."""
    if reward is None:
        return "#d0d0d0"
    return f"hsl({round(120 * max(0.0, min(1.0, reward)))}, 65%, 72%)"


def fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return "" if value is None else str(value)


def data_attrs(**values: object) -> str:
    return " ".join(f'data-{name}="{esc(value)}"' for name, value in values.items())


def model_table(view: View) -> str:
    head = (
        "<tr><th>desk</th><th>model</th><th>mean reward (per case, over scored rollouts)</th>"
        "<th>perfect rollouts</th><th>rollouts scored</th><th>infra errors (not scored)</th>"
        "<th>headline terms</th></tr>"
    )
    rows = []
    for desk, models in view.summaries.items():
        for model, summary in models.items():
            terms = ", ".join(
                f"{key.removeprefix('mean_')} {fmt(value)}"
                for key, value in summary.items()
                if key.startswith("mean_") and key != "mean_reward"
            )
            rows.append(
                f"<tr class='model-row' {data_attrs(model=model, desk=desk)}>"
                f"<td>{esc(desk)}</td><td class='model'>{esc(model)}</td>"
                f"<td style='background:{reward_colour(summary['mean_reward'])}'>{fmt(summary['mean_reward'])}</td>"
                f"<td>{summary['perfect']} / {summary['scored']}</td>"
                f"<td>{summary['scored']} / {summary['rollouts']}</td><td>{summary['infra_errors']}</td>"
                f"<td>{esc(terms)}</td></tr>"
            )
    return f"<table id='models'>{head}{''.join(rows)}</table>"


def grid(view: View, desk: str) -> str:
    """Cases down, models across; a cell is the case's mean reward over scored rollouts."""
    models = list(view.summaries[desk])
    ours = sorted(
        (r for r in view.rollouts if r.desk == desk),
        key=lambda r: (int(r.row.get("case_index") or 0), r.case_id),
    )
    cases = {r.case_id: r.family for r in ours}  # in the order of the split or case file
    head = "<tr><th>case</th><th>family</th>" + "".join(
        f"<th {data_attrs(model=m)}>{esc(m)}</th>" for m in models
    )
    rows = []
    for case_id, family in cases.items():
        cells = []
        for model in models:
            entry = view.summaries[desk][model]["per_case"].get(case_id)
            reward = entry.get("reward") if entry else None
            if entry is None:
                text = ""
            elif reward is None:
                text = "infra error"
            else:
                text = fmt(reward)
            anchor = rollout_anchor(desk, model, case_id, 0)
            cells.append(
                f"<td class='cell' {data_attrs(model=model)} style='background:{reward_colour(reward)}'>"
                f"<a href='#{anchor}'>{esc(text)}</a></td>"
            )
        rows.append(
            f"<tr {data_attrs(case=case_id, family=family)}><td>{esc(case_id)}</td>"
            f"<td>{esc(family)}</td>{''.join(cells)}</tr>"
        )
    return f"<h3>{esc(desk)}</h3><table class='grid' {data_attrs(desk=desk)}>{head}{''.join(rows)}</table>"


def rollout_anchor(desk: str, model: str, case_id: str, rollout: int) -> str:
    return "r-" + "-".join(
        "".join(c if c.isalnum() else "_" for c in part) for part in (desk, model, case_id, str(rollout))
    )


def pretty_arguments(arguments: object) -> str:
    """A call's arguments as indented JSON (a JSON string is decoded first); anything else as it is."""
    value = arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
    return json.dumps(value, indent=2, ensure_ascii=False)


def tool_call(call: Mapping[str, Any]) -> str:
    wrapped = call.get("function")
    function: Mapping[str, Any] = wrapped if isinstance(wrapped, Mapping) else call
    name = str(function.get("name", ""))
    return (
        f"<li class='call' {data_attrs(tool=name, call_id=call.get('id', ''))}>"
        f"<span class='tool-name'>{esc(name)}</span><pre class='args'>{esc(pretty_arguments(function.get('arguments', {})))}</pre></li>"
    )


def message(item: Mapping[str, Any], mode: str) -> str:
    role = str(item.get("role", ""))
    content = item.get("content")
    text = "" if content is None else content if isinstance(content, str) else json.dumps(content)
    if role == "system":
        return (
            "<li class='msg system'><details><summary>system brief</summary>"
            f"<pre>{esc(text)}</pre></details></li>"
        )
    if role == "assistant":
        calls = item.get("tool_calls") or []
        label = "action" if mode == "text" else "content"
        body = f"<pre class='content' title='{label}'>{esc(text)}</pre>" if text else ""
        if calls:
            body += (
                "<ul class='calls'>"
                + "".join(tool_call(c) for c in calls if isinstance(c, Mapping))
                + "</ul>"
            )
        return f"<li class='msg assistant'><span class='role'>assistant</span>{body}</li>"
    if role == "tool":
        call_id = item.get("tool_call_id", "")
        return (
            f"<li class='msg tool' {data_attrs(call_id=call_id)}><span class='role'>tool result</span>"
            f"<pre class='result'>{esc(text)}</pre></li>"
        )
    label = "case" if role == "user" and text and not text.startswith("turn ") else role
    return f"<li class='msg {esc(role)}'><span class='role'>{esc(label)}</span><pre>{esc(text)}</pre></li>"


def score_table(rollout: RolloutRow) -> str:
    score = rollout.row.get("score")
    if not isinstance(score, Mapping):
        return ""
    terms = registry.get(rollout.desk).scoring.terms
    rows = [f"<tr class='reward'><th>reward</th><td>{fmt(score.get('reward'))}</td></tr>"]
    in_order = [name for name in terms if name in score] + [n for n in score if n not in terms]
    for name in in_order:
        value = score[name]
        if name != "reward":
            kind = "term" if name in terms else "metric"
            rows.append(
                f"<tr class='{kind}' {data_attrs(term=name)}><th>{esc(name)}</th><td>{esc(fmt(value))}</td></tr>"
            )
    for name, value in dict(rollout.row.get("info_metrics") or {}).items():
        rows.append(
            f"<tr class='metric' {data_attrs(term=name)}><th>{esc(name)}</th><td>{esc(fmt(value))}</td></tr>"
        )
    return f"<table class='score'>{''.join(rows)}</table>"


def infra_error(rollout: RolloutRow) -> str:
    error = rollout.row.get("error")
    if not isinstance(error, Mapping):
        return ""
    parts = ", ".join(f"{key}: {value}" for key, value in error.items())
    return f"<p class='infra-error'>infra error (not scored): {esc(parts)}</p>"


def rollout_article(rollout: RolloutRow) -> str:
    row = rollout.row
    mode = str(row.get("mode", "tools"))
    usage = row.get("usage") or {}
    meta = (
        f"desk {esc(rollout.desk)} · source {esc(row.get('source', ''))} · mode {esc(mode)} · "
        f"turns {esc(row.get('turns', ''))} · requests {esc(row.get('requests', ''))} · "
        f"retries {esc(row.get('retries', ''))} · tokens {esc(usage.get('total_tokens', ''))} · "
        f"log head {esc(row.get('head') or '-')} · {esc(rollout.where)}"
    )
    messages = "".join(message(m, mode) for m in row.get("messages") or [] if isinstance(m, Mapping))
    attrs = data_attrs(
        desk=rollout.desk,
        model=rollout.model,
        case=rollout.case_id,
        family=rollout.family,
        outcome=rollout.outcome,
        reward="" if rollout.reward is None else fmt(rollout.reward),
    )
    anchor = rollout_anchor(rollout.desk, rollout.model, rollout.case_id, rollout.rollout)
    reward = "infra error" if rollout.reward is None else f"reward {fmt(rollout.reward)}"
    return (
        f"<article class='rollout' id='{anchor}' {attrs}>"
        f"<h3 style='border-left:0.6em solid {reward_colour(rollout.reward)}'>{esc(rollout.model)} · "
        f"{esc(rollout.case_id)} · rollout {rollout.rollout} · {esc(reward)}</h3>"
        f"<p class='meta'>{meta}</p>{infra_error(rollout)}{score_table(rollout)}"
        f"<ol class='conversation'>{messages}</ol></article>"
    )


def filter_select(name: str, values: Iterable[str]) -> str:
    options = "".join(f"<option value='{esc(v)}'>{esc(v)}</option>" for v in values)
    return f"<label>{name} <select id='filter-{name}' data-key='{name}'><option value=''>all</option>{options}</select></label>"


def unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{margin:0 0 .2em}table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
.grid td{text-align:center;min-width:6em}.grid a{color:#222;text-decoration:none}
#filters{position:sticky;top:0;background:#fff;padding:.5em 0;border-bottom:1px solid #ccc;z-index:1}
#filters label{margin-right:1em}
.rollout{scroll-margin-top:3em;border:1px solid #ccc;border-radius:4px;margin:1em 0;padding:0 .8em .5em}
.rollout h3{padding-left:.4em}.meta{color:#666;font-size:12px;word-break:break-all}
.conversation{list-style:none;padding:0}.msg{margin:.4em 0;padding:.3em .5em;border-radius:4px}
.msg pre{white-space:pre-wrap;word-break:break-word;margin:.2em 0;max-height:24em;overflow:auto}
.system{background:#f3f3f3}.user{background:#eef4ff}.assistant{background:#fff6e5}.tool{background:#eefaf0}
.role{font-weight:600;font-size:12px;text-transform:uppercase;color:#555}
.calls{list-style:none;padding-left:.5em}.tool-name{font-family:monospace;font-weight:700}
.infra-error{background:#ffe3e3;padding:.4em;border-left:4px solid #c00}
.score td{font-family:monospace}.score .term th{color:#124}.score .metric th{color:#666;font-weight:400}
[hidden]{display:none !important}
"""

SCRIPT = """
const keys=['model','case','family','outcome'];
function applyFilters(){
  const chosen={};
  for(const k of keys){chosen[k]=document.getElementById('filter-'+k).value;}
  const fits=el=>keys.every(k=>!chosen[k]||el.dataset[k]===undefined||el.dataset[k]===chosen[k]);
  for(const el of document.querySelectorAll('[data-model],[data-case]')){
    if(el.tagName==='SELECT')continue; el.hidden=!fits(el);}
  const shown=[...document.querySelectorAll('article.rollout')].filter(a=>!a.hidden).length;
  document.getElementById('shown').textContent=shown;
}
for(const k of keys){document.getElementById('filter-'+k).addEventListener('change',applyFilters);}
applyFilters();
"""


def render_html(view: View) -> str:
    rollouts = view.rollouts
    filters = "".join(
        filter_select(name, values)
        for name, values in (
            ("model", unique(r.model for r in rollouts)),
            ("case", unique(r.case_id for r in rollouts)),
            ("family", unique(r.family for r in rollouts)),
            ("outcome", [o for o in OUTCOMES if any(r.outcome == o for r in rollouts)]),
        )
    )
    files = ", ".join(esc(f) for f in view.files)
    grids = "".join(grid(view, desk) for desk in view.summaries)
    articles = "".join(rollout_article(r) for r in rollouts)
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>batchgate view: {len(rollouts)} rollouts</title><style>{STYLE}</style></head><body>"
        f"<h1>batchgate view</h1><p class='files'>{files}: every scored row re-graded from its log.</p>"
        f"<div id='filters'>{filters}<span><span id='shown'>{len(rollouts)}</span> of {len(rollouts)} rollouts shown</span></div>"
        f"<h2>Models</h2>{model_table(view)}<h2>Cases by model (mean reward)</h2>{grids}"
        f"<h2>Rollouts</h2><section id='rollouts'>{articles}</section>"
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if not out.parent.is_dir():  # said before the files are read and re-graded
        raise UsageError(f"batchgate view: --out {out}: there is no folder {out.parent}")
    missing = [path for path in args.results if not Path(path).is_file()]
    if missing:
        raise UsageError(f"batchgate view: {missing[0]}: no such results file")
    try:
        view = load_view(args.results)
    except ResultsError as exc:
        raise SystemExit(f"batchgate view: {exc}") from None
    out.write_text(render_html(view), encoding="utf-8")
    models = sum(map(len, view.summaries.values()))
    print(f"{out}: {len(view.rollouts)} rollouts of {models} model{'s' if models != 1 else ''}")
    return 0
