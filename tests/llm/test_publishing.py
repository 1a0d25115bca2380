"""A number that leaves the project: complete, sourced and certified results files.

A genuine signed run of the scripted naive player is edited the ways an independent
review edited one by hand; each edit is refused, or flagged, by ``batchgate report
--results`` without a key, and every edited row is refused with ``--trust``. The
genuine file passes both ways, and ``batchgate verify`` agrees.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from batchgate_gym.app.cli import main
from batchgate_gym.kernel.certificate import write_key_pair
from batchgate_gym.kernel.testing import rechained

from .support import rows, run_model, serving

pytestmark = pytest.mark.slow  # servers, and runs of the runner

CASES = 8  # the first eight eval cases: clean controls and resent rows


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Genuine files: naive and careful signed by the evaluator's key, careful unsigned twice over."""
    folder = tmp_path_factory.mktemp("publishing")
    private, public = write_key_pair(folder / "evaluator.key")
    files = {"key": private, "pub": public}
    for policy in ("naive", "careful"):
        files[policy] = folder / f"{policy}.jsonl"
        with serving(policy) as server:
            run_model(
                server.base_url, files[policy], f"scripted-{policy}", split="eval", n=CASES, sign_key=private
            )
            if policy == "careful":
                files["careful-2"] = folder / "careful-2.jsonl"  # two rollouts a case, unsigned
                run_model(server.base_url, files["careful-2"], "two", split="eval", n=4, rollouts=2)
    return files


def report(args: list[str], capsys: Any) -> tuple[int, str, str]:
    """``batchgate ARGS``: its exit status (0, or SystemExit's), stdout and stderr."""
    try:
        status = main(args)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1  # a message: exit status 1, as Python gives
        captured = capsys.readouterr()
        return status, captured.out, captured.err + str(exc.code)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def mean_of(path: Path, capsys: Any, *extra: str) -> dict[str, Any]:
    status, out, err = report(["report", "--results", str(path), "--json", *extra], capsys)
    assert status == 0, err
    (summary,) = json.loads(out)["policies"].values()
    return dict(summary)


def copy_run(source: Path, to: Path, edit: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> Path:
    """``source`` with its meta file, its rows replaced by ``edit(rows)``."""
    to.write_text("".join(json.dumps(row) + "\n" for row in edit(copy.deepcopy(rows(source)))))
    shutil.copy(f"{source}.meta.json", f"{to}.meta.json")
    return to


def test_the_genuine_file_passes_both_ways(signed: dict[str, Path], capsys: Any) -> None:
    plain = mean_of(signed["naive"], capsys)
    trusted = mean_of(signed["naive"], capsys, "--trust", str(signed["pub"]))
    assert plain["mean_reward"] == trusted["mean_reward"] < 1.0
    assert plain["run"]["certificate"] == "unsigned" and trusted["run"]["certificate"].startswith("verified")
    assert trusted["run"]["source"] == "eval" and trusted["run"]["source_kind"] == "split"
    assert trusted["run"]["planned_rollouts"] == CASES and trusted["run"]["missing_rollouts"] == 0
    status, out, _ = report(["verify", str(signed["naive"]), "--trust", str(signed["pub"])], capsys)
    assert status == 0 and f"verified: {CASES} of {CASES} rows verify" in out
    status, out, _ = report(["report", "--results", str(signed["naive"])], capsys)
    assert "| source | eval (shipped split, sha256 " in out and "| certificate | unsigned |" in out


def worst_first(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(found, key=lambda row: row["score"]["reward"])


EDITS: dict[str, Callable[[list[dict[str, Any]]], list[dict[str, Any]]]] = {}


def edit(name: str) -> Callable[[Any], Any]:
    def register(function: Any) -> Any:
        EDITS[name] = function
        return function

    return register


@edit("score-raised")
def _raise_score(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    worst_first(found)[0]["score"]["reward"] = 1.0
    return found


@edit("worst-rewritten-as-infra")
def _as_infra(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for row in worst_first(found)[:3]:
        row.update(score=None, log=None, head=None, ended="infra", error={"kind": "infra"})
    return found


@edit("worst-deleted")
def _delete_worst(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return worst_first(found)[3:]


@edit("log-pasted-into-another-case")
def _paste_log(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for name in ("log", "head", "score", "nonce"):
        found[1][name] = found[0][name]
    return found


@edit("best-duplicated-as-50-rollouts")
def _duplicate(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    best = worst_first(found)[-1]
    return found + [{**copy.deepcopy(best), "rollout": r} for r in range(1, 51)]


@pytest.mark.parametrize("name", list(EDITS))
def test_each_edit_is_refused_without_a_key_and_with_one(
    signed: dict[str, Path], tmp_path: Path, capsys: Any, name: str
) -> None:
    edited = copy_run(signed["naive"], tmp_path / f"{name}.jsonl", EDITS[name])
    status, _, err = report(["report", "--results", str(edited)], capsys)
    assert status == 1 and "batchgate report: " in err
    status, _, _ = report(["report", "--results", str(edited), "--trust", str(signed["pub"])], capsys)
    assert status == 1
    status, out, _ = report(["verify", str(edited), "--trust", str(signed["pub"])], capsys)
    assert status == 1 and "NOT verified" in out


def test_deleted_rows_are_scored_as_failures_only_when_asked(
    signed: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    edited = copy_run(signed["naive"], tmp_path / "deleted.jsonl", _delete_worst)
    status, _, err = report(["report", "--results", str(edited)], capsys)
    assert status == 1 and "3 of the 8 rollouts its run planned are missing" in err
    assert "--allow-incomplete" in err
    genuine = mean_of(signed["naive"], capsys)["mean_reward"]
    kept = [row["score"]["reward"] for row in worst_first(rows(signed["naive"]))[3:]]
    assert sum(kept) / len(kept) > genuine  # what deleting the worst rows would have shown
    allowed = mean_of(edited, capsys, "--allow-incomplete")
    assert allowed["run"]["missing_rollouts"] == 3 and allowed["run"]["missing_scored_as_failures"] == 3
    assert allowed["mean_reward"] <= genuine
    _, out, _ = report(["report", "--results", str(edited), "--allow-incomplete"], capsys)
    assert "| missing rollouts | 3 of 8 (scored as failures) |" in out


def edited_case_file(path: Path) -> Path:
    """The eval split's cases with every truth clean: the same ids, and nothing to catch."""
    from batchgate_gym.desks.gate import cases as gate_cases

    source = Path(gate_cases.__file__).parent / "data" / "eval.jsonl"
    lines = []
    for line in source.read_text().splitlines():
        case = json.loads(line)
        for batch in case["batches"]:
            batch["truth"] = {"defective": False, "defects": []}
        lines.append(json.dumps(case))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_run_on_an_edited_case_file_is_marked_and_refused_under_trust(
    signed: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    cases = edited_case_file(tmp_path / "eval-clean.jsonl")
    played = tmp_path / "naive-clean.jsonl"
    with serving("naive") as server:  # played for real, on the edited copy
        run_model(server.base_url, played, "scripted-naive", cases=str(cases), n=CASES)
    summary = mean_of(played, capsys)
    assert summary["run"]["source_kind"] == "file" and summary["run"]["source"] == str(cases)
    assert summary["mean_reward"] > mean_of(signed["naive"], capsys)["mean_reward"]
    status, out, _ = report(["report", "--results", str(played)], capsys)
    assert f"| source | {cases} (**case file, not a shipped split**, sha256 " in out
    status, _, err = report(["report", "--results", str(played), "--trust", str(signed["pub"])], capsys)
    assert status == 1 and "no certificate" in err
    # The genuine signed rows pointed at the edited copy: not the source they were played on.
    moved = copy_run(
        signed["naive"], tmp_path / "moved.jsonl", lambda found: [{**r, "source": str(cases)} for r in found]
    )
    status, _, err = report(["report", "--results", str(moved)], capsys)
    assert status == 1 and "not of this file's run" not in err and "source" in err


def better_log(signed: dict[str, Path]) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    """Naive's rows, each carrying careful's log, head, score and nonce for its case: a
    consistent log of a better play (the forger's best), written into the naive run."""
    careful = {row["case_id"]: row for row in rows(signed["careful"])}

    def forge(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in found:
            better = careful[row["case_id"]]
            row.update({name: better[name] for name in ("log", "head", "score", "nonce", "info_metrics")})
        return found

    return forge


def test_a_consistent_log_of_a_better_play_passes_only_unsigned(
    signed: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    forged = copy_run(signed["naive"], tmp_path / "forged.jsonl", better_log(signed))
    plain = mean_of(forged, capsys)  # no replay can tell: the table says nobody vouches for it
    assert plain["mean_reward"] == 1.0 and plain["run"]["certificate"] == "unsigned"
    status, _, err = report(["report", "--results", str(forged), "--trust", str(signed["pub"])], capsys)
    assert status == 1 and "signs another episode" in err and "head" in err


def test_an_edited_log_re_chained_with_its_head_moved_is_refused_under_trust(
    signed: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    def rechain(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        row = worst_first(found)[0]
        row["log"][1]["note"] = "edited"
        row["log"] = rechained(row["log"])
        row["head"] = row["log"][-1]["hash"]
        return found

    edited = copy_run(signed["naive"], tmp_path / "rechained.jsonl", rechain)
    status, _, err = report(["report", "--results", str(edited), "--trust", str(signed["pub"])], capsys)
    assert status == 1 and "signs another episode (differing: head)" in err


def test_one_episode_as_two_rollouts_is_refused(signed: dict[str, Path], tmp_path: Path, capsys: Any) -> None:
    def twice(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        first = next(r for r in found if r["rollout"] == 0)
        other = next(r for r in found if r["rollout"] == 1 and r["case_id"] == first["case_id"])
        found[found.index(other)] = {**copy.deepcopy(first), "rollout": 1, "seed": other["seed"]}
        return found

    assert mean_of(signed["careful-2"], capsys)["run"]["missing_rollouts"] == 0  # genuine: distinct nonces
    edited = copy_run(signed["careful-2"], tmp_path / "twice.jsonl", twice)
    status, _, err = report(["report", "--results", str(edited)], capsys)
    assert status == 1 and "the same episode as" in err


def split_runs(tmp_path: Path) -> dict[str, Path]:
    """naive over eval cases 0-3 and 4-7 (disjoint) and 2-5 (overlapping), one file each."""
    from batchgate_gym.desks import registry

    ids = [case.case_id for case in registry.get("gate").fixed_cases(split="eval")]
    files = {}
    with serving("naive") as server:
        for name, picked in {"a": ids[0:4], "b": ids[4:8], "overlap": ids[2:6]}.items():
            files[name] = tmp_path / f"{name}.jsonl"
            run_model(server.base_url, files[name], "scripted-naive", split="eval", case_ids=tuple(picked))
    return files


def test_two_files_of_one_model_merge_when_disjoint_in_either_order(
    signed: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    files = split_runs(tmp_path)
    status, out, _ = report(["report", "--results", str(files["a"]), str(files["b"]), "--json"], capsys)
    forward = json.loads(out)["policies"]["scripted-naive"]
    status, out, _ = report(["report", "--results", str(files["b"]), str(files["a"]), "--json"], capsys)
    backward = json.loads(out)["policies"]["scripted-naive"]
    assert forward == backward and forward["cases"] == CASES and forward["run"]["planned_rollouts"] == CASES
    whole = mean_of(signed["naive"], capsys)
    assert forward["mean_reward"] == whole["mean_reward"]  # the same cases as one run of the first eight
    for order in ([files["a"], files["overlap"]], [files["overlap"], files["a"]]):
        status, _, err = report(["report", "--results", *map(str, order)], capsys)
        assert status == 1 and "is there twice" in err


def test_a_cut_short_last_line_is_named(signed: dict[str, Path], tmp_path: Path, capsys: Any) -> None:
    cut = copy_run(signed["naive"], tmp_path / "cut.jsonl", lambda found: found)
    text = cut.read_text().rstrip("\n")
    cut.write_text(text[: -(len(text.splitlines()[-1]) // 2)])  # half of the last line, no newline
    status, _, err = report(["report", "--results", str(cut), "--allow-incomplete"], capsys)
    assert status == 0 and f"notice: {cut}:{CASES}: the last line is cut short" in err


def test_the_docs_recipe_runs_and_openssl_alone_verifies_a_row(tmp_path: Path) -> None:
    """docs/models.md's "Publishing a number" block, as written but on a free port."""
    import os
    import socket
    import subprocess
    import sys

    page = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text()
    block = page.split("## Publishing a number\n", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = block.replace(":8000", f":{port}").replace("--port 8000", f"--port {port}")
    assert script.count(str(port)) == 2 and "openssl pkeyutl -verify -pubin" in script
    done = subprocess.run(
        ["bash", "-c", f"set -e\ntrap 'kill $(jobs -p) 2>/dev/null' EXIT\n{script}"],
        cwd=tmp_path,
        env={
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "BATCHGATE_NO_PROGRESS": "1",
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "naive.jsonl: verified: 32 of 32 rows verify; 32 of 32 planned rollouts there" in done.stdout
    assert "| certificate | verified: key " in done.stdout and "| 0.5344 |" in done.stdout
    assert done.stdout.rstrip().endswith("Signature Verified Successfully")
    # The same bytes with one character changed: OpenSSL refuses them.
    payload = (tmp_path / "payload.json").read_text()
    (tmp_path / "payload.json").write_text(payload.replace('"rollout":0', '"rollout":1'))
    refused = subprocess.run(
        ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", "evaluator.key.pub", "-rawin"]
        + ["-in", "payload.json", "-sigfile", "signature.bin"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "Signature Verification Failure" in refused.stdout + refused.stderr


def test_picked_cases_cannot_pass_for_the_first_ones_or_a_sample(
    signed: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    files = split_runs(tmp_path)
    for selection in ({"how": "first", "n": 4}, {"how": "sample", "n": 4, "seed": 0}):
        meta = json.loads(Path(f"{files['b']}.meta.json").read_text())
        meta["manifest"]["selection"] = selection  # cases 4-7 claimed as the first 4, or a sample
        Path(f"{files['b']}.meta.json").write_text(json.dumps(meta))
        status, _, err = report(["report", "--results", str(files["b"])], capsys)
        assert status == 1 and "the manifest says its cases are" in err, err


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.update(source_cases="32"),
        lambda m: m.update(case_ids=[1, 2]),
        lambda m: m.pop("selection"),
        lambda m: m.update(rollouts=0),
        lambda m: m.update(rollouts=True),
    ],
    ids=["cases-as-text", "ids-not-strings", "no-selection", "no-rollouts", "bool-rollouts"],
)
def test_a_malformed_manifest_is_refused_in_one_line(
    signed: dict[str, Path], tmp_path: Path, capsys: Any, edit: Callable[[dict[str, Any]], Any]
) -> None:
    copied = copy_run(signed["naive"], tmp_path / "naive.jsonl", lambda found: found)
    meta = json.loads(Path(f"{copied}.meta.json").read_text())
    edit(meta["manifest"])
    Path(f"{copied}.meta.json").write_text(json.dumps(meta))
    status, _, err = report(["report", "--results", str(copied)], capsys)
    assert status == 1 and "the manifest is not a run-model manifest" in err, err


def test_a_run_read_as_another_desk_names_the_desk_to_give(signed: dict[str, Path], capsys: Any) -> None:
    status, _, err = report(["report", "--results", str(signed["naive"]), "--desk", "refund"], capsys)
    assert status != 0
    assert "a run of desk 'gate', read as desk 'refund' (give --desk gate)" in err
