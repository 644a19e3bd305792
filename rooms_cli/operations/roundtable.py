"""The roundtable part's operations declared once (operations/declare.py): `rooms roundtable run|queue`, `rooms memory list|forget`,
and `roundtable_list`, the MCP tool of `rooms roundtable queue` with no FORMAT.

As in operations/board.py, each declaration gives the typer command (roundtable_cmd.py) and the MCP
tool's input schema (mcp_server/tools.py); typer parses them (not on the fast path: cli/fast.py).
"""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.shared import Run
from rooms_cli.core.shapes import STR, envelope, record
from rooms_cli.core.text import count
from rooms_cli.operations.declare import REQUIRED, Mcp, McpArg, Param, operation
from rooms_cli.operations.hot import LIMIT, SINCE
from rooms_cli.operations.values import finite_number
from rooms_cli.roundtable.sanitize import DEFAULT_MAX_CHARS, MIN_MAX_CHARS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.roundtable.orchestrator import RoundtableRequest

LESSON = record({"id": STR, "agent": STR, "lesson": STR}, title="lesson")
QUEUE_ITEM = record({"id": STR, "format": STR, "status": STR})

# --- the options of a roundtable (run and queue); the MCP tools take no --pace and only roundtable_run a room --------

FORMAT_MCP = McpArg(help="A format name: standup, debate, retro, … (rooms roundtable formats).")
TOPIC = Param("topic", default=None, help="What to talk about (default: what matters most this week).", flags=("--topic", "-t"))
# a comma-separated list on the command line, a list over MCP
PARTICIPANTS = Param("participants", default=None, help="Comma-separated agent ids and random:N (default: drawn in the format's range).",
                     flags=("--participants", "-p"), complete="agent_list",
                     mcp=McpArg(kind="strs", help="Agent ids and random:N (default: drawn in the format's range)."))
ROOM = Param("room", default=None, help="Write into this room (default: a new roundtable-… room).", flags=("--room", "-r"))
TURNS = Param("turns", "int", None, "Number of turns (default: drawn in the format's range).", ("--turns",), min=1, mcp=McpArg(ge=1))
MAX_CHARS = Param("max_chars", "int", DEFAULT_MAX_CHARS, "Cap on each turn, cut at a word.", ("--max-chars",), min=MIN_MAX_CHARS,
                  mcp=McpArg(ge=MIN_MAX_CHARS))
PACE = Param("pace", "float", 0.0, "Human-like gap: each pause is drawn in [S, 8S/3] seconds (the source's 3–8 s is --pace 3).",
             ("--pace",), parse=lambda flag: finite_number(flag, minimum=0), metavar="SECONDS", mcp=False)
FORCE = Param("force", "bool", False, "Allow --turns and participant counts outside the format's range.", ("--force",),
              mcp=McpArg(help="Allow turns and participant counts outside the format's range."))


def request(format: str, topic: str | None, participants: str | list[str] | None, room: str | None, turns: int | None,
            max_chars: int, force: bool, pace: float = 0.0) -> RoundtableRequest:
    """The roundtable asked for, by the command line (participants comma-separated) or an MCP tool (a list)."""
    from rooms_cli.roundtable.orchestrator import RoundtableRequest

    if isinstance(participants, str):
        participants = [p.strip() for p in participants.split(",") if p.strip()] if participants else None
    return RoundtableRequest(format, topic=topic, participants=participants, room=room, turns=turns, max_chars=max_chars, pace=pace,
                             force=force)


@operation("roundtable", "run", shared=("dir", "json_"), params=(
    Param("format", help="Format name (see `rooms roundtable formats`).", mcp=FORMAT_MCP),
    TOPIC, PARTICIPANTS, ROOM, TURNS, MAX_CHARS, PACE, FORCE,
    Param("explain", "bool", False, "Print each turn's speaker weights.", ("--explain",), mcp=False),
), mcp=Mcp("roundtable_run", "Run a roundtable", record({"turns": {"type": "array"}, "participants": {"type": "array"}}), long=True))
def roundtable_run(run: Run, format: str, topic: str | None, participants: str | None, room: str | None, turns: int | None,
                   max_chars: int, pace: float, force: bool, explain: bool) -> None:
    """Run a roundtable now, printing each turn as it happens, then extract lessons.

    Example: rooms roundtable run debate --topic 'monorepo or not' --participants analyst,hustler
    """
    from rooms_cli.roundtable.orchestrator import run_roundtable_sync

    def show(kind: str, data: dict[str, Any]) -> None:
        if run.json:
            return
        if kind == "start":
            output.say(f"{data['format']} · {data['topic']} · {', '.join(data['participants'])} · "
                       f"{count(data['planned_turns'], 'turn')} · room {data['room']}", style="bold")
        elif kind in ("turn", "skip"):
            if explain and "opens" in data:
                output.say(f"   opens: the format's rule ({data['opens']})", style="dim")
            elif explain:
                output.say("   weights: " + "  ".join(f"{a} {w:.2f}" for a, w in data["weights"].items()), style="dim")
            said = data["text"] if kind == "turn" else "(nothing usable twice: turn skipped)"
            output.say(f"{data['turn']:>2} {data['speaker']}: {said}")
        elif kind == "lessons":
            learned = sum(len(v) for v in data["lessons"].values())
            if learned:
                output.say(f"learned {count(learned, 'lesson')} (rooms memory list)", style="dim")
            for who, why in data.get("problems", {}).items():
                output.say(f"no lessons learned: {why}" if who == "*" else f"   {who}: {why}", style="dim")

    result = run_roundtable_sync(run.project, run.config, request(format, topic, participants, room, turns, max_chars, force, pace),
                                 on_event=show)
    if room is None:
        from rooms_cli.roundtable.tick import end_own_room

        end_own_room(run.project, result.room)
    if run.json:
        output.print_json(result)


@operation("roundtable", "queue", shared=("dir", "json_"), params=(
    Param("format", default=None, help="Format to enqueue; leave out to list the queue.",
          mcp=McpArg(default=REQUIRED, help=FORMAT_MCP.help)),
    TOPIC, PARTICIPANTS, ROOM.replace(mcp=False), TURNS, MAX_CHARS, PACE, FORCE,
    LIMIT.replace(mcp=False), SINCE.replace(mcp=False),  # roundtable_list's (below)
), mcp=Mcp("roundtable_queue", "Queue a roundtable", QUEUE_ITEM))
def roundtable_queue(run: Run, format: str | None, topic: str | None, participants: str | None, room: str | None, turns: int | None,
                     max_chars: int, pace: float, force: bool) -> None:
    """Enqueue a roundtable for the next `rooms tick`, or list the queue.

    Example: rooms roundtable queue retro --topic 'last sprint' && rooms tick
    """
    from rooms_cli.roundtable import queue
    from rooms_cli.roundtable.formats import get_format
    from rooms_cli.roundtable.speakers import check_turns

    if format is None:
        items = queue.list_items(run.project)
        if run.json:
            return output.print_json(items)
        for item in items:
            extra = item.roundtable or item.error or ""
            output.say(f"{item.id}  {item.status:<8} {item.request.format:<14} {item.enqueued}  {extra}".rstrip())
        if not items:
            output.say("The queue is empty. Add one with `rooms roundtable queue FORMAT`.")
        return None
    if turns is not None:  # refused now, not at the next tick
        check_turns(get_format(run.config, format), turns, force)
    else:
        get_format(run.config, format)
    item, _new = queue.enqueue(run.project, request(format, topic, participants, room, turns, max_chars, force, pace))
    run.emit(item, f"Queued {item.id} ({format}); `rooms tick` will run it.")


# `rooms roundtable queue` with no FORMAT as its own MCP tool: queue's command line and body, the tool taking limit and since
roundtable_list = roundtable_queue.tool(
    Mcp("roundtable_list", "List the roundtable queue", envelope("items", QUEUE_ITEM), read_only=True),
    limit=McpArg(ge=1, le=1000), since=McpArg(),
)


@operation("memory", "list", shared=("dir", "json_"), params=(
    Param("agent", default=None, help="Agent id (default: every agent with lessons).", complete="agents"),
    LIMIT, SINCE,
), mcp=Mcp("memory_list", "List lessons", envelope("lessons", LESSON), read_only=True))
def memory_list(run: Run, agent: str | None) -> None:
    """Show the lessons agents learned, oldest first.

    Example: rooms memory list analyst --json
    """
    from rooms_cli.agents.memories import agents_with_lessons, list_lessons, require_agent

    if agent:
        require_agent(run.project, agent)
    lessons = [r for a in ([agent] if agent else agents_with_lessons(run.project)) for r in list_lessons(run.project, a)]
    if run.json:
        output.print_json(lessons)
        return
    for r in lessons:
        output.say(f"{r.get('id', '')}  {r.get('agent', ''):<10} {r.get('lesson', '')}  [{r.get('source', '')}]")
    if not lessons:
        output.say("No lessons yet: they are extracted after each roundtable.")


@operation("memory", "forget", shared=("dir", "json_"), params=(
    Param("agent", help="Agent id.", complete="agents"),
    Param("ids", "strs", None, "Lesson ids (any unique prefix)."),
    Param("source", default=None, help="Forget every lesson from this roundtable id.", flags=("--source",)),
    Param("all_", "bool", False, "Forget every lesson of the agent.", ("--all",), mcp=McpArg(name="all")),
), mcp=Mcp("memory_forget", "Forget lessons", record({"agent": STR, "removed": {"type": "array", "items": LESSON}}),
           destructive=True, idempotent=True))
def memory_forget(run: Run, agent: str, ids: list[str] | None, source: str | None, all_: bool) -> None:
    """Remove lessons so they stop reaching the agent's prompts.

    Example: rooms memory forget analyst l-01JD3Z
    """
    from rooms_cli.agents.memories import forget

    removed = forget(run.project, agent, ids or [], source=source, everything=all_)
    run.emit({"agent": agent, "removed": removed}, f"Forgot {count(len(removed), 'lesson')} of {agent}.")


# every operation declared here: typer registers them (roundtable_cmd.py), MCP serves their tools (tools.py)
OPERATIONS = (roundtable_run, roundtable_queue, roundtable_list, memory_list, memory_forget)
