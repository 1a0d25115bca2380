"""The package type-checks clean under the mypy settings in pyproject.toml.

mypy finds modules by walking directories and knows neither setup.cfg's
``package_dir`` mapping nor the import hook of an editable install: run over the
checkout, it would call ``envs/`` and ``policies/`` top-level packages and lose
every import of ``batchgate_gym.envs`` or ``batchgate_gym.policies``. So the test
lays out the installed shape in a temporary folder (links to the package's files,
with ``envs`` and ``policies`` inside it, as setup.cfg maps them) and runs mypy's
public API there. Run it alone with ``python tests/test_types.py``.
"""

from __future__ import annotations

import configparser
import os
import sys
import tempfile
from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "batchgate_gym"


def mapped_dirs() -> dict[str, Path]:
    """setup.cfg's ``package_dir``: installed subpackage name -> folder in the checkout."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    mapped = {}
    for line in config["options"]["package_dir"].strip().splitlines():
        name, _, directory = line.partition("=")
        mapped[name.strip()] = ROOT / directory.strip()
    return mapped


def installed_shape(into: Path) -> Path:
    """``into/batchgate_gym``: links to the package's entries and to the mapped subpackages."""
    package = into / PACKAGE
    package.mkdir()
    for entry in (ROOT / PACKAGE).iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, directory in mapped_dirs().items():
        (package / name.removeprefix(PACKAGE + ".")).symlink_to(directory)
    return package


def run_mypy() -> tuple[str, int]:
    """mypy's report and exit status for the whole package, as installed."""
    with tempfile.TemporaryDirectory() as folder:
        installed_shape(Path(folder))
        here = os.getcwd()
        os.chdir(folder)
        try:
            out, err, status = api.run(
                [
                    "--config-file",
                    str(ROOT / "pyproject.toml"),
                    "--cache-dir",
                    os.environ.get("MYPY_CACHE_DIR", str(ROOT / ".mypy_cache")),
                    "-p",
                    PACKAGE,
                ]
            )
        finally:
            os.chdir(here)
    return out + err, status


def test_the_installed_shape_names_envs_and_policies_inside_the_package(tmp_path: Path) -> None:
    package = installed_shape(tmp_path)
    assert (package / "envs" / "team.py").resolve() == ROOT / "envs" / "team.py"
    assert (package / "policies" / "learned.py").resolve() == ROOT / "policies" / "learned.py"
    assert (package / "kernel" / "episode.py").resolve() == ROOT / PACKAGE / "kernel" / "episode.py"


@pytest.mark.slow  # type check: mypy over the whole package
def test_mypy_is_clean() -> None:
    report, status = run_mypy()
    assert status == 0, "mypy found problems:\n" + report
    assert "Success" in report and "source files" in report


if __name__ == "__main__":
    report, status = run_mypy()
    print(report)
    sys.exit(status)
