"""The roundtable part's operations declared once (cli/declare.py): `rooms memory list|forget`.

As in cli/operations_board.py, each declaration gives the typer command (roundtable_cmd.py) and the MCP
tool's input schema (mcp_server/tools.py); typer parses them (not on the fast path: cli/fast.py).
"""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.declare import Mcp, McpArg, Param, operation
from rooms_cli.cli.operations import LIMIT, SINCE
from rooms_cli.cli.shared import Run
from rooms_cli.shapes import STR, envelope, record

LESSON = record({"id": STR, "agent": STR, "lesson": STR}, title="lesson")


@operation("memory", "list", shared=("dir", "json_"), params=(
    Param("agent", default=None, help="Agent id (default: every agent with lessons).", complete="agents"),
    LIMIT, SINCE,
), mcp=Mcp("memory_list", "List lessons", envelope("lessons", LESSON), read_only=True))
def memory_list(run: Run, agent: str | None) -> None:
    """Show the lessons agents learned, oldest first.

    Example: rooms memory list analyst --json
    """
    from rooms_cli.memories import agents_with_lessons, list_lessons, require_agent

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
    from rooms_cli.memories import forget

    removed = forget(run.project, agent, ids or [], source=source, everything=all_)
    run.emit({"agent": agent, "removed": removed}, f"Forgot {len(removed)} lesson{'s' if len(removed) != 1 else ''} of {agent}.")


# every operation declared here: typer registers them (roundtable_cmd.py), MCP serves their tools (tools.py)
OPERATIONS = (memory_list, memory_forget)
