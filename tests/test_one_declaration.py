"""One declaration per operation (docs/architecture.md): each operation's body is written once, in
rooms_cli/operations/, and the command line, the MCP server and `rooms top` all run it. An MCP tool is
its operation plus the schema the declaration gives: nothing is written for it in mcp_server/ but for
`events`, the one tool without a command twin (`rooms watch --json` follows the same events live; the
tool answers a poll from a cursor)."""

from __future__ import annotations

import ast
from pathlib import Path

from rooms_cli.mcp_server.tools import TOOLS
from rooms_cli.operations import every

MCP_ONLY = {"events"}  # tools without a command twin, declared in mcp_server/tools.py
PACKAGE = Path(__file__).resolve().parent.parent / "rooms_cli"


def test_every_tool_with_a_command_twin_is_its_declared_operation():
    undeclared = {name for name, tool in TOOLS.items() if tool.declared is None}
    assert undeclared == MCP_ONLY, f"declare these tools with their operation (rooms_cli/operations/): {sorted(undeclared - MCP_ONLY)}"
    declared = {op.mcp.name: op for op in every() if op.mcp is not None}
    assert {name: tool.declared for name, tool in TOOLS.items() if tool.declared is not None} == declared


def test_each_tool_describes_itself_and_names_the_command_it_comes_from():
    for name, tool in TOOLS.items():
        assert tool.description.strip(), name
        if tool.declared is not None:
            assert tool.declared.words and tool.declared.help, name


def test_the_mcp_server_holds_no_operation_body():
    """mcp_server/tools.py calls no part: every tool runs its operation's body (events polls cursors.py)."""
    tree = ast.parse((PACKAGE / "mcp_server" / "tools.py").read_text("utf-8"))
    parts = ("board", "chat", "groups", "messaging", "roundtable", "reservations", "watch", "agents")
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert not [m for m in imported if m.startswith(tuple(f"rooms_cli.{p}" for p in parts))]


def test_every_declared_operation_has_a_view_on_the_command_line():
    """The CLI shows each operation's result its own way (cli/*_view.py); none falls back to bare JSON."""
    from rooms_cli.cli.dispatch import view_of
    from rooms_cli.cli.views import RENDERS

    for op in every():
        view_of(op)
        assert op.name in RENDERS, op.name


def test_rooms_top_runs_the_operations_not_the_parts():
    """tui/actions.py, what the dashboard's keys do, calls declared operations (`Operation.call`), never a part."""
    tree = ast.parse((PACKAGE / "tui" / "actions.py").read_text("utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and (node.module or "").startswith("rooms_cli.")}
    parts = [m for m in imported if m.split(".")[1] in ("board", "chat", "groups", "messaging")]
    assert parts == ["rooms_cli.chat.slash"]  # the type of a slash command's result, to word it
