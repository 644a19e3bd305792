"""Rooms' operations declared once (cli/declare.py): `rooms room show`.

As in cli/operations_board.py, the declaration gives the typer command (chat_cmd.py) and the MCP tool's
input schema (mcp_server/tools.py); typer parses it (not on the fast path: cli/fast.py).
"""

from __future__ import annotations

from rooms_cli.cli.declare import ROOM_MCP_HELP, Mcp, McpArg, Param, operation
from rooms_cli.cli.shared import Run
from rooms_cli.shapes import STR, record


@operation("room", "show", shared=("dir", "json_"), params=(
    Param("room_id", default=None, help="Room id (default: the current room).", complete="rooms",
          mcp=McpArg(name="room", help=ROOM_MCP_HELP)),
), mcp=Mcp("room_show", "Show a room", record({"id": STR, "roster": {"type": "array", "items": {"type": "object"}}}), read_only=True))
def room_show(run: Run, room_id: str | None) -> None:
    """Roster, budget, mutes and queued mentions of a room (= /list).

    Example: rooms room show architecture-sync
    """
    from rooms_cli.chat.membership import show
    from rooms_cli.cli import chat_view
    from rooms_cli.store.ids import validate_name

    info = show(run.project, run.config, validate_name(room_id, "room id") if room_id is not None else run.room)
    run.emit(info, lambda: chat_view.print_room(info))


# every operation declared here: typer registers them (chat_cmd.py), MCP serves their tools (tools.py)
OPERATIONS = (room_show,)
