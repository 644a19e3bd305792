"""Rooms' operations declared once (operations/declare.py): `rooms room create|list|show|invite|kick`.

As in operations/board.py, the declaration gives the typer command (chat_cmd.py) and the MCP tool's
input schema (mcp_server/tools.py); typer parses it (not on the fast path: cli/fast.py).
"""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.shared import Run
from rooms_cli.core.shapes import STR, envelope, record
from rooms_cli.operations.declare import ROOM_MCP_HELP, Mcp, McpArg, Param, operation
from rooms_cli.operations.hot import AS_ROOM, LIMIT, SINCE

ROSTER = record({"room": STR, "agent": STR, "roster": {"type": "array", "items": STR}})  # what invite and kick return
AGENT = Param("agent", help="Agent id (fuzzy: @researcher, agents/researcher, reseacher).", complete="agents",
              mcp=McpArg(help="Agent id."))


def run_slash(run: Run, line: str, no_wait: bool = False) -> None:
    """Run a `rooms room …` subcommand through its slash command (one implementation for both)."""
    from rooms_cli.chat import slash
    from rooms_cli.cli import chat_view

    view = None if run.json else chat_view.TurnView()
    result = slash.run(run.project, run.config, run.room, run.me, line, on_event=view, wait=not no_wait, on_wait=output.note)
    run.emit(result.data if result.turn is None else result, lambda: chat_view.print_slash(result))


@operation("room", "create", shared=("dir", "json_"), params=(
    Param("room_id", help="Room id.", mcp=McpArg(name="room")),
    Param("agent", "strs", None, "An agent to join (repeat). Default: every non-idle agent.", ("--agent", "-a"), complete="agents",
          mcp=McpArg(name="agents", help="Agents to join (default: every non-idle agent).")),
), mcp=Mcp("room_create", "Create a room", record({"id": STR, "roster": {"type": "array", "items": STR}})))
def room_create(run: Run, room_id: str, agent: list[str] | None) -> None:
    """Create a live room.

    Example: rooms room create architecture-sync --agent architect --agent researcher
    """
    from rooms_cli.chat.rooms import create_room

    state = create_room(run.project, room_id, agent or None)
    run.emit(state, f"Created room {state.id} with {', '.join(state.roster) or 'no agents'} (budget {state.budget_total})")


@operation("room", "list", shared=("dir", "json_"), params=(
    Param("all_", "bool", False, "Include dropped and halted rooms.", ("--all",), mcp=McpArg(name="all")),
    LIMIT, SINCE,
), mcp=Mcp("room_list", "List rooms", envelope("rooms", record({"id": STR})), read_only=True))
def room_list(run: Run, all_: bool) -> None:
    """List live rooms (= /rooms).

    Example: rooms room list --json
    """
    from rooms_cli.chat.membership import live_rooms
    from rooms_cli.cli import chat_view

    rooms = live_rooms(run.project, include_stopped=all_)
    run.emit(rooms, lambda: chat_view.print_rooms(rooms))


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


@operation("room", "invite", shared=AS_ROOM, params=(AGENT,),
           mcp=Mcp("room_invite", "Invite an agent to a room", ROSTER, idempotent=True))
def room_invite(run: Run, agent: str) -> None:
    """Add an agent to the room's roster (= /invite).

    Example: rooms room invite judge
    """
    run_slash(run, f"/invite {agent}")


@operation("room", "kick", shared=AS_ROOM, params=(AGENT,), mcp=Mcp("room_kick", "Remove an agent from a room", ROSTER, destructive=True))
def room_kick(run: Run, agent: str) -> None:
    """Remove an agent and delete its session in this room (= /kick).

    Example: rooms room kick hustler
    """
    run_slash(run, f"/kick {agent}")


# every operation declared here: typer registers them (chat_cmd.py), MCP serves their tools (tools.py)
OPERATIONS = (room_create, room_list, room_show, room_invite, room_kick)
