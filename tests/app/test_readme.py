"""Every table in the README and the docs is the output of the command its markers name.

A block ``<!-- begin: COMMAND -->`` ... ``<!-- end: COMMAND -->`` in README.md or any
docs/*.md page must equal COMMAND's stdout; ``part of: COMMAND`` must be a run of
whole lines of it; ``recorded: FILE`` must appear in that committed file; the images
under ``<!-- plotted: COMMAND -->`` must be what ``COMMAND --plot DIR`` draws. The README
itself is the front door: short, with every registered environment in its table.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import gymnasium
import pytest

import batchgate_gym
from batchgate_gym.envs.gate import team
from batchgate_gym.envs.refund import team as refund_team
from batchgate_gym.registration import ENTRY_POINTS

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
PAGES = {"README.md": README} | {
    f"docs/{page.name}": page.read_text() for page in sorted((ROOT / "docs").glob("*.md"))
}
BLOCK = re.compile(r"<!-- begin: (?P<command>.+?) -->\n(?P<body>.*?)\n<!-- end: (?P=command) -->", re.S)
BLOCKS = [(name, m["command"], m["body"]) for name, text in PAGES.items() for m in BLOCK.finditer(text)]
RECORDED = "recorded: "
PART = "part of: "
README_MAX_LINES = 250


def test_pages_have_pinned_blocks():
    commands = {command for _, command, _ in BLOCKS}
    assert "batchgate report" in commands
    assert "batchgate report --cases tests/data/seed_eval_curated.jsonl" in commands
    # The docs hold every table the long manual pinned before it was split into pages.
    assert len(BLOCKS) >= 34 + 3


def test_every_begin_marker_opens_a_block_with_a_body():
    # A marker with nothing before its end is no block at all, and an empty body is in every
    # output and every file: either way the pin holds nothing.
    opened = [
        (page, m[1])
        for page, text in PAGES.items()
        for m in re.finditer(r"(?<!`)<!-- begin: (.+?) -->", text)
    ]
    assert opened == [(page, command) for page, command, _ in BLOCKS]
    assert [f"{page}: {command}" for page, command, body in BLOCKS if not body.strip()] == []


@functools.cache
def command_output(command: str) -> str:
    words = shlex.split(command)
    assert words[0] == "batchgate"
    return subprocess.run(
        [sys.executable, "-m", "batchgate_gym", *words[1:]],
        cwd=ROOT,
        env={**os.environ, "BATCHGATE_NO_PROGRESS": "1"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def is_run_of_lines(part: str, whole: str) -> bool:
    return f"\n{part.strip()}\n" in f"\n{whole.strip()}\n"


def _block(page: str, command: str, body: str) -> object:
    """A block pinned to a command reruns it (slow); a recorded block only reads its file."""
    marks = () if command.startswith(RECORDED) else (pytest.mark.slow,)
    return pytest.param(page, command, body, id=f"{page}: {command}", marks=marks)


@pytest.mark.parametrize(("page", "command", "body"), [_block(*block) for block in BLOCKS])
def test_block_is_the_commands_output(page, command, body):
    if command.startswith(RECORDED):
        # Too slow or machine-dependent to rerun here (training, timing): the block
        # must be what the command wrote to its committed output file.
        recorded = (ROOT / command.removeprefix(RECORDED)).read_text()
        assert body.strip() in recorded
    elif command.startswith(PART):
        assert is_run_of_lines(body, command_output(command.removeprefix(PART)))
    else:
        assert body.strip() == command_output(command).strip()


def test_part_of_is_whole_lines():
    whole = "| a | 1 |\n| b | 2 |\n| c | 3 |\n"
    assert is_run_of_lines("| b | 2 |\n| c | 3 |", whole)
    assert not is_run_of_lines("b | 2 |", whole)
    assert not is_run_of_lines("| a | 1 |\n| c | 3 |", whole)


@pytest.mark.slow  # runs the README's example
def test_usage_example_runs():
    example = README.split("## Use it from Python\n\n```python\n", 1)[1].split("```", 1)[0]
    assert len(example.strip().splitlines()) <= 10
    out = subprocess.run(
        [sys.executable, "-c", example], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "'reported': True" in out


@pytest.mark.slow  # runs the README's model example against a server
def test_model_example_runs(tmp_path):
    """The README's model lines, run as written but on a free port and two cases."""
    import socket

    install, block = model_block().split("\n", 1)  # the install line: this venv has the extras
    assert install == MODEL_INSTALL
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = (
        block.replace(":8000", f":{port}").replace("--port 8000", f"--port {port}").replace("-n 32", "-n 2")
    )
    assert script.count(str(port)) == 2 and "-n 2 " in script
    bin_dir = Path(sys.executable).parent  # where the batchgate command is installed
    done = subprocess.run(
        ["bash", "-c", f"set -e\ntrap 'kill $(jobs -p) 2>/dev/null' EXIT\n{script}"],
        cwd=tmp_path,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "BATCHGATE_NO_PROGRESS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "| mean reward (per case, over scored rollouts) | 1.0000 |" in done.stdout
    assert "careful.html: 2 rollouts of 1 model\n" in done.stdout
    assert (tmp_path / "careful.html").read_text().count("<article class='rollout'") == 2


MODEL_INSTALL = ".venv/bin/pip install -q -e '.[api]' && . .venv/bin/activate"


def model_block() -> str:
    """The README's "A model" block: its install line, then the commands."""
    return README.split("## A model\n", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]


def test_ci_runs_the_model_block_verbatim_after_its_own_install_line():
    assert model_block().startswith(MODEL_INSTALL + "\n")
    extracted = subprocess.run(
        ["awk", CI_RUN.split("awk '", 1)[1].split("'", 1)[0], "README.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert extracted == model_block()
    assert ". ./model.sh" in CI_RUN and "du -sm .venv" in CI_RUN


def test_every_test_file_the_pages_name_exists():
    """The test tree moves with the package; a page naming a test file follows it."""
    named = {(name, path) for name, text in PAGES.items() for path in re.findall(r"tests/[\w/]+\.py", text)}
    assert sorted((name, path) for name, path in named if not (ROOT / path).is_file()) == []


def test_readme_is_short():
    assert len(README.splitlines()) <= README_MAX_LINES


def space_label(space: gymnasium.Space) -> str:
    if isinstance(space, gymnasium.spaces.Text):
        return f"Text({space.min_length}, {space.max_length})"
    if isinstance(space, gymnasium.spaces.Dict):
        inner = ", ".join(f"{key!r}: {space_label(value)}" for key, value in space.spaces.items())
        return f"Dict({inner})"
    return str(space)


def environment_rows() -> dict[str, list[str]]:
    table = README.split("## The environments\n", 1)[1].strip().split("\n\n", 1)[0]
    rows = [line.strip("|").split(" | ") for line in table.splitlines()[2:]]
    return {
        cells[0].strip().strip("`").removesuffix("` (PettingZoo)"): [c.strip() for c in cells]
        for cells in rows
    }


def test_every_registered_id_in_the_table_with_its_spaces():
    rows = environment_rows()
    assert set(ENTRY_POINTS) <= set(rows)
    assert batchgate_gym.registration.register_envs() == tuple(ENTRY_POINTS)
    for env_id in ENTRY_POINTS:
        env = gymnasium.make(env_id)
        try:
            assert rows[env_id][3:5] == [
                f"`{space_label(env.action_space)}`",
                f"`{space_label(env.observation_space)}`",
            ]
        finally:
            env.close()
    for module in (team, refund_team):
        game = module.parallel_env()
        agent = game.possible_agents[0]
        assert rows[module.__name__][3:5] == [
            f"`{space_label(game.action_space(agent))}`",
            f"`{space_label(game.observation_space(agent))}`",
        ]


# The name a headline gives a trained policy, where its pinned table names it otherwise.
HEADLINE_NAMES = {"MaskablePPO": "ppo"}


def table_cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def mean_rewards(body: str) -> set[tuple[str, str]]:
    """Each (policy, mean reward) a pinned block's tables give: a table with a policy a
    column and a ``mean reward`` row, or one with a policy a row and ``reward`` (or
    ``mean reward``) its first figure."""
    pairs: set[tuple[str, str]] = set()
    lines = body.splitlines()
    header: list[str] = []
    for number, line in enumerate(lines):
        if not line.startswith("|"):
            header = []
            continue
        if re.fullmatch(r"\|[-:| ]+\|", line.strip()):
            header = table_cells(lines[number - 1])
            continue
        cells = table_cells(line)
        if not header or len(cells) != len(header):
            continue
        if cells[0] == "mean reward":
            pairs.update(zip(header[1:], cells[1:], strict=True))
        elif header[1] in ("reward", "mean reward"):
            pairs.add((cells[0], cells[1]))
    return pairs


def test_headline_figures_are_their_policies_pinned_mean_rewards():
    # Each "policy figure" of a headline is that policy's mean reward in a pinned table
    # (the holdout's in a block run on the holdout split, the rest in one that is not):
    # a figure standing for another policy, or another split, does not pass.
    pinned = {"holdout": set(), "eval": set()}
    for _, command, body in BLOCKS:
        pinned["holdout" if "holdout" in command else "eval"] |= mean_rewards(body)
    for env_id, cells in environment_rows().items():
        main, _, holdout = cells[5].partition("; holdout:")
        for split, text in (("eval", main), ("holdout", holdout)):
            for name, figure in re.findall(r"([\w-]+) (-?\d\.\d{4})", text):
                assert (HEADLINE_NAMES.get(name, name), figure) in pinned[split], (
                    env_id,
                    split,
                    name,
                    figure,
                )
        assert re.findall(r"\d\.\d{4}", main), env_id


def test_a_headline_figure_of_another_policy_is_caught():
    pinned = mean_rewards("|  | ppo | random |\n|---|---:|---:|\n| mean reward | 0.9734 | 0.5328 |")
    assert ("ppo", "0.9734") in pinned and ("ppo", "0.5328") not in pinned
    rows = mean_rewards("| policy | reward | x |\n|---|---|---|\n| careful | 0.8407 | 0.9 |")
    assert rows == {("careful", "0.8407")}


# <!-- plotted: COMMAND --> and the images under it: the charts COMMAND --plot DIR draws.
PLOTTED = re.compile(r"<!-- plotted: (?P<command>.+?) -->\n(?P<images>(?:!\[[^\]]*\]\([^)]+\)\n)+)")
CHARTS = [
    (name, m["command"], re.findall(r"\(([^)]+)\)", m["images"]))
    for name, text in PAGES.items()
    for m in PLOTTED.finditer(text)
]


@pytest.mark.parametrize(("page", "command", "images"), CHARTS, ids=[f"{p}: {c}" for p, c, _ in CHARTS])
@pytest.mark.slow  # runs every charting command
def test_charts_are_what_the_command_draws(page, command, images, tmp_path):
    image = pytest.importorskip("matplotlib.image")
    words = shlex.split(command)
    subprocess.run(
        [sys.executable, "-m", "batchgate_gym", *words[1:], "--plot", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "BATCHGATE_NO_PROGRESS": "1"},
        capture_output=True,
        check=True,
    )
    for shown in images:
        committed = image.imread(ROOT / Path(page).parent / shown)
        drawn = image.imread(tmp_path / Path(shown).name)
        assert committed.shape == drawn.shape and (committed == drawn).all(), shown


def test_every_command_has_its_row_on_the_commands_page():
    from batchgate_gym.app.cli import SUBCOMMANDS

    commands_page = PAGES["docs/commands.md"]
    for name in SUBCOMMANDS:
        assert f"\n| `{name}` | " in commands_page, name


def test_the_docs_show_charts():
    assert {command for _, command, _ in CHARTS} >= {"batchgate report", "batchgate report --desk refund"}


DOCS_IMAGES = {
    "docs/images/ppo_macro_learning_curve.png": "benchmarks/results/ppo_macro/learning_curve.png",
    "docs/images/ppo_refund_learning_curve.png": "benchmarks/results/ppo_refund/learning_curve.png",
}


@pytest.mark.parametrize(("image", "plot"), DOCS_IMAGES.items())
def test_docs_images_are_the_recorded_plots(image, plot):
    assert (ROOT / image).read_bytes() == (ROOT / plot).read_bytes()


@pytest.mark.slow  # builds the docs site
def test_docs_site_builds_strict(tmp_path):
    if not os.environ.get("CI"):  # CI installs the docs extra, so there it must build
        pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert (tmp_path / "site" / "gate" / "index.html").is_file()


# -- the two commands ----------------------------------------------------------------------------

CI_RUN = (ROOT / ".ci" / "run").read_text()
FENCED_BASH = re.compile(r"```bash\n(?P<body>.*?)```", re.S)
VENV = "python3 -m venv .venv"


def _readme_commands() -> list[str]:
    """The README's two commands: its bash blocks that make a venv, one command each."""
    blocks = [m["body"] for m in FENCED_BASH.finditer(README)]
    chosen = [block for block in blocks if block.lstrip().startswith(VENV)]
    commands = []
    for block in chosen:
        lines = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
        assert len(lines) == 1, f"one command per block: {block!r}"
        commands.append(lines[0])
    return commands


def test_the_readmes_two_commands_are_what_ci_runs():
    install_and_report, install_and_test = _readme_commands()
    assert install_and_report.endswith("batchgate report") and "pip install -q -e . &&" in install_and_report
    assert install_and_test.endswith("python -m pytest -q -n auto")
    lines = [line.strip() for line in CI_RUN.splitlines()]
    # The first runs in the fresh copy of the checkout, where no venv exists yet (a base
    # install); the second, the suite, is the last thing CI runs.
    fresh = lines.index('cd "$fresh"')
    assert install_and_report in lines[fresh:]
    assert lines.index(install_and_report) < lines.index(install_and_test) == len(lines) - 1
    assert lines[-1] == install_and_test


def test_ci_run_is_valid_bash_that_stops_at_the_first_failure():
    assert "set -euo pipefail" in CI_RUN
    subprocess.run(["bash", "-n", str(ROOT / ".ci" / "run")], check=True)
