"""The roundtable part's operations, each declared once (operations/declare.py): `rooms roundtable run|queue`,
`rooms memory list|forget`, and `roundtable_list`, the MCP tool of `rooms roundtable queue` with no FORMAT
(docs/roundtable.md)."""

from __future__ import annotations

from rooms_cli.core.shapes import STR, envelope, record
from rooms_cli.operations.common import DIR_JSON, LIMIT, SINCE, listed
from rooms_cli.operations.declare import REQUIRED, Mcp, McpArg, Param, operation
from rooms_cli.operations.values import comma_list, finite_number
from rooms_cli.roundtable.sanitize import DEFAULT_MAX_CHARS, MIN_MAX_CHARS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.context import Context
    from rooms_cli.roundtable.orchestrator import RoundtableRequest, RoundtableResult
    from rooms_cli.roundtable.queue import QueueItem

LESSON = record({"id": STR, "agent": STR, "lesson": STR}, title="lesson")
QUEUE_ITEM = record({"id": STR, "format": STR, "status": STR})

# --- the options of a roundtable (run and queue); the MCP tools take no --pace and only roundtable_run a room --------

FORMAT_MCP = McpArg(help="A format name: standup, debate, retro, … (rooms roundtable formats).")
TOPIC = Param("topic", default=None, help="What to talk about (default: what matters most this week).", flags=("--topic", "-t"))
# a comma-separated list on the command line, a list over MCP
PARTICIPANTS = Param("participants", default=None, help="Comma-separated agent ids and random:N (default: drawn in the format's range).",
                     flags=("--participants", "-p"), parse=comma_list, complete="agent_list",
                     mcp=McpArg(kind="strs", help="Agent ids and random:N (default: drawn in the format's range)."))
ROOM = Param("room", default=None, help="Write into this room (default: a new roundtable-… room).", flags=("--room", "-r"))
TURNS = Param("turns", "int", None, "Number of turns (default: drawn in the format's range).", ("--turns",), min=1, mcp=McpArg(ge=1))
MAX_CHARS = Param("max_chars", "int", DEFAULT_MAX_CHARS, "Cap on each turn, cut at a word.", ("--max-chars",), min=MIN_MAX_CHARS,
                  mcp=McpArg(ge=MIN_MAX_CHARS))
PACE = Param("pace", "float", 0.0, "Human-like gap: each pause is drawn in [S, 8S/3] seconds (the source's 3–8 s is --pace 3).",
             ("--pace",), parse=lambda flag: finite_number(flag, minimum=0), metavar="SECONDS", mcp=False)
FORCE = Param("force", "bool", False, "Allow --turns and participant counts outside the format's range.", ("--force",),
              mcp=McpArg(help="Allow turns and participant counts outside the format's range."))


def request(format: str, topic: str | None, participants: list[str] | None, room: str | None, turns: int | None,
            max_chars: int, force: bool, pace: float = 0.0) -> RoundtableRequest:
    """The roundtable asked for."""
    from rooms_cli.roundtable.orchestrator import RoundtableRequest

    return RoundtableRequest(format, topic=topic, participants=participants or None, room=room, turns=turns, max_chars=max_chars,
                             pace=pace, force=force)


@operation("roundtable", "run", shared=DIR_JSON, params=(
    Param("format", help="Format name (see `rooms roundtable formats`).", mcp=FORMAT_MCP),
    TOPIC, PARTICIPANTS, ROOM, TURNS, MAX_CHARS, PACE, FORCE,
    Param("explain", "bool", False, "Print each turn's speaker weights.", ("--explain",), view=True),
), mcp=Mcp("roundtable_run", "Run a roundtable", record({"turns": {"type": "array"}, "participants": {"type": "array"}}), long=True,
           description="Run a roundtable now among a few agents, turn by turn; returns every turn and the lessons learned."))
def roundtable_run(ctx: Context, format: str, topic: str | None, participants: list[str] | None, room: str | None, turns: int | None,
                   max_chars: int, pace: float, force: bool) -> RoundtableResult:
    """Run a roundtable now, printing each turn as it happens, then extract lessons.

    Example: rooms roundtable run debate --topic 'monorepo or not' --participants analyst,hustler
    """
    from rooms_cli.roundtable.orchestrator import run_roundtable_sync

    result = run_roundtable_sync(ctx.project, ctx.config, request(format, topic, participants, room, turns, max_chars, force, pace),
                                 on_event=ctx.on_event)
    if room is None:  # its own room is dropped once it is over
        from rooms_cli.roundtable.tick import end_own_room

        end_own_room(ctx.project, result.room)
    return result


@operation("roundtable", "queue", shared=DIR_JSON, params=(
    Param("format", default=None, help="Format to enqueue; leave out to list the queue.",
          mcp=McpArg(default=REQUIRED, help=FORMAT_MCP.help)),
    TOPIC, PARTICIPANTS, ROOM.replace(mcp=False), TURNS, MAX_CHARS, PACE, FORCE,
    LIMIT.replace(mcp=False), SINCE.replace(mcp=False),  # roundtable_list's (below)
), mcp=Mcp("roundtable_queue", "Queue a roundtable", QUEUE_ITEM,
           description="Enqueue a roundtable for the next `rooms tick` (roundtable_list shows the queue)."))
def roundtable_queue(ctx: Context, format: str | None, topic: str | None, participants: list[str] | None, room: str | None,
                     turns: int | None, max_chars: int, pace: float, force: bool, limit: int | None, since: str | None) -> Any:
    """Enqueue a roundtable for the next `rooms tick`, or list the queue.

    Example: rooms roundtable queue retro --topic 'last sprint' && rooms tick
    """
    from rooms_cli.roundtable import queue
    from rooms_cli.roundtable.formats import get_format
    from rooms_cli.roundtable.speakers import check_turns

    if format is None:
        items: list[Any] = queue.list_items(ctx.project)
        if limit is not None:  # a page of records (the tool)
            from rooms_cli.core.jsonable import to_jsonable

            items = to_jsonable(items)
        return listed("items", items, limit, since)
    if turns is not None:  # refused now, not at the next tick
        check_turns(get_format(ctx.config, format), turns, force)
    else:
        get_format(ctx.config, format)
    item: QueueItem = queue.enqueue(ctx.project, request(format, topic, participants, room, turns, max_chars, force, pace),
                                    by=ctx.me)[0]
    return item


# `rooms roundtable queue` with no FORMAT as its own MCP tool: queue's command line and body, the tool taking limit and since
roundtable_list = roundtable_queue.tool(
    Mcp("roundtable_list", "List the roundtable queue", envelope("items", QUEUE_ITEM), read_only=True, quick=True,
        description="The roundtable queue, oldest first: pending, running and finished items."),
    limit=McpArg(default=50, ge=1, le=1000), since=McpArg(),
)


@operation("memory", "list", shared=DIR_JSON, params=(
    Param("agent", default=None, help="Agent id (default: every agent with lessons).", complete="agents"),
    LIMIT, SINCE,
), mcp=Mcp("memory_list", "List lessons", envelope("lessons", LESSON), read_only=True, quick=True,
           description="The lessons agents learned in conversations, oldest first."))
def memory_list(ctx: Context, agent: str | None, limit: int | None, since: str | None) -> Any:
    """Show the lessons agents learned, oldest first.

    Example: rooms memory list analyst --json
    """
    from rooms_cli.agents.memories import agents_with_lessons, list_lessons, require_agent

    if agent:
        require_agent(ctx.project, agent)
    lessons = [r for a in ([agent] if agent else agents_with_lessons(ctx.project)) for r in list_lessons(ctx.project, a)]
    return listed("lessons", lessons, limit, since)


@operation("memory", "forget", shared=DIR_JSON, params=(
    Param("agent", help="Agent id.", complete="agents"),
    Param("ids", "strs", None, "Lesson ids (any unique prefix)."),
    Param("source", default=None, help="Forget every lesson from this roundtable id.", flags=("--source",)),
    Param("all_", "bool", False, "Forget every lesson of the agent.", ("--all",), mcp=McpArg(name="all")),
), mcp=Mcp("memory_forget", "Forget lessons", record({"agent": STR, "removed": {"type": "array", "items": LESSON}}),
           destructive=True, idempotent=True, quick=True, description="Remove lessons so they stop reaching the agent's prompts."))
def memory_forget(ctx: Context, agent: str, ids: list[str] | None, source: str | None, all_: bool) -> dict[str, Any]:
    """Remove lessons so they stop reaching the agent's prompts.

    Example: rooms memory forget analyst l-01JD3Z
    """
    from rooms_cli.agents.memories import forget

    return {"agent": agent, "removed": forget(ctx.project, agent, ids or [], source=source, everything=all_)}


OPERATIONS = (roundtable_run, roundtable_queue, roundtable_list, memory_list, memory_forget)
