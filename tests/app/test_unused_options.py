"""No option is silently ignored: every option of every command (whichever commands are
registered) is read by the command, and one it would not use in a given run is refused
before any work, naming the option and why."""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import socket

import pytest

from batchgate_gym.app.cli import build_parser, command_parsers, given_options, main
from batchgate_gym.desks import registry

PARSER = build_parser()
COMMANDS = command_parsers(PARSER)
# Read for every command taking them by the shared code: the desks' environment options
# (shared.env_kwargs, which the command must call).
SHARED = {"help", *registry.all_options()}


def _options(command: str) -> list[argparse.Action]:
    return [
        action for action in COMMANDS[command]._actions if action.option_strings and action.dest != "help"
    ]


def _module(command: str):
    return importlib.import_module(COMMANDS[command].get_default("handler").__module__)


def _read_from_args(module) -> set[str]:
    """Every ``args.NAME`` (and ``getattr(args, "NAME", ...)``) the module's code reads;
    ``desk`` if it asks ``shared.desk_of(args)`` for the desk."""
    source = inspect.getsource(module)
    tree = ast.parse(source)
    found = {"desk"} if "desk_of(args)" in source else set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "args":
            found.add(node.attr)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == "args"
            and isinstance(node.args[1], ast.Constant)
        ):
            found.add(node.args[1].value)
    return found


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_option_of_every_command_is_read_by_it(command):
    module = _module(command)
    read = _read_from_args(module)
    for action in _options(command):
        if action.dest in registry.all_options():
            assert "env_kwargs(args" in inspect.getsource(module), (command, action.dest)
        elif action.dest not in SHARED:
            assert action.dest in read, f"batchgate {command} never reads {action.option_strings[0]}"


def _sample(action: argparse.Action) -> list[str]:
    """The option given with a value it accepts."""
    flag = action.option_strings[-1]
    if action.nargs == 0:
        return [flag]
    value = str(action.choices[-1]) if action.choices else "1"
    return [flag, value]


def _required(command: str) -> list[str]:
    """What the command cannot be parsed without: its positional arguments, its required options."""
    positional = ["x" for action in COMMANDS[command]._actions if not action.option_strings]
    return positional + [word for action in _options(command) if action.required for word in _sample(action)]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_option_given_is_told_apart_from_its_default(command):
    required = _required(command)
    for action in _options(command):
        argv = [command, *required, *_sample(action)] if not action.required else [command, *required]
        assert action.dest in given_options(argv), (command, action.dest)
    positional = {a.dest for a in COMMANDS[command]._actions if not a.option_strings}
    assert given_options([command, *required]) == positional | {
        a.dest for a in _options(command) if a.required
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["team", "--desk", "refund", "--overlap", "0.9", "--seeds", "1"],
            "batchgate team: error: --overlap is not used here: the refund desk's team game deals no lists"
            " for a batch to overlap on",
        ),
        (
            ["team", "--desk", "refund", "--rules", "original", "--seeds", "1"],
            "batchgate team: error: --rules is not used here: the refund desk's team game does not take it",
        ),
        (
            ["team", "--desk", "refund", "--tickets", "4", "--seeds", "1"],
            "batchgate team: error: --tickets is not used here: the refund desk's team game does not take it",
        ),
        (
            ["report", "--results", "none.jsonl", "--policies", "careful"],
            "batchgate report: error: --policies is not used here: --results compares the rollouts saved"
            " in its files and plays nothing",
        ),
        (
            ["report", "--results", "none.jsonl", "--desk", "refund", "--rules", "original"],
            "batchgate report: error: --rules is not used here",
        ),
        (
            ["play", "--case", "eval-clean-control-0", "--seed", "3"],
            "batchgate play: error: --seed is not used here: --case names the case to play, so no case is drawn",
        ),
    ],
)
def test_an_option_the_run_would_not_use_is_refused_before_any_work(argv, message, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--stall", "5"], "--stall is not used here: it shapes transport faults, and --faults is 0"),
        (
            ["--model-errors", "0.1", "--retry-after", "2"],
            "--retry-after is not used here: it shapes transport",
        ),
        (["--seed", "4"], "--seed is not used here: it draws faults and mistakes"),
    ],
)
def test_serve_refuses_fault_settings_without_faults(options, message, capsys):
    # The port is taken, so a serve that got past the check stops at once (exit 1) rather
    # than serving for ever.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        with pytest.raises(SystemExit) as stopped:
            main(["serve", "--policy", "careful", "--port", port, *options])
    assert stopped.value.code == 2
    assert f"batchgate serve: error: {message}" in capsys.readouterr().err


def test_the_same_options_at_their_defaults_but_not_given_run(capsys):
    """Refused only when given: the defaults of the refused options are no reason to stop."""
    with pytest.raises(SystemExit) as stopped:
        main(["report", "--results", "none.jsonl"])
    assert "not used here" not in str(stopped.value) and "none.jsonl" in str(stopped.value)
    assert main(["team", "--desk", "refund", "--seeds", "1"]) == 0
    assert "overlap" not in capsys.readouterr().out


def test_an_option_the_desk_lacks_names_the_desk_that_has_it():
    with pytest.raises(
        SystemExit, match=r"^batchgate report: the gate desk has no option --rules \(the refund desk has\)$"
    ):
        main(["report", "--rules", "original"])
