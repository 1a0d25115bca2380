"""Every ``batchgate`` command walked with bad input of each kind it takes: files and
folders that are not there, a folder where a file belongs, a file that is not what it
should be, a policy that raises, a server that is down or answers HTML, a key that is not
set, options the desk has not. Each ends with one line naming what was wrong (argparse's
own refusals: the usage, then one line), exit status 2 for a mistake on the command line
and 1 for a failure while it ran, and never a traceback."""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from batchgate_gym.app.cli import SUBCOMMANDS, main

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "llm" / "scripted-careful.jsonl"
ARGPARSE = "argparse"  # a refusal by argparse: the usage, then "batchgate CMD: error: ..."


class _Html(http.server.BaseHTTPRequestHandler):
    """A server that is no chat-completions API: under /html a web page; under /lie JSON that
    is not a chat completion; under /slow the same, too late for the client's timeout."""

    def _answer(self) -> None:
        if self.path.startswith("/slow"):
            time.sleep(SLOW_S)
        page = self.path.startswith("/html")
        body = b"<html><body>It works!</body></html>" if page else b'{"id": "x", "object": "chat.completion"}'
        self.send_response(200)
        self.send_header("Content-Type", "text/html" if page else "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._answer()

    do_GET = _answer

    def log_message(self, *args: object) -> None:
        pass


class _Quiet(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gave up on /slow has hung up: writing to it fails, as expected."""


@pytest.fixture(scope="module")
def html_url() -> Iterator[str]:
    server = _Quiet(("127.0.0.1", 0), _Html)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def busy_port() -> Iterator[str]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield str(taken.getsockname()[1])


DOWN = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
SLOW_S = 3.0  # how late /slow answers, ten times the --timeout of the run that asks it
MODEL = ["run-model", "--model", "m", "--api-key-env", "BATCHGATE_WALK_KEY", "-n", "1", "--max-retries", "0"]

# (command line, exit status, words the line must hold); {tmp}: a scratch folder holding
# garbage.jsonl (not JSON) and nothing else; {results}: a good results file; {html}: a
# server that is no chat-completions API (_Html); {busy}: a port already taken.
WALK = [
    (["report", "--cases", "{tmp}/missing.jsonl"], 2, "is neither a split"),
    (["report", "--cases", "{tmp}"], 2, "Is a directory"),
    (["report", "--cases", "{tmp}/garbage.jsonl"], 2, "garbage.jsonl:1"),
    (["report", "--split", "nope"], 2, "has no split 'nope'"),
    (["report", "--policy", "os:getcwd"], 1, "policy 'getcwd' raised TypeError"),
    (["report", "--policy", "no_such_module_walk:X"], 2, "no module 'no_such_module_walk'"),
    (["report", "--policies", "nope"], 2, "unknown policy 'nope'"),
    (["report", "--rules", "original"], 2, "the gate desk has no option --rules"),
    (["report", "--results", "{tmp}/missing.jsonl"], 2, "no such results file"),
    (["report", "--results", "{tmp}/garbage.jsonl"], 1, "garbage.jsonl:1: not a JSON row"),
    (["report", "--jobs", "0"], ARGPARSE, "--jobs"),
    (["attacks", "--split", "nope"], 2, "has no split 'nope'"),
    (["attacks", "--recovery", "on"], 2, "the gate desk has no option --recovery"),
    (["attacks", "--cases", "{tmp}/garbage.jsonl"], 2, "garbage.jsonl:1"),
    (["play", "--case", "nope"], 2, "no case with case_id 'nope'"),
    (["play", "--policy", "nope", "--split", "eval"], 2, "has no policy 'nope'"),
    (["play", "--split", "eval", "--policy", "careful", "--record", "{tmp}/no/x.jsonl"], 2, "No such file"),
    (["play", "--case", "eval-clean-control-0", "--seed", "3"], ARGPARSE, "--seed is not used here"),
    (["bench", "--repeats", "0"], ARGPARSE, "--repeats"),
    (["team", "--desk", "analyst"], 1, "has no team game"),
    (["team", "--agents", "13", "--seeds", "1"], 2, "n_agents must be an int in 1..12"),
    (["team", "--desk", "refund", "--overlap", "0.9"], ARGPARSE, "--overlap is not used here"),
    (["serve", "--policy", "nope"], 2, "unknown policy 'nope'"),
    (["serve", "--policy", "careful", "--port", "{busy}"], 1, "cannot listen"),
    (["serve", "--policy", "careful", "--stall", "5"], ARGPARSE, "--stall is not used here"),
    (
        [*MODEL, "--base-url", DOWN, "--api-key-env", "BATCHGATE_WALK_UNSET", "--out", "{tmp}/x.jsonl"],
        2,
        "set the environment variable",
    ),
    ([*MODEL, "--base-url", DOWN, "--out", "{tmp}/x.jsonl"], 2, "cannot reach"),
    ([*MODEL, "--base-url", "{html}/html/v1", "--out", "{tmp}/x.jsonl"], 2, "answered with an HTML page"),
    # A rollout the server fails is an infra error, kept apart; none scored: exit 1, and the
    # run's one summary line names the first error.
    ([*MODEL, "--base-url", "{html}/lie/v1", "--out", "{tmp}/x.jsonl"], 1, "the first: MalformedResponse"),
    (
        [*MODEL, "--base-url", "{html}/slow/v1", "--out", "{tmp}/x.jsonl", "--timeout", "0.3"],
        1,
        "the first: APITimeoutError",
    ),
    ([*MODEL, "--base-url", DOWN, "--out", "{tmp}/no/x.jsonl"], 2, "there is no folder"),
    (
        [*MODEL, "--base-url", DOWN, "--out", "{tmp}/x.jsonl", "--system-prompt", "{tmp}/missing.txt"],
        2,
        "cannot read --system-prompt",
    ),
    ([*MODEL, "--base-url", DOWN, "--out", "{tmp}/x.jsonl", "--rules", "original"], 2, "no option --rules"),
    (["view", "{tmp}/missing.jsonl", "--out", "{tmp}/x.html"], 2, "no such results file"),
    (["view", "{tmp}", "--out", "{tmp}/x.html"], 2, "no such results file"),
    (["view", "{tmp}/garbage.jsonl", "--out", "{tmp}/x.html"], 1, "garbage.jsonl:1: not a JSON row"),
    (["view", "{results}", "--out", "{tmp}/no/x.html"], 2, "there is no folder"),
    (["serve-env", "--cases", "{tmp}/missing.jsonl"], 2, "is neither a split"),
    (["serve-env", "--split", "nope"], 2, "has no split 'nope'"),
    (["serve-env", "--port", "{busy}"], 1, "cannot listen"),
    (["mcp", "--case", "nope"], 2, "no case with case_id 'nope'"),
    (["mcp", "--cases", "{tmp}/missing.jsonl"], 2, "is neither a split"),
    (["mcp", "--desk", "refund", "--tickets", "3", "--split", "eval"], 2, "shapes the procedural cases"),
    (["keygen", "--out", "{tmp}/no/key"], 2, "cannot write"),
    (["keygen", "--out", "{results}"], 2, "exists already"),
    (["verify", "{tmp}/missing.jsonl", "--trust", "{tmp}/missing.pub"], 2, "cannot read the public key"),
    (["verify", "{tmp}/missing.jsonl", "--trust", "{results}"], 2, "not a public key in PEM"),
    (["verify", "{tmp}/garbage.jsonl", "--trust", "{pub}"], 1, "not a JSON row"),
    (["audit", "--split", "nope"], ARGPARSE, "--split"),
]


def _argv(argv: list[str], tmp: Path, html: str, busy: str) -> list[str]:
    values = {
        "{tmp}": str(tmp),
        "{results}": str(RESULTS),
        "{html}": html,
        "{busy}": busy,
        "{pub}": _public_key(tmp),
    }
    out = []
    for arg in argv:
        for key, value in values.items():
            arg = arg.replace(key, value)
        out.append(arg)
    return out


def _public_key(folder: Path) -> str:
    """A public key in ``folder`` (made once), for the commands that check against one."""
    from batchgate_gym.kernel.certificate import write_key_pair

    public = folder / "walk.key.pub"
    if not public.exists():
        write_key_pair(folder / "walk.key")
    return str(public)


def _walked(command: str) -> bool:
    return any(argv[0] == command for argv, _, _ in WALK)


def test_the_walk_takes_in_every_command():
    assert [name for name in SUBCOMMANDS if not _walked(name)] == []


@pytest.mark.parametrize(("argv", "status", "words"), WALK, ids=[" ".join(argv[:4]) for argv, _, _ in WALK])
def test_bad_input_ends_in_one_line_with_the_status_of_its_kind(
    argv, status, words, tmp_path, html_url, busy_port, monkeypatch, capsys
):
    if argv[0] not in SUBCOMMANDS:
        pytest.skip(f"no {argv[0]} command here")
    (tmp_path / "garbage.jsonl").write_text("not json\n")
    monkeypatch.setenv("BATCHGATE_WALK_KEY", "local")
    monkeypatch.delenv("BATCHGATE_WALK_UNSET", raising=False)
    monkeypatch.setenv("BATCHGATE_NO_PROGRESS", "1")
    try:  # anything but SystemExit escaping here is a traceback, and fails the test
        code = main(_argv(argv, tmp_path, html_url, busy_port))
    except SystemExit as stop:
        code = stop.code
    err = capsys.readouterr().err
    if isinstance(code, str):  # SystemExit(message): Python prints it, exit status 1
        err, code = err + code + "\n", 1
    lines = err.strip().splitlines()
    assert "Traceback" not in err and lines, err
    if status == ARGPARSE:
        assert code == 2 and lines[-1].startswith(f"batchgate {argv[0]}: error: ") and words in lines[-1]
        return
    assert len(lines) == 1, lines
    summary = lines[0].startswith(f"{tmp_path}/x.jsonl: 0 scored")  # run-model's last line
    assert (summary or lines[0].startswith(f"batchgate {argv[0]}")) and words in lines[0], lines[0]
    assert code == status if status is not None else code != 0


def test_an_unexpected_error_is_one_line_unless_its_traceback_is_asked_for(monkeypatch, capsys):
    from batchgate_gym.app import bench

    def broken(args: object) -> int:
        raise RuntimeError("the machine fell over")

    monkeypatch.setattr(bench, "run", broken)
    monkeypatch.delenv("BATCHGATE_TRACEBACK", raising=False)
    with pytest.raises(SystemExit) as stopped:
        main(["bench", "--quick"])
    assert stopped.value.code == (
        "batchgate bench failed: RuntimeError: the machine fell over (BATCHGATE_TRACEBACK=1 shows where)"
    )
    monkeypatch.setenv("BATCHGATE_TRACEBACK", "1")
    with pytest.raises(RuntimeError, match="the machine fell over"):
        main(["bench", "--quick"])
