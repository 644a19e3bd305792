"""`rooms mcp`: serve the parts as MCP tools over stdio (see rooms_cli/mcp_server and examples/mcp/)."""

from __future__ import annotations

from rooms_cli.cli import operations
from rooms_cli.cli.shared import declared_command

mcp_cmd = declared_command(operations.mcp)
