"""What `rooms mcp` offers besides tools: resources to read and prompts to start from.

Resources (reading one changes nothing: an inbox is peeked, never marked read):

    rooms://board             the board of the server's room, as markdown
    rooms://board/{room}      the board of a room
    rooms://inbox/{agent}     the agent's unread messages (at most 50, oldest first), as JSON
    rooms://room/{room}       the last 50 records of a room's transcript, one `speaker: text` line each

Prompts: `join_room` (announce yourself, read the room, answer what waits) and `work_the_board`
(claim, work, renew, finish — the board's loop), each with an optional `room`.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from rooms_cli.mcp_server.tools import DEFAULT_LIMIT, Session

RESOURCE_NOT_FOUND = -32002  # MCP's code for a resource that does not exist
TEMPLATES = {
    "rooms://board/{room}": ("board of a room", "The tasks of a room's board by lane, as markdown.", "text/markdown"),
    "rooms://inbox/{agent}": ("unread messages", "An agent's unread messages (at most 50), JSON; reading marks nothing read.",
                              "application/json"),
    "rooms://room/{room}": ("transcript tail", "The last 50 records of a room's transcript, one line each.", "text/plain"),
}


def list_resources(session: Session) -> list[types.Resource]:
    return [
        types.Resource(uri="rooms://board", name="board", title=f"board of {session.default_room}", mime_type="text/markdown",
                       description=f"The board of room {session.default_room} (the server's room), as markdown."),
        types.Resource(uri=f"rooms://inbox/{session.me}", name="inbox", title=f"unread messages of {session.me}",
                       mime_type="application/json", description="Your unread messages; reading marks nothing read."),
        types.Resource(uri=f"rooms://room/{session.default_room}", name="transcript", mime_type="text/plain",
                       title=f"transcript of {session.default_room}", description="The last 50 records of the room."),
    ]


def list_templates() -> list[types.ResourceTemplate]:
    return [types.ResourceTemplate(uri_template=uri, name=name, description=description, mime_type=mime)
            for uri, (name, description, mime) in TEMPLATES.items()]


def read_resource(session: Session, uri: str) -> tuple[str, str]:
    """(mime type, text) of `uri`; an unknown one is MCPError RESOURCE_NOT_FOUND naming the known forms."""
    from rooms_cli.store.ids import validate_name

    kind, _, name = uri.removeprefix("rooms://").partition("/")
    if not uri.startswith("rooms://") or kind not in ("board", "inbox", "room") or (not name and kind != "board"):
        raise MCPError(RESOURCE_NOT_FOUND, f"no resource {uri!r}; the forms are rooms://board, "
                                           + ", ".join(TEMPLATES), {"uri": uri})
    if kind == "board":
        from rooms_cli.board.render import board_markdown
        from rooms_cli.board.tasks import require_room

        room = validate_name(name, "room id") if name else session.default_room
        require_room(session.project, room)
        return "text/markdown", board_markdown(session.project, room) or f"(room {room} has no tasks)"
    if kind == "inbox":
        from rooms_cli.messaging.unread import open_unread

        view = open_unread(session.project, validate_name(name, "agent"), peek=True, limit=DEFAULT_LIMIT)
        return "application/json", json.dumps(view.to_json(), ensure_ascii=False)
    from rooms_cli.chat.rooms import load_room
    from rooms_cli.chat.transcript import tail

    room = validate_name(name, "room id")
    load_room(session.project, room)
    return "text/plain", "\n".join(f"{m.speaker}: {m.text}" for m in tail(session.project, room, DEFAULT_LIMIT))


PROMPTS: dict[str, tuple[str, str]] = {
    "join_room": ("Join a room",
                  "Start a session in rooms: see who is here, announce yourself, catch up on a room and answer what waits."),
    "work_the_board": ("Work the board",
                       "Take tasks from your lane of the board one at a time: claim, work, renew, finish with a record."),
}


def list_prompts() -> list[types.Prompt]:
    room = types.PromptArgument(name="room", description="Room id (default: the server's room).", required=False)
    return [types.Prompt(name=name, title=title, description=description, arguments=[room])
            for name, (title, description) in PROMPTS.items()]


def get_prompt(session: Session, name: str, arguments: dict[str, Any] | None) -> types.GetPromptResult:
    """The prompt `name` for this session; an unknown prompt or argument is invalid params."""
    from rooms_cli.store.ids import validate_name

    if name not in PROMPTS:
        raise MCPError(types.INVALID_PARAMS, f"no prompt {name!r}; prompts/list names them ({', '.join(PROMPTS)})")
    extra = sorted(set(arguments or {}) - {"room"})
    if extra:
        raise MCPError(types.INVALID_PARAMS, f"{name} has no argument {extra[0]!r}; it takes room")
    given = (arguments or {}).get("room")
    room = validate_name(given, "room id") if given else session.default_room
    me = session.me
    if name == "join_room":
        text = (f"You are {me}, working with other agents through rooms (project {session.project.root}). "
                "1. Call attention: who else is here, their status, and the messages waiting for you. "
                f"2. Call status_set with one line saying what you are working on, and send a short message (no `to`: "
                f"everyone) announcing yourself. 3. Read the room: transcript with room={room!r} (or the resource "
                f"rooms://room/{room}). 4. Answer what waits with reply (n = the message's number); post to the room "
                f"with chat. Before editing files, reserve_files the paths; release_files when done. "
                "Call inbox (unread by default) between steps, and wait before you finish if you spawned helpers.")
    else:
        text = (f"You are {me}. Work the board of room {room!r}, one task at a time: "
                f"1. task_next with room={room!r} claims the first todo task of your lane (task null: nothing to do, stop). "
                "Keep its lease_id. 2. Do the work the task's definition_of_done asks for; reserve_files the paths you "
                "will edit. 3. If it takes long, task_renew before the lease expires. 4. task_done with a one-line "
                "summary (artifacts: file:<path>, or a search hit's ref; next_step: what should follow), or task_status blocked "
                "with a reason. An already_claimed or lease error means someone else has it: move on to task_next. "
                "Then release_files and repeat.")
    return types.GetPromptResult(description=PROMPTS[name][1],
                                 messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))])
