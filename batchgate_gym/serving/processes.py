"""``batchgate serve-env`` in child processes on 127.0.0.1, for tests, benchmarks and examples.

:func:`started` launches every command line it is given at once (importing the
protocol stacks is the slow part, so servers start side by side), waits until
each has said its address on standard error, and stops them all on exit.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

STARTUP_SECONDS = 240.0  # generous: a loaded two-core machine imports slowly


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_listening(port: int, within: float = 60) -> None:
    """Return once something accepts connections on 127.0.0.1:``port`` (RuntimeError after ``within`` s)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


@dataclass
class ServedProcess:
    """A running server: its process, its port and what it wrote to standard error."""

    process: subprocess.Popen[str]
    port: int = 0
    stderr: list[str] = field(default_factory=list)

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def sessions(self) -> dict[str, Any]:
        """The server's ``/sessions``: live sessions, sessions opened, the cap."""
        with urllib.request.urlopen(self.url("/sessions"), timeout=30) as response:
            return dict(json.loads(response.read()))

    def wait_for_live(self, live: int, within: float) -> dict[str, Any]:
        """Poll ``/sessions`` until ``live`` sessions remain, or ``within`` seconds have passed."""
        deadline = time.monotonic() + within
        while True:
            counts = self.sessions()
            if counts["live"] == live or time.monotonic() > deadline:
                return counts
            time.sleep(0.1)

    def rss_bytes(self) -> int:
        """The server process's resident memory (Linux)."""
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        raise OSError("no VmRSS line")


def _read_stderr(served: ServedProcess, ready: threading.Event) -> None:
    assert served.process.stderr is not None
    for line in served.process.stderr:
        served.stderr.append(line)
        if not ready.is_set() and " at " in line and "127.0.0.1:" in line:
            served.port = int(line.split("127.0.0.1:")[1].split("/")[0])
            ready.set()
    ready.set()  # the process ended


@contextlib.contextmanager
def started(*commands: Sequence[str]) -> Iterator[list[ServedProcess]]:
    """``batchgate serve-env ARGS --port 0`` for each ``ARGS``, all at once; yields them once
    every one listens, and stops them all on exit."""
    launched: list[tuple[ServedProcess, threading.Event]] = []
    try:
        for args in commands:
            process = subprocess.Popen(
                [sys.executable, "-m", "batchgate_gym", "serve-env", *args, "--port", "0"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            served, ready = ServedProcess(process), threading.Event()
            threading.Thread(target=_read_stderr, args=(served, ready), daemon=True).start()
            launched.append((served, ready))
        for served, ready in launched:
            ready.wait(STARTUP_SECONDS)
            if not served.port:
                raise RuntimeError(f"serve-env did not start: {''.join(served.stderr)[-2000:]}")
        yield [served for served, _ in launched]
    finally:
        for served, _ in launched:
            served.process.terminate()
        for served, _ in launched:
            try:
                served.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                served.process.kill()
                served.process.wait()


__all__ = ["ServedProcess", "free_port", "started", "wait_listening"]
