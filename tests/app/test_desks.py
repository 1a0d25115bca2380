"""The desk registry: every command takes --desk, the gate is the default, and any
registered desk (here a toy one built in this file) runs through the commands."""

from __future__ import annotations

import json
from typing import Any

import gymnasium
import pytest

from batchgate_gym.app.cli import build_parser, main
from batchgate_gym.desks import registry

COMMANDS = ("report", "attacks", "play", "bench", "team")


# -- a toy desk: guess the hidden word --------------------------------------------------------


class GuessEnv(gymnasium.Env):
    """Text in, text out: the case names a word; ``guess <word>`` ends the episode."""

    def __init__(self, cases: list[dict[str, str]] | None = None, max_turns: int = 5) -> None:
        self.action_space = gymnasium.spaces.Text(64)
        self.observation_space = gymnasium.spaces.Text(256)
        self.cases = cases or [{"case_id": "fresh-0", "family": "fresh", "word": "apple"}]
        self.max_turns = max_turns

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self.case = self.cases[(options or {}).get("case_index", 0)]
        self.turn = 0
        return f"the word is {self.case['word']}; answer: guess <word>", {"turn": 0, "calls": 0}

    def step(self, action: str) -> Any:
        self.turn += 1
        right = action.strip() == f"guess {self.case['word']}"
        done = action.startswith("guess ")
        truncated = not done and self.turn >= self.max_turns
        info: dict[str, Any] = {"turn": self.turn, "calls": 1}
        if done or truncated:
            hit = 1.0 if right else 0.0
            info.update(
                case_id=self.case["case_id"],
                family=self.case["family"],
                score={"reward": hit, "right": hit, "wrong_guesses": 0 if right else 1},
            )
        return "ok", info.get("score", {}).get("reward", 0.0), done, truncated, info


class Echo:
    """Reads the word off the observation and guesses it."""

    name = "echo"

    def reset(self, observation: str, info: dict[str, Any]) -> None:
        self.word = observation.split("the word is ")[1].split(";")[0]

    def act(self, observation: str) -> str:
        return f"guess {self.word}"


def blurt(observation: str) -> str:
    return "guess banana"


CASES = [
    {"case_id": "w-0", "family": "fruit", "word": "apple"},
    {"case_id": "w-1", "family": "fruit", "word": "banana"},
    {"case_id": "w-2", "family": "tool", "word": "saw"},
]


POLICIES = {"echo": Echo, "blurt": blurt}


def split_cases(name: str) -> list[dict[str, str]]:
    return list(CASES)


def make_guess_desk() -> registry.DeskSpec:
    return registry.DeskSpec(
        name="guess",
        env=f"{__name__}:GuessEnv",
        scoring=registry.Scoring(
            weights={"right": 1.0},
            metrics=(registry.Metric("wrong_guesses", column="wrong", row="wrong guesses"),),
        ),
        policies=registry.PolicySet(reference=(f"{__name__}:POLICIES",), defaults=("echo", "blurt")),
        cases=registry.CaseSupply(
            splits=("all",), default_split="all", split_cases=f"{__name__}:split_cases"
        ),
    )


def entry(name: str, description: str = "x") -> registry.DeskEntry:
    return registry.DeskEntry(name, description, make_guess_desk)


@pytest.fixture
def guess_desk():
    registry.register(entry("guess", "guess the hidden word"))
    yield registry.get("guess")
    registry.unregister("guess")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


# -- the registry itself ------------------------------------------------------------------------


def test_the_gate_is_registered_and_built_lazily():
    assert registry.names()[0] == "gate"
    gate = registry.get("gate")
    assert gate is registry.get("gate")  # built once
    assert gate.scoring.terms == ("disposition", "report", "evidence", "inspected")
    assert set(gate.policies.defaults) <= set(gate.policies.reference_policies)
    assert gate.team is not None and gate.bench is not None and gate.policies.lineup is not None
    with pytest.raises(KeyError, match="unknown desk 'nope'; known: gate"):
        registry.get("nope")


def test_a_name_registers_once_and_must_match_its_desk():
    registry.register(entry("guess"))
    try:
        with pytest.raises(ValueError, match="already registered"):
            registry.register(entry("guess"))
        registry.register(entry("guess"), replace=True)
        registry.register(entry("misnamed"))
        with pytest.raises(ValueError, match="calls itself 'guess'"):
            registry.get("misnamed")
    finally:
        registry.unregister("guess")
        registry.unregister("misnamed")
    assert "guess" not in registry.names()
    with pytest.raises(ValueError, match="desk name"):
        registry.register(entry("no spaces"))


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unknown_desk_is_an_argparse_error_listing_the_desks(command, capsys):
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args([command, "--desk", "nope"])
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert "argument --desk: invalid choice: 'nope'" in error and "'gate'" in error


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_defaults_to_the_gate(command):
    assert build_parser().parse_args([command]).desk == "gate"


@pytest.mark.parametrize(
    "argv",
    [
        ("report", "--split", "eval", "--policies", "naive,careful", "--json", "--no-progress"),
        ("attacks", "--cases", "tests/data/seed_eval_curated.jsonl", "--json", "--no-progress"),
    ],
    ids=["report", "attacks"],
)
def test_desk_gate_prints_exactly_the_default_output(argv, capsys):
    default = run_cli(capsys, *argv)
    explicit = run_cli(capsys, argv[0], "--desk", "gate", *argv[1:])
    assert explicit == default
    policies = json.loads(default)["policies"]
    assert policies and all(len(p["per_case"]) == 32 for p in policies.values())


# -- a second desk ------------------------------------------------------------------------------


def test_a_registered_desk_joins_every_commands_choices(guess_desk):
    assert registry.names()[0] == "gate" and registry.names()[-1] == "guess" and "refund" in registry.names()
    for command in COMMANDS:
        assert build_parser().parse_args([command, "--desk", "guess"]).desk == "guess"


def test_report_runs_a_registered_desk(guess_desk, capsys):
    text = run_cli(capsys, "report", "--desk", "guess", "--no-progress")
    assert "| mean reward | 1.0000 | 0.3333 |" in text
    assert "| mean right | 1.0000 | 0.3333 |" in text
    assert "| wrong guesses | 0 | 2 |" in text
    assert "| fruit | 1.0000 | 0.5000 |" in text and "| tool | 1.0000 | 0.0000 |" in text
    assert "| no right | 0.0000 | 0.0000 |" in text
    assert "revenue" not in text and "disposition" not in text
    figures = json.loads(run_cli(capsys, "report", "--desk", "guess", "--json", "--policies", "blurt"))
    blurted = figures["policies"]["blurt"]
    assert blurted["mean_reward"] == 0.3333 and blurted["mean_right"] == 0.3333
    assert blurted["wrong_guesses"] == 2
    assert blurted["per_case"]["w-1"] == {"family": "fruit", "reward": 1.0, "right": 1.0, "wrong_guesses": 0}


def test_a_registered_desks_policies_are_its_own(guess_desk, capsys):
    with pytest.raises(SystemExit, match="unknown policy 'careful'; known: echo, blurt"):
        main(["report", "--desk", "guess", "--policies", "careful"])
    with pytest.raises(SystemExit, match="batchgate report: desk 'guess' has no split 'eval'; splits: all"):
        main(["report", "--desk", "guess", "--split", "eval"])


@pytest.mark.parametrize(
    ("argv", "missing"),
    [
        (("attacks",), "has no attackers"),
        (("report", "--attackers"), "has no attackers"),
        (("team", "--seeds", "1"), "has no team game"),
        (("bench", "--quick"), "has no speed benchmark"),
    ],
    ids=["attacks", "report-attackers", "team", "bench"],
)
def test_a_command_the_desk_lacks_stops_with_a_message(guess_desk, argv, missing, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([argv[0], "--desk", "guess", *argv[1:]])
    assert f"batchgate {argv[0]}: the 'guess' desk {missing}" == str(stopped.value.code)
    assert capsys.readouterr().out == ""  # nothing ran


def test_play_drives_a_registered_desk(guess_desk):
    from batchgate_gym.app.play import build_env, play, score_text

    args = build_parser().parse_args(["play", "--desk", "guess", "--case", "w-2"])
    env, reset = build_env(args)
    assert reset == {"seed": None, "options": {"case_id": "w-2"}}
    shown: list[str] = []
    lines = iter(["guess saw"])
    info = play(env, {"options": {"case_index": 2}}, lambda _prompt: next(lines), shown.append, guess_desk)
    assert info["score"]["reward"] == 1.0
    text = score_text(info, guess_desk)
    assert text == shown[-1]
    assert "case w-2 (tool)" in text and "  right        1.0000" in text and "wrong guesses: 0" in text
