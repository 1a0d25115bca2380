"""A desk as a Model Context Protocol server, on the official ``mcp`` SDK.

Every MCP session plays one episode of the desk. Its tools are the desk's tools
(names, descriptions and JSON schemas from the desk's ``tool_schemas()``); a
tool call is one step of the desk's text environment with that single call, and
its result is the step's observation text. Arguments are not checked against the
schema by the server: the desk's own codec refuses a malformed call, logs it and
says why, as it does for every other client. Once the episode has ended, a
further call reaches nothing and comes back as a tool error.

Resources: ``batchgate://episode/task`` (the task text the episode opened
with) and, once the episode has ended, ``batchgate://episode/result``: JSON
with the case id, the reward, every score term, the log head and the exported
log (it replays under that head). Each tool result's ``_meta`` carries, under
``batchgate/episode``, the turn, whether the episode has ended and the reward
the environment paid (0 until the end), as the Gymnasium step returns them; on a
server given a signing key (``--sign-key``), the last one also carries the
episode's ``certificate``, which the result resource holds too (:mod:`.certificates`).

Two transports:

* stdio (:func:`serve_stdio`): one episode per process, chosen when the process
  starts (``batchgate mcp --desk NAME --seed N`` or ``--case ID``); the task text
  is also the server's ``instructions``;
* streamable HTTP (:func:`build_http_app`): many sessions, each its own episode,
  chosen by the query of the URL the client connects to (``/mcp?seed=3``,
  ``/mcp?case_id=...&split=eval``; a session without a query plays seed 0's
  case). Session ids are the SDK's random ones and are refused on any other
  session's behalf; ``max_sessions`` caps the live sessions (a new one is
  refused with HTTP 503) and ``idle_timeout`` ends a session nobody has used for
  that long.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from pydantic import AnyUrl

from .episodes import DeskCatalog, ResetRequest, SessionEpisode, SessionRequestError

TASK_URI = "batchgate://episode/task"
RESULT_URI = "batchgate://episode/result"
META = "batchgate/episode"  # a tool result's _meta key: the turn, whether the episode ended, the reward


class _Slot:
    """The episode of one MCP session, started on its first request."""

    def __init__(self) -> None:
        self.session: SessionEpisode | None = None

    def close(self) -> None:
        if self.session is not None:
            self.session.close("the MCP session ended")


_SLOT: contextvars.ContextVar[_Slot] = contextvars.ContextVar("batchgate_mcp_slot")


class DeskMcpServer(Server[Any, Any]):
    """The desk's tools and the episode's resources, one episode per MCP session.

    ``fixed`` is the episode of every session (stdio); without it each session's
    episode comes from its HTTP request's query (:func:`reset_from_query`).
    """

    def __init__(
        self, catalog: DeskCatalog, fixed: ResetRequest | None = None, instructions: str | None = None
    ) -> None:
        super().__init__(f"batchgate-{catalog.desk_name}", version="0.1.0", instructions=instructions)
        self.catalog = catalog
        self.fixed = fixed
        self._register()

    async def run(self, *args: Any, **kwargs: Any) -> None:
        """One MCP session (the SDK calls this per session): its episode lives exactly as long."""
        slot = _Slot()
        token = _SLOT.set(slot)
        try:
            await super().run(*args, **kwargs)
        finally:
            _SLOT.reset(token)
            slot.close()

    def episode(self) -> SessionEpisode:
        """The current session's episode, started from its reset request on first use."""
        slot = _SLOT.get()
        if slot.session is None:
            request = self.fixed
            if request is None:
                http = self.request_context.request
                request = reset_from_query(getattr(http, "query_params", {}) or {})
            session = self.catalog.open()
            try:
                session.reset(request)
            except SessionRequestError:
                session.close("its reset was refused")
                raise
            slot.session = session
        return slot.session

    def _register(self) -> None:
        tools = [
            types.Tool(
                name=schema["function"]["name"],
                description=schema["function"]["description"],
                inputSchema=schema["function"]["parameters"],
            )
            for schema in self.catalog.tool_schemas
        ]

        @self.list_tools()
        async def list_tools() -> list[types.Tool]:
            return tools

        @self.call_tool(validate_input=False)  # the desk's codec refuses and logs a bad call
        async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
            episode = self.episode()
            if episode.done:
                raise SessionRequestError(_after_end(episode))
            result = episode.call(name, arguments)
            progress: dict[str, Any] = {"turn": episode.turn, "done": result.done, "reward": result.reward}
            if result.done and self.catalog.signer is not None:
                progress["certificate"] = episode.certificate()
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=result.observation)],
                isError=False,
                **{"_meta": {META: progress}},
            )

        @self.list_resources()
        async def list_resources() -> list[types.Resource]:
            listed = [_resource(TASK_URI, "task", "The task text the episode opened with", "text/plain")]
            if self.episode().done:
                listed.append(
                    _resource(RESULT_URI, "result", "The ended episode's score and log", "application/json")
                )
            return listed

        @self.read_resource()
        async def read_resource(uri: AnyUrl) -> Iterable[ReadResourceContents]:
            episode = self.episode()
            if str(uri) == TASK_URI:
                return [ReadResourceContents(content=episode.opening_text, mime_type="text/plain")]
            if str(uri) == RESULT_URI:
                text = json.dumps(episode.result(), sort_keys=True)
                return [ReadResourceContents(content=text, mime_type="application/json")]
            raise SessionRequestError(f"no resource {uri}; resources: {TASK_URI}, {RESULT_URI}")


def _after_end(episode: SessionEpisode) -> str:
    ending = getattr(getattr(episode.env.unwrapped, "adapter", None), "ending", None)
    return str(getattr(ending, "after_end", "not run: the episode already ended"))


def _resource(uri: str, name: str, description: str, mime: str) -> types.Resource:
    return types.Resource(uri=AnyUrl(uri), name=name, description=description, mimeType=mime)


def reset_from_query(query: Mapping[str, str]) -> ResetRequest:
    """A session's reset request from its URL query (``seed``, ``case_id``, ``case_index``, ``split``)."""
    return ResetRequest.of({name: query[name] for name in query})


# --- transports -------------------------------------------------------------------------------------------


async def serve_stdio(catalog: DeskCatalog, request: ResetRequest) -> None:
    """One episode over stdin and stdout; refused up front if its reset is."""
    from mcp.server.stdio import stdio_server

    probe = catalog.open()  # the task text, and a bad --case refused before the client speaks
    try:
        task = probe.reset(request)
    finally:
        probe.close("probe")
    server = DeskMcpServer(catalog, fixed=request, instructions=task)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def build_http_app(catalog: DeskCatalog, *, max_sessions: int, idle_timeout: float | None) -> Any:
    """A Starlette application serving the desk at ``/mcp`` over streamable HTTP, plus
    ``/sessions`` (live sessions and the cap)."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    from starlette.types import Receive, Scope, Send

    server = DeskMcpServer(catalog, instructions=f"Read {TASK_URI} for the task, then call the tools.")
    manager = StreamableHTTPSessionManager(
        app=server, session_idle_timeout=idle_timeout, max_sessions=max_sessions
    )

    class Endpoint:
        """``/mcp``: a new session's query is checked as a reset (its fields, and that the cases
        hold the case it names) before the SDK opens it."""

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            request = Request(scope, receive)
            if "mcp-session-id" not in request.headers:
                try:
                    catalog.check(reset_from_query(request.query_params))
                except SessionRequestError as exc:
                    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": str(exc)}}
                    await JSONResponse(error, status_code=400)(scope, receive, send)
                    return
            await manager.handle_request(scope, receive, send)

    async def sessions(request: Request) -> JSONResponse:
        count = catalog.count
        return JSONResponse({"live": count.live, "opened": count.opened, "max_sessions": max_sessions})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(
        routes=[Route("/mcp", Endpoint()), Route("/sessions", sessions)],
        lifespan=lifespan,
    )


__all__ = [
    "META",
    "RESULT_URI",
    "TASK_URI",
    "DeskMcpServer",
    "build_http_app",
    "reset_from_query",
    "serve_stdio",
]
