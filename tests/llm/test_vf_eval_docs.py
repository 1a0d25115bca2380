"""docs/models.md shows verifiers' command line, not only its Python API: the ``vf-eval``
line names this package's module and ``load_environment`` arguments that build the desk's
environment."""

from __future__ import annotations

import importlib
import json
import re
import shlex
from pathlib import Path

import pytest

MODELS = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text()


def _vf_eval_words() -> list[str]:
    found = re.search(r"^BATCHGATE_KEY=local vf-eval .*?(?<!\\)$", MODELS, re.M | re.S)
    assert found is not None, "docs/models.md shows no vf-eval command"
    return shlex.split(found.group(0).replace("\\\n", " "))


def test_the_vf_eval_command_builds_the_environment_it_names():
    pytest.importorskip(
        "verifiers", reason="the verifiers extra is not installed: pip install -e '.[verifiers]'"
    )
    words = _vf_eval_words()
    module = importlib.import_module(words[2])
    arguments = json.loads(words[words.index("-a") + 1])
    env = module.load_environment(**arguments)
    assert arguments == {"desk": "gate", "split": "eval"} and len(env.dataset) == 32
    assert words[words.index("-b") + 1] == "http://127.0.0.1:8000/v1"  # where the serve line listens
    assert "batchgate serve --desk gate --policy careful --port 8000 &" in MODELS
