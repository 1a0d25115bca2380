"""The package type-checks clean under the mypy settings in pyproject.toml.

mypy finds modules by walking directories: it cannot follow setup.cfg's
``package_dir`` mapping nor the import hook of an editable install, so run over
the tree it would name ``envs/`` and ``policies/`` as top-level packages and lose
every import of ``batchgate_gym.envs`` or ``batchgate_gym.policies``. This test
hands mypy each source file under its installed module name instead. Run it
alone with ``python tests/test_types.py``; the cache is the usual ``.mypy_cache``.
"""

from __future__ import annotations

import configparser
import sys
from pathlib import Path

from mypy import build
from mypy.errors import CompileError
from mypy.main import process_options
from mypy.modulefinder import BuildSource

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "batchgate_gym"


def package_dirs() -> dict[str, Path]:
    """Each installed package root and its directory: the package, then setup.cfg's ``package_dir``."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    mapped = {PACKAGE: ROOT / PACKAGE}
    for line in config["options"]["package_dir"].strip().splitlines():
        name, _, directory = line.partition("=")
        mapped[name.strip()] = ROOT / directory.strip()
    return mapped


def sources() -> list[BuildSource]:
    found = []
    for package, directory in package_dirs().items():
        for path in sorted(directory.rglob("*.py")):
            parts = path.relative_to(directory).with_suffix("").parts
            module = ".".join((package, *(part for part in parts if part != "__init__")))
            found.append(BuildSource(str(path), module))
    return found


def run_mypy() -> list[str]:
    """mypy's messages for the whole package (none when it is clean)."""
    found = sources()
    _, options = process_options(
        ["--config-file", str(ROOT / "pyproject.toml"), *(source.path or "" for source in found)]
    )
    options.cache_dir = str(ROOT / ".mypy_cache")
    try:
        return build.build(found, options).errors
    except CompileError as error:  # a blocking error (syntax, a module found twice)
        return error.messages


def test_package_sources_are_all_given() -> None:
    names = {source.module for source in sources()}
    assert {f"{PACKAGE}.kernel.episode", f"{PACKAGE}.envs.team", f"{PACKAGE}.policies.learned"} <= names
    assert not any(name.startswith(("envs", "policies")) for name in names)


def test_mypy_is_clean() -> None:
    messages = run_mypy()
    assert not messages, "mypy found problems:\n" + "\n".join(messages)


if __name__ == "__main__":
    problems = run_mypy()
    print("\n".join(problems) or "mypy: no problems")
    sys.exit(1 if problems else 0)
