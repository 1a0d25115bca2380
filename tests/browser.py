"""Headless Chromium for the tests that look at pages as a person would.

Debian's ``chromium`` package (``apt-get install chromium``; ``.ci/run`` installs it),
driven through Playwright's Python package with that binary: Playwright never
downloads a browser of its own here. Without the binary the tests skip with the
reason, except in CI (``CI`` set), where its absence is a failure.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 900}
SCREENSHOTS_ENV = "BATCHGATE_SCREENSHOTS"  # a folder: the tests' screenshots are also copied there


def chromium_binary() -> str:
    found = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have Chromium: .ci/run installs Debian's chromium package")
        pytest.skip("Chromium is not installed (apt-get install chromium; CI installs it)")
    return found


@contextmanager
def chromium_page(outside: list[str] | None = None) -> Iterator[Any]:
    """A page of a fresh headless Chromium with a user-data directory of its own.

    Requests to anything but local files are refused and their addresses appended to
    ``outside``: a page under test must stand alone."""
    from playwright.sync_api import sync_playwright

    binary = chromium_binary()
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=binary, headless=True, args=CHROMIUM_FLAGS, viewport=VIEWPORT
        )
        try:
            page = context.new_page()
            page.route("http*://**", lambda route: route.abort())
            if outside is not None:
                page.on("request", lambda request: local(request.url) or outside.append(request.url))
            yield page
        finally:
            context.close()


def local(url: str) -> bool:
    return url.startswith(("file:", "data:", "about:", "blob:"))


def screenshot(page: Any, path: Path) -> bytes:
    """A PNG of the viewport, written to ``path`` (and into $BATCHGATE_SCREENSHOTS if set)."""
    png: bytes = page.screenshot(path=str(path))
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    folder = os.environ.get(SCREENSHOTS_ENV)
    if folder:
        (Path(folder) / path.name).write_bytes(png)
    return png
