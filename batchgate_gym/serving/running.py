"""Starting a server on 127.0.0.1: the socket first, so that port 0 can say which port it got."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable
from typing import Any

PROTOCOLS = ("openenv", "mcp")


def build(protocol: str, catalog: Any, *, max_sessions: int, idle_timeout: float | None) -> tuple[Any, str]:
    """The ASGI application for ``protocol`` and the path clients connect to."""
    if protocol == "openenv":
        _without_web_ui()
        from .openenv_server import build_app

        return build_app(catalog, max_sessions=max_sessions, idle_timeout=idle_timeout), "ws"
    if protocol == "mcp":
        from .mcp_server import build_http_app

        return build_http_app(catalog, max_sessions=max_sessions, idle_timeout=idle_timeout), "mcp"
    raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")


def serve(app: Any, port: int, announce: Callable[[int], None]) -> None:
    """Serve ``app`` on 127.0.0.1:``port`` (0: a free port) until interrupted; ``announce(port)``
    once the server accepts connections."""
    import uvicorn

    class Announcing(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                announce(sock.getsockname()[1])

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise ValueError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    # No per-message deflate on WebSockets: its zlib state costs each live session about as much
    # memory as the session's own world, and compressing every step costs CPU that a
    # server on loopback or a local network gets nothing back for.
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5, ws_per_message_deflate=False
    )
    Announcing(config).run(sockets=[sock])


def _without_web_ui() -> None:
    """Keep OpenEnv's optional web UI (gradio) out of a server process that never shows it.

    ``openenv``'s server package imports its gradio interface only where gradio can be
    imported, and uses it only when ``ENABLE_WEB_INTERFACE`` asks; marking gradio
    unimportable before the first ``openenv`` import saves about three seconds of CPU
    and a thousand modules at every start. Nothing changes where the UI is asked for.
    """
    asked = os.environ.get("ENABLE_WEB_INTERFACE", "false").lower() in ("true", "1", "yes")
    if not asked and "gradio" not in sys.modules and "openenv" not in sys.modules:
        sys.modules["gradio"] = None  # type: ignore[assignment]
