"""Chat's operations, each declared once (operations/declare.py): `rooms chat MESSAGE`, `rooms transcript`,
`rooms room create|list|show|invite|kick` (docs/chat.md)."""

from __future__ import annotations

from rooms_cli.core.shapes import STR, envelope, record
from rooms_cli.operations.common import AS_ROOM, DIR_JSON, IN_ROOM, LIMIT, SINCE, listed, nonblank
from rooms_cli.operations.declare import REQUIRED, ROOM_MCP_HELP, Mcp, McpArg, Param, operation

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.chat.coordinator import TurnResult
    from rooms_cli.chat.rooms import RoomState
    from rooms_cli.chat.slash import SlashResult
    from rooms_cli.project.context import Context

CHAT_MESSAGE = record({"id": STR, "ts": STR, "room": STR, "speaker": STR, "kind": STR, "text": STR}, title="chat message")
ROSTER = record({"room": STR, "agent": STR, "roster": {"type": "array", "items": STR}})  # what invite and kick return
AGENT = Param("agent", help="Agent id (fuzzy: @researcher, agents/researcher, reseacher).", complete="agents",
              mcp=McpArg(help="Agent id."))


@operation("chat", shared=AS_ROOM, params=(
    Param("message", default=None, help="The message; `/cmd …` runs a slash command. Omit on a terminal for chat mode.",
          parse=nonblank("message"), mcp=McpArg(default=REQUIRED, help="The message; @name addresses an agent.")),
    Param("explain", "bool", False, "Show who would answer and why; call no model, write nothing.", ("--explain", "--dry-run"),
          mcp=False),
    Param("no_wait", "bool", False, "Exit 3 at once if another turn holds the room's floor.", ("--no-wait",), mcp=False),
), mcp=Mcp("chat", "Post to a chat room", record({"message": {"type": "object"}, "replies": {"type": "array"}}),
           description="Post a message to a room and return the agents' replies (waits for the room's floor). From an "
                       "agent identity only the agents it @-mentions answer."),
    nonblank=("message",))  # without its message (chat mode, stdin) or with a blank one: typer's
def chat(ctx: Context, message: str | None, explain: bool, no_wait: bool) -> TurnResult | SlashResult | dict[str, Any]:
    """Post a message to a room and print the replies as they arrive.

    Example: rooms chat '@researcher what is the rate limit on api.stripe.com?'
    """
    from rooms_cli.chat import coordinator, slash
    from rooms_cli.core.errors import InvalidInput, UsageError

    if message is None:  # the command line reads it from stdin or opens chat mode first (cli/views.py)
        raise UsageError("the message is missing")
    if explain:
        return coordinator.explain(ctx.project, ctx.config, ctx.room, message)
    if message.lstrip().startswith("/"):
        if not ctx.person:
            raise InvalidInput("slash commands are not run over MCP; post a message, or use the `rooms room …` commands")
        slash.refuse_agents(ctx.project, ctx.me)
        return slash.run(ctx.project, ctx.config, ctx.room, ctx.me, message, on_event=ctx.on_event, wait=not no_wait,
                         on_wait=ctx.note)
    with coordinator.floor(ctx.project, ctx.room, wait=not no_wait, on_wait=ctx.note):
        return coordinator.run_message(ctx.project, ctx.config, ctx.room, ctx.me, message, on_event=ctx.on_event)


def _roundtable_room(ctx: Context) -> str | None:
    """`--room rt-…` (a roundtable's id) or `--room q-…` (its queue item's): the room it wrote into."""
    given = ctx.room_ or ""
    if not given.startswith(("rt-", "q-")):
        return None
    from rooms_cli.chat.rooms import room_exists
    from rooms_cli.roundtable.queue import roundtable_room
    from rooms_cli.store.ids import is_valid_name

    if is_valid_name(given) and room_exists(ctx.project, given):
        return None  # a room that happens to be named so
    return roundtable_room(ctx.project, given)


@operation("transcript", shared=IN_ROOM, params=(
    Param("last", "int", None, "Only the last N records.", ("--last", "-n"), min=1, mcp=False),
    Param("ids", "bool", False, "Show each message's id (what `msg:<id>` and replies name).", ("--ids",), view=True),
    LIMIT.replace(mcp=McpArg(default=20, ge=1, le=1000)), SINCE,
), mcp=Mcp("transcript", "Read a room's transcript", envelope("messages", CHAT_MESSAGE, room=STR), read_only=True, quick=True,
           description="The latest records of a room's transcript (at most `limit`, oldest first); with `since`, the "
                       "records after that message id instead (the first `limit` of them)."))
def transcript(ctx: Context, last: int | None, limit: int | None, since: str | None) -> Any:
    """Print a room's messages (every record with --json); `--room` also takes a roundtable's id (rt-…).

    Example: rooms transcript --room sync --last 20 --json
    """
    from rooms_cli.chat.rooms import load_room
    from rooms_cli.chat.transcript import read_transcript, tail
    from rooms_cli.core.jsonable import to_jsonable

    room = _roundtable_room(ctx) or ctx.room
    load_room(ctx.project, room)
    if limit is None:  # the command line: every record, or the last N
        return tail(ctx.project, room, last) if last else read_transcript(ctx.project, room)
    if since is None:  # the latest `limit`, and whether there are earlier ones
        records = to_jsonable(tail(ctx.project, room, limit + 1))
        shown = records[-limit:]
        return {"room": room, "messages": shown, "count": len(shown), "remaining": 0, "next_cursor": None,
                "earlier": len(records) > limit}
    return listed("messages", to_jsonable(read_transcript(ctx.project, room)), limit, since, room=room)


@operation("room", "create", shared=DIR_JSON, params=(
    Param("room_id", help="Room id.", mcp=McpArg(name="room")),
    Param("agent", "strs", None, "An agent to join (repeat). Default: every non-idle agent.", ("--agent", "-a"), complete="agents",
          mcp=McpArg(name="agents", help="Agents to join (default: every non-idle agent).")),
), mcp=Mcp("room_create", "Create a room", record({"id": STR, "roster": {"type": "array", "items": STR}}), quick=True,
           description="Create a live chat room with these agents on its roster; chat posts to it with room=<id>."))
def room_create(ctx: Context, room_id: str, agent: list[str] | None) -> RoomState:
    """Create a live room.

    Example: rooms room create architecture-sync --agent architect --agent researcher
    """
    from rooms_cli.chat.rooms import create_room

    return create_room(ctx.project, room_id, agent or None)


@operation("room", "list", shared=DIR_JSON, params=(
    Param("all_", "bool", False, "Include dropped and halted rooms.", ("--all",), mcp=McpArg(name="all")),
    LIMIT, SINCE,
), mcp=Mcp("room_list", "List rooms", envelope("rooms", record({"id": STR})), read_only=True, quick=True,
           description="The live rooms (with all: stopped ones too)."))
def room_list(ctx: Context, all_: bool, limit: int | None, since: str | None) -> Any:
    """List live rooms (= /rooms).

    Example: rooms room list --json
    """
    from rooms_cli.chat.membership import live_rooms

    return listed("rooms", live_rooms(ctx.project, include_stopped=all_), limit, since)


@operation("room", "show", shared=DIR_JSON, params=(
    Param("room_id", default=None, help="Room id (default: the current room).", complete="rooms",
          mcp=McpArg(name="room", help=ROOM_MCP_HELP)),
), mcp=Mcp("room_show", "Show a room", record({"id": STR, "roster": {"type": "array", "items": {"type": "object"}}}),
           read_only=True, quick=True, description="A room's roster, budget, mutes and queued mentions."))
def room_show(ctx: Context, room_id: str | None) -> dict[str, Any]:
    """Roster, budget, mutes and queued mentions of a room (= /list).

    Example: rooms room show architecture-sync
    """
    from rooms_cli.chat.membership import show
    from rooms_cli.store.ids import validate_name

    return show(ctx.project, ctx.config, validate_name(room_id, "room id") if room_id is not None else ctx.room)


@operation("room", "invite", shared=AS_ROOM, params=(AGENT,), mcp=Mcp(
    "room_invite", "Invite an agent to a room", ROSTER, idempotent=True, quick=True,
    description="Add an agent to a room's roster, so it answers there when addressed."))
def room_invite(ctx: Context, agent: str) -> dict[str, Any]:
    """Add an agent to the room's roster (= /invite).

    Example: rooms room invite judge
    """
    from rooms_cli.chat import membership, slash

    return membership.invite(ctx.project, ctx.room, slash.agent_id(ctx.project, agent), ctx.me)


@operation("room", "kick", shared=AS_ROOM, params=(AGENT,), mcp=Mcp(
    "room_kick", "Remove an agent from a room", ROSTER, destructive=True, quick=True,
    description="Remove an agent from a room's roster (its session in the room is deleted)."))
def room_kick(ctx: Context, agent: str) -> dict[str, Any]:
    """Remove an agent and delete its session in this room (= /kick).

    Example: rooms room kick hustler
    """
    from rooms_cli.chat import membership, slash

    return membership.kick(ctx.project, ctx.room, slash.agent_id(ctx.project, agent), ctx.me)


OPERATIONS = (chat, transcript, room_create, room_list, room_show, room_invite, room_kick)
