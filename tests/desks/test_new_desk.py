"""A fourth desk added as the README's "Adding a desk" says, and nothing else.

The test writes a tiny desk (EchoDesk: say back the phrase the task names) into a
temporary tree, exactly the files that section lists, one folder per top-level
directory, and points the three installed packages at it (``__path__``, where a
checkout's folders would be). From there the house's own discovery takes over: the
desk registry finds its ``spec.py``, the registration reads its Gymnasium id, the
commands play it. If the README's list and what a desk needs drift apart, this fails.
"""

from __future__ import annotations

import configparser
import fnmatch
import importlib
import importlib.util
import json
import re
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import batchgate_gym.desks
import batchgate_gym.envs
import batchgate_gym.policies
from batchgate_gym import registration
from batchgate_gym.app.cli import main
from batchgate_gym.desks import registry

ROOT = Path(__file__).resolve().parents[2]
NAME = "echo"
ENV_ID = "batchgate_gym/EchoDesk-v0"

# The installed package each top-level folder of a desk belongs to (tests are not installed).
INSTALLED_AS = {
    "batchgate_gym/desks": batchgate_gym.desks,
    "envs": batchgate_gym.envs,
    "policies": batchgate_gym.policies,
}

DESK = {
    "batchgate_gym/desks/echo/__init__.py": '''
        """EchoDesk: say back, once, the phrase the task names."""

        ENV_ID = "batchgate_gym/EchoDesk-v0"
        GYMNASIUM_IDS = {ENV_ID: "batchgate_gym.envs.echo.text:EchoDeskEnv"}
    ''',
    "batchgate_gym/desks/echo/cases.py": '''
        """A case is a phrase to say back; the eval split holds three."""

        import hashlib
        import json
        import os
        from dataclasses import dataclass
        from pathlib import Path


        @dataclass(frozen=True)
        class EchoCase:
            case_id: str
            family: str
            phrase: str

            @property
            def digest(self) -> str:
                return hashlib.sha256(f"{self.case_id}\\n{self.phrase}".encode()).hexdigest()


        SPLITS = {
            "eval": (
                EchoCase("e-0", "short", "ok"),
                EchoCase("e-1", "short", "go on"),
                EchoCase("e-2", "long", "the quick brown fox"),
            )
        }


        def split_cases(name: str) -> list[EchoCase]:
            return list(SPLITS[name])


        def load_cases(source) -> list[EchoCase]:
            """Cases from a JSONL path, from dicts, or as they are."""
            if isinstance(source, (str, os.PathLike)):
                source = [json.loads(line) for line in Path(source).read_text().splitlines() if line.strip()]
            return [item if isinstance(item, EchoCase) else EchoCase(**item) for item in source]
    ''',
    "batchgate_gym/desks/echo/tools.py": """
        from batchgate_gym.kernel.codec import Param, ToolSpec
        from batchgate_gym.kernel.episode import EndingText

        SAY = ToolSpec("say", "Say a phrase; the episode ends.", (Param("text", str, "what to say"),))
        TOOLS = {SAY.name: SAY}
        ECHO_ENDING = EndingText(finished="phrase said")
    """,
    "batchgate_gym/desks/echo/world.py": '''
        """One episode's desk: the case and the hash-chained log of what was said."""

        from batchgate_gym.kernel.ledger import Ledger

        from .tools import TOOLS


        class EchoWorld:
            tools = TOOLS

            def __init__(self):
                self.ledger = Ledger()
                self.case = None

            @property
            def finished(self):
                return any(entry.action == "say" for entry in self.ledger.entries[1:])

            def reset(self, case, nonce=None):
                self.case = case
                self.ledger = Ledger()
                self.ledger.begin(case.digest, {}, nonce)

            def call(self, call):
                self.ledger.append(call.name, call.args, True)
                return {"said": call.args["text"]}
    ''',
    "batchgate_gym/desks/echo/prompt.py": """
        from batchgate_gym.kernel.codec import how_to_act

        from .tools import TOOLS


        def task_text(case, max_turns):
            return f"Say back, exactly, in {max_turns} turns: {case.phrase}\\n{how_to_act(TOOLS)}"
    """,
    "batchgate_gym/desks/echo/grader.py": '''
        """The score, from the log alone: the phrase said exactly, and how many of its words."""

        from dataclasses import dataclass
        from fractions import Fraction
        from typing import ClassVar

        from batchgate_gym.kernel.scoring import WeightedScore


        @dataclass(frozen=True)
        class EchoScore(WeightedScore):
            WEIGHTS: ClassVar = {"exact": Fraction(1, 2), "words": Fraction(1, 2)}
            exact: Fraction
            words: Fraction
            says: int


        def grade(case, entries):
            said = [entry.args["text"] for entry in entries if entry.action == "say" and entry.executed]
            wanted = set(case.phrase.split())
            heard = set(said[0].split()) if said else set()
            exact = Fraction(int(said[:1] == [case.phrase]))
            return EchoScore(exact, Fraction(len(wanted & heard), len(wanted)), len(said))


        def score_live(world):
            return grade(world.case, world.ledger.entries)
    ''',
    "batchgate_gym/desks/echo/spec.py": """
        from batchgate_gym.desks.registry import CaseSupply, DeskEntry, DeskSpec, Metric, PolicySet, Scoring

        from . import ENV_ID
        from .grader import EchoScore

        POLICIES = "batchgate_gym.policies.echo"


        def lineup(cases):
            from batchgate_gym.policies.echo.attackers import ATTACKERS
            from batchgate_gym.policies.echo.reference import REFERENCE_POLICIES

            return {**REFERENCE_POLICIES, **ATTACKERS}  # plain functions: policies as they are


        def build():
            return DeskSpec(
                name="echo",
                env="batchgate_gym.envs.echo.text:EchoDeskEnv",
                env_id=ENV_ID,
                scoring=Scoring(
                    weights=EchoScore.WEIGHTS,
                    metrics=(Metric("says", column="says", row="phrases said"),),
                ),
                policies=PolicySet(
                    reference=(f"{POLICIES}.reference:REFERENCE_POLICIES",),
                    defaults=("careful",),
                    attackers=f"{POLICIES}.attackers:ATTACKERS",
                    lineup=lineup,
                    target="careful",
                    compared=("careful", "say-everything"),
                ),
                trl_env="batchgate_gym.envs.echo.trl:EchoToolEnv",
                cases=CaseSupply(
                    splits=("eval",),
                    default_split="eval",
                    split_cases=f"{__package__}.cases:split_cases",
                    load_cases=f"{__package__}.cases:load_cases",
                ),
            )


        ENTRY = DeskEntry("echo", "say back the phrase the task names", build)
    """,
    "envs/echo/__init__.py": '''
        """EchoDesk's environments: :mod:`.text`, and :mod:`.trl` for TRL."""
    ''',
    "envs/echo/trl.py": '''
        from batchgate_gym.desks.echo.tools import TOOLS
        from batchgate_gym.llm.trl_env import DeskToolEnv, desk_tools


        @desk_tools
        class EchoToolEnv(DeskToolEnv):
            """EchoDesk for TRL: its one tool as a method."""

            desk_name = "echo"
            tool_specs = TOOLS

            def say(self, text: str) -> str:
                return self._send("say", {"text": text})
    ''',
    "envs/echo/text.py": '''
        from batchgate_gym.desks.echo.cases import load_cases, split_cases
        from batchgate_gym.desks.echo.grader import score_live
        from batchgate_gym.desks.echo.prompt import task_text
        from batchgate_gym.desks.echo.tools import ECHO_ENDING
        from batchgate_gym.desks.echo.world import EchoWorld
        from batchgate_gym.kernel.case_sources import FixedCases
        from batchgate_gym.kernel.episode import EpisodeLimits

        from ..text_env import DeskAdapter, TextDeskEnv


        class EchoDeskEnv(TextDeskEnv):
            """Say back the phrase the task names: one tool, ``say(text)``, which ends the episode."""

            def __init__(self, cases=None, *, render_mode=None):
                adapter = DeskAdapter(
                    make_world=EchoWorld,
                    source=FixedCases(split_cases("eval") if cases is None else load_cases(cases)),
                    task_text=task_text,
                    score=score_live,
                    case_info=lambda case: {"case_id": case.case_id, "family": case.family},
                    ending=ECHO_ENDING,
                )
                super().__init__(adapter, EpisodeLimits(max_turns=3), render_mode=render_mode)
    ''',
    "policies/echo/__init__.py": '''
        """EchoDesk's policies: :mod:`.reference` and :mod:`.attackers`."""
    ''',
    "policies/echo/reference.py": '''
        from batchgate_gym.kernel.text_policy import action, call


        def careful(observation):
            """Says the phrase after the colon of the task's first line."""
            return action(call("say", text=observation.split("\\n")[0].split(": ", 1)[1]))


        REFERENCE_POLICIES = {"careful": careful}
    ''',
    "policies/echo/attackers.py": '''
        from batchgate_gym.kernel.text_policy import action, call


        def say_everything(observation):
            """The cheapest cheat at ``words``: say the whole first line, every word of the phrase in it."""
            return action(call("say", text=observation.split("\\n")[0]))


        ATTACKERS = {"say-everything": say_everything}
    ''',
    "tests/desks/echo/__init__.py": "",
    "tests/desks/echo/test_episode.py": """
        import gymnasium

        from batchgate_gym.policies.echo.reference import careful


        def test_careful_says_the_phrase_and_scores_one():
            env = gymnasium.make("batchgate_gym/EchoDesk-v0")
            observation, _ = env.reset(seed=0, options={"case_id": "e-2"})
            _, reward, terminated, _, info = env.step(careful(observation))
            assert terminated and reward == 1.0 and info["score"]["says"] == 1
            assert info["log_intact"] and info["case_id"] == "e-2"
            env.close()
    """,
}


def readme_files() -> dict[str, list[str]]:
    """The README's "Adding a desk" list: each folder (with ``NAME``) and its file patterns."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Adding a desk\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    listed = {}
    for line in block.strip().splitlines():
        folder, *files = line.split()
        listed[folder] = files
    return listed


def test_the_fixture_is_exactly_the_files_the_readme_lists():
    listed = readme_files()
    assert all(folder.endswith("/NAME/") for folder in listed)
    written = {path: False for path in DESK}
    for folder, patterns in listed.items():
        here = folder.replace("NAME", NAME)
        for pattern in patterns:
            matched = [path for path in DESK if fnmatch.fnmatch(path, here + pattern)]
            assert matched, f"the README lists {folder}{pattern}; the fixture writes none"
            written.update(dict.fromkeys(matched, True))
    assert [path for path, named in written.items() if not named] == []


def test_the_three_desks_list_the_installed_folders_in_setup_cfg():
    """The one existing file the README says a desk edits: setup.cfg lists its packages."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    packages = set(config["options"]["packages"].split())
    installed = [folder for folder in readme_files() if not folder.startswith("tests/")]
    assert len(installed) == len(INSTALLED_AS)
    for desk in ("gate", "refund", "analyst"):
        for folder in installed:
            top = folder.removesuffix("/NAME/")
            assert f"{INSTALLED_AS[top].__name__}.{desk}" in packages, (folder, desk)


@pytest.fixture(scope="module")
def echo_desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The desk written into a temporary tree, its folders added to the installed packages."""
    assert NAME not in registry.names()  # the three desks found, as by any command, the new one not yet
    tree = tmp_path_factory.mktemp("house")
    for path, source in DESK.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(textwrap.dedent(source).lstrip())
    with pytest.MonkeyPatch.context() as patch:
        for top, package in INSTALLED_AS.items():
            patch.setattr(package, "__path__", [*package.__path__, str(tree / top)])
        patch.setattr(registry, "_DISCOVERED", False)  # look again, now that the tree holds a new desk
        patch.setattr(registration, "ENTRY_POINTS", registration.entry_points())
        importlib.invalidate_caches()
        try:
            yield tree
        finally:
            registry.unregister(NAME)
            gymnasium.registry.pop(ENV_ID, None)
            written = re.compile(rf"batchgate_gym\.(desks|envs|policies)\.{NAME}(\.|$)")
            for module in [name for name in sys.modules if written.match(name)]:
                del sys.modules[module]
            for package in INSTALLED_AS.values():
                vars(package).pop(NAME, None)


def test_nothing_outside_the_listed_folders_was_written(echo_desk):
    on_disk = sorted(
        str(path.relative_to(echo_desk))
        for path in echo_desk.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    )
    assert on_disk == sorted(DESK)


def test_the_registry_and_gymnasium_find_it_on_their_own(echo_desk):
    assert NAME in registry.names() and registry.get(NAME).env_id == ENV_ID
    assert registration.ENTRY_POINTS[ENV_ID] == "batchgate_gym.envs.echo.text:EchoDeskEnv"
    assert ENV_ID in registration.register_envs()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gymnasium.make(ENV_ID)
        check_env(env.unwrapped)
        env.close()


@pytest.mark.parametrize("command", [["attacks"], ["report", "--attackers"]], ids=["attacks", "report"])
def test_the_commands_hold_the_attacker_below_the_reference(echo_desk, capsys, command):
    assert main([*command, "--desk", NAME, "--json", "--no-progress"]) == 0
    policies = json.loads(capsys.readouterr().out)["policies"]
    assert list(policies) == ["careful", "say-everything"]
    careful, cheat = policies["careful"], policies["say-everything"]
    assert careful["mean_reward"] == 1.0 and careful["says"] == 3
    assert (
        cheat["mean_words"] == 1.0 and cheat["mean_exact"] == 0.0
    )  # the term it games, and the one it cannot
    assert careful["mean_reward"] - cheat["mean_reward"] >= 0.05


def test_trl_and_the_servers_find_its_declarations(echo_desk):
    """The spec's TRL class plays through the factory TRL is given, and the policies a served
    episode is checked with are the spec's: nothing in llm/ or serving/ names the desk."""
    from batchgate_gym.llm.trl_env import environment_factory, trl_desks
    from batchgate_gym.serving.checking import compared

    assert NAME in trl_desks() and compared(NAME) == ("careful", "say-everything")
    env = environment_factory(NAME)()
    observation = env.reset(seed=0, case_index=2)
    assert "the quick brown fox" in observation and not env.done
    env.say(text="the quick brown fox")
    assert env.done and env.get_reward() == 1.0
    env.reset(seed=1, case_index=2)
    env.say(text="the quick brown fox jumps")  # every word, not exactly: the attacker's half
    assert env.get_reward() == 0.5


def test_its_own_tests_pass(echo_desk):
    # What importing Gymnasium does in a fresh process (its plugin entry point); here
    # Gymnasium was imported before the desk was written, so no earlier test may be relied on.
    registration.register_envs()
    path = echo_desk / "tests" / "desks" / NAME / "test_episode.py"
    spec = importlib.util.spec_from_file_location(f"echo_desk_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tests = [value for name, value in vars(module).items() if name.startswith("test_")]
    assert tests
    for test in tests:
        test()
