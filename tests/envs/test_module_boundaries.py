"""Envs never import policies, no module in envs/ or policies/ imports another
module's private name, and no desk's env or policy imports another desk's."""

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
        "import importlib, json, pkgutil, sys, batchgate_gym.envs as envs;"
        " [importlib.import_module(m.name) for m in pkgutil.walk_packages(envs.__path__, 'batchgate_gym.envs.')];"
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


DESKS = sorted(
    path.name for path in (ROOT / "batchgate_gym" / "desks").iterdir() if (path / "__init__.py").exists()
)


def _imported_modules(path: Path, package: str) -> list[str]:
    """Every module ``path`` imports, relative imports resolved against ``package``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found += [module] + [f"{module}.{alias.name}" for alias in node.names]
    return found


def _desk_named(module: str) -> str | None:
    """The desk a module of ``desks/``, ``envs/`` or ``policies/`` belongs to, if any."""
    parts = module.split(".")
    if len(parts) > 2 and parts[0] == "batchgate_gym" and parts[1] in ("desks", "envs", "policies"):
        return parts[2] if parts[2] in DESKS else None
    return None


def test_no_desk_env_or_policy_imports_another_desks_code():
    assert DESKS == ["analyst", "gate", "refund"]
    crossings = []
    for folder in ("envs", "policies"):
        for desk in DESKS:
            home = ROOT / folder / desk
            for path in sorted(home.rglob("*.py")) if home.is_dir() else []:
                parts = path.relative_to(ROOT / folder).with_suffix("").parts
                package = ".".join(["batchgate_gym", folder, *parts[:-1]])
                crossings += [
                    (str(path.relative_to(ROOT)), module)
                    for module in _imported_modules(path, package)
                    if _desk_named(module) not in (None, desk)
                ]
    assert crossings == []
