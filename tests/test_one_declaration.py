"""One declaration per operation (docs/architecture.md): every MCP tool with a command twin is built from
that command's declaration (`@declared_tool`), so a tool cannot drift from its command. The one tool
declared on its own is `events`, which has no command twin: `rooms watch --json` follows the same events
live, while the tool answers a poll from a cursor."""

from __future__ import annotations

from rooms_cli.mcp_server.tools import TOOLS

MCP_ONLY = {"events"}  # tools without a command twin, declared with `@tool` in mcp_server/tools.py


def test_every_tool_with_a_command_twin_comes_from_its_declaration():
    undeclared = {name for name, op in TOOLS.items() if op.declared is None}
    assert undeclared == MCP_ONLY, f"declare these tools with their command (cli/operations*.py): {sorted(undeclared - MCP_ONLY)}"


def test_each_declared_tool_names_the_command_it_comes_from():
    for name, op in TOOLS.items():
        if op.declared is not None:
            assert op.declared.words, name
