"""``batchgate mcp``: one episode of a desk as an MCP server over stdio, for agents that launch servers.

The desk's tools (names, descriptions and JSON schemas from its
``tool_schemas()``) step the episode; ``batchgate://episode/task`` is the task
text (also the server's instructions) and ``batchgate://episode/result``, once
the episode has ended, its score and exported log. ``--case ID`` plays a fixed
case (of ``--cases`` or ``--split``, eval by default); otherwise ``--seed`` draws
one (a procedural case unless ``--cases`` or ``--split`` is given). Standard
output carries the protocol and nothing else. For many sessions over HTTP, see
``batchgate serve-env --protocol mcp``.
"""

from __future__ import annotations

import argparse

from batchgate_gym.kernel.extras import require

from .serve_env import add_sign_key_option, signer_of
from .shared import UsageError, add_case_source, desk_of, env_kwargs, int_in

TAKES_DESK_OPTIONS = True  # plays the desk's environment: --rules, --recovery, ... apply


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_case_source(parser, default="procedural cases")
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--seed", type=int_in(0), default=None, help="seed for drawing the case")
    chosen.add_argument(
        "--case", metavar="CASE_ID", help="play this case (eval split unless --cases/--split)"
    )
    add_sign_key_option(parser)


def run(args: argparse.Namespace) -> int:
    # The SDK and its event loop (anyio, which the SDK brings) come with the mcp extra.
    require("this command", "mcp", ("mcp", "anyio"))
    import anyio

    from batchgate_gym.serving.episodes import DeskCatalog, ResetRequest, SessionRequestError
    from batchgate_gym.serving.mcp_server import serve_stdio

    desk = desk_of(args)
    source = args.cases or args.split or (desk.cases.default_split if args.case else None)
    cases = desk.fixed_cases(args.cases, args.split) if source else None
    catalog = DeskCatalog(
        desk.name,
        source,
        env_kwargs(args, desk, cases),
        signer=signer_of(args.sign_key, "mcp"),
        protocol="mcp",
    )
    try:
        # A case by id is played with seed 0, as a report of that one case plays it.
        seed = 0 if args.seed is None else args.seed
        anyio.run(serve_stdio, catalog, ResetRequest(seed=seed, case_id=args.case))
    except SessionRequestError as exc:  # a case the cases lack: the command line's mistake
        raise UsageError(f"batchgate mcp: {exc}") from None
    return 0
