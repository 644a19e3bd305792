"""`rooms mcp`: serve the parts as MCP tools over stdio (see rooms_cli/mcp_server and examples/mcp/)."""

from __future__ import annotations

from rooms_cli.cli import hot
from rooms_cli.cli.shared import Run, shared


@shared(as_=True, json=False)
def mcp_cmd(run: Run) -> None:
    """Run an MCP server on stdin/stdout: board, messaging, groups, chat, roundtable and events as tools.

    The identity (--as, ROOMS_AGENT…) and the project (--dir, ROOMS_DIR…) are fixed at start. Needs the
    extra: pip install 'rooms-cli[mcp]'. Register it with Claude Code: claude mcp add rooms -- rooms mcp

    Example: rooms mcp --as frontend --dir ~/src/shop
    """
    hot.mcp(run)
