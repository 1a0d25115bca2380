"""The desks as network environments: OpenEnv servers and MCP servers.

:mod:`.episodes` is what every protocol shares: a server's desk and cases
(:class:`~.episodes.DeskCatalog`) and one session's episode
(:class:`~.episodes.SessionEpisode`), which is the desk's own text environment,
so a session gives the same observations, reward, score terms and log as
``gymnasium.make``. :mod:`.openenv_server` serves it on the ``openenv``
package's ``create_app`` (WebSocket sessions, OpenEnv's ``EnvClient``);
:mod:`.mcp_server` on the ``mcp`` SDK (stdio, one episode per process, and
streamable HTTP, one episode per MCP session); :mod:`.running` starts either on
127.0.0.1. The commands are ``batchgate serve-env`` and ``batchgate mcp``.
Nothing here is imported until one of them runs (each protocol needs its extra:
``openenv`` or ``mcp``).
"""
