"""`rooms mcp`: serve the parts as MCP tools over stdio (see rooms_cli/mcp_server and examples/mcp/).

A declared operation (operations/declare.py), so the fast path (cli/fast.py) starts it without typer: a client
spawns a server for every session and waits for its tool list. Declared here, in the CLI, not in
operations/: it is the command that starts the MCP adapter (the one arrow from the CLI to it), and the
server's tools are derived from operations/, so an operation there that imports the server closes a cycle.
"""

from __future__ import annotations

from rooms_cli.operations.declare import operation

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from rooms_cli.project.context import Context


@operation("mcp", shared=("as_", "dir"))
def mcp(ctx: Context) -> None:
    """Run an MCP server on stdin/stdout: board, messaging, groups, chat, roundtable and events as tools.

    The identity (--as, ROOMS_AGENT…) and the project (--dir, ROOMS_DIR…) are fixed at start. Needs the
    mcp extra (the MCP SDK); without it, rooms mcp says how to add it to this install. Register it with
    Claude Code: claude mcp add rooms -- rooms mcp

    Example: rooms mcp --as frontend --dir ~/src/shop
    """
    from rooms_cli.core.errors import RoomsError

    try:
        from rooms_cli.mcp_server.server import serve
    except ImportError as exc:
        from rooms_cli.store.installation import add_extra

        raise RoomsError(f"rooms mcp needs the MCP SDK ({exc.name or exc} is missing): {add_extra('mcp')}",
                         code="missing_dependency") from None
    serve(ctx.dir, ctx.as_)

