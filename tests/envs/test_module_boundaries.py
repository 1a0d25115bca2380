"""Envs never import policies, and no module in envs/ or policies/ imports another
module's private name."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import batchgate_gym.kernel.text_policy as text_policy
import batchgate_gym.policies.base as base

ROOT = Path(__file__).resolve().parents[2]


def test_importing_every_env_module_loads_no_policy():
    probe = (
        "import json, sys, batchgate_gym.envs.gate, batchgate_gym.envs.macro, batchgate_gym.envs.team,"
        " batchgate_gym.envs.team_v0, batchgate_gym.envs.text_env;"
        " print(json.dumps(sorted(m for m in sys.modules if m.startswith('batchgate_gym.policies'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


def test_policy_helpers_are_the_kernel_ones():
    for name in ("call", "action", "results", "result_of"):
        assert getattr(base, name) is getattr(text_policy, name)


def test_no_private_name_crosses_a_module_boundary():
    crossings = []
    for folder in ("envs", "policies"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                    crossings += [
                        (str(path.relative_to(ROOT)), alias.name)
                        for alias in node.names
                        if alias.name.startswith("_")
                    ]
    assert crossings == []
