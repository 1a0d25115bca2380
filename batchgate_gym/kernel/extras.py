"""Optional dependencies: parts of the package whose libraries come with an extra.

The base install (``pip install -e .``) carries what most of the package needs; a
desk built on heavier libraries names them in an extra of ``setup.cfg``.
:func:`require` is the first thing every way into such a desk runs, so a base
install meets one line naming the extra to install, not a bare
``ModuleNotFoundError`` raised from deep inside the desk.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from collections.abc import Iterable

DISTRIBUTION = "batchgate_gym"


class MissingExtra(ModuleNotFoundError):
    """A part of the package needs libraries that are not installed; the message says
    which, and the ``pip install`` line of the extra that brings them."""


def install_line(extra: str) -> str:
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def require(what: str, extra: str, modules: Iterable[str]) -> None:
    """Import every module of ``modules``; if any is missing, raise :class:`MissingExtra`
    saying that ``what`` needs them and how to install ``extra``."""
    absent = []
    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # installed, but broken inside: that error is the real one
                raise
            absent.append(module)
    if absent:
        raise MissingExtra(
            f"{what} needs {', '.join(absent)}, not in the base install: {install_line(extra)}",
            name=absent[0],
        )


_REQUIREMENT = re.compile(r"^(?P<name>[A-Za-z0-9._-]+).*;\s*extra\s*==\s*[\"'](?P<extra>[^\"']+)[\"']")
_TEST_EXTRA = "test"  # brings nearly everything, for CI: named only when nothing smaller does


def extra_providing(module: str | None) -> str | None:
    """The extra of the installed package that brings the top-level module of ``module``
    (a distribution of the same name, ``-`` read as ``_``), the smallest one named first
    in ``setup.cfg``; None if no extra does, or the package's metadata cannot be read."""
    if not module:
        return None
    wanted = module.split(".")[0].lower()
    try:
        requirements = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        return None
    found = []
    for requirement in requirements:
        match = _REQUIREMENT.match(requirement)
        if match and match["name"].lower().replace("-", "_") == wanted:
            found.append(match["extra"])
    chosen = [extra for extra in found if extra != _TEST_EXTRA] or found
    return chosen[0] if chosen else None


__all__ = ["MissingExtra", "extra_providing", "install_line", "require"]
