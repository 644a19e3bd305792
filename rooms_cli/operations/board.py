"""The board's other operations, each declared once (operations/declare.py): `rooms task show|add|update|set-status|archive|assign|accept|reject`.

Like operations/hot.py, each declaration gives the typer command (board_cmd.py) and the MCP tool's input
schema (mcp_server/tools.py). They are not in the fast path's table (cli/fast.py): no loop calls them
often enough to pay for reading this module on every command, so typer parses them.
"""

from __future__ import annotations

from rooms_cli.board.transitions import SETTABLE
from rooms_cli.cli import output
from rooms_cli.cli.shared import Run
from rooms_cli.core.shapes import TASK
from rooms_cli.operations.declare import Mcp, McpArg, Param, operation
from rooms_cli.operations.hot import AS_ROOM, LEASE_ID, RESULT_REF, TASK_ID, named, nonblank
from rooms_cli.operations.values import choice_value, finite_number

# the tasks a task waits on: repeatable, and each value may list several (`--depends-on A,B`; `''` is none)
DEPENDS_ON = Param("depends_on", "strs", None, "A task it waits on (id or unique prefix; repeatable or comma-separated).",
                   ("--depends-on",), metavar="ID", show_default=False,
                   mcp=McpArg(help="Ids (or unique prefixes) of the tasks it waits on, in any lane; only done meets one."))


@operation("task", "show", shared=("room", "dir", "json_"), params=(TASK_ID,), mcp=Mcp("task_show", "Show a task", TASK, read_only=True))
def task_show(run: Run, task_id: str) -> None:
    """Show one task with its history of events.

    Example: rooms task show t-01JD3Z
    """
    from rooms_cli.board.tasks import load_task, task_history

    task = load_task(run.project, run.room, task_id)
    history = task_history(run.project, run.room, task.id)
    if run.json:
        output.print_json({**task.to_json(), "history": history})
        return
    data = task.to_json()
    output.say(output.task_line(data), style="bold")
    output.say(f"  done when: {task.definition_of_done}")
    if task.blocked_by:
        from rooms_cli.board.deps import blockers_of, waiting_text

        output.say(f"  {waiting_text(blockers_of(run.project, run.room, task))}", style="yellow")
    elif task.depends_on:
        output.say(f"  depends on (all done): {', '.join(task.depends_on)}")
    if task.detail:
        output.say(f"  detail: {task.detail}")
    if task.record:
        for line in output.record_lines(task.record):
            output.say(line)
    for conflict in task.conflicts:
        output.say(f"  CONFLICT: {conflict.message}", style="red")
    for ev in history:
        extra = {k: v for k, v in ev.items() if k not in ("at", "by", "ev")}
        output.say(f"  {ev.get('at', '')}  {ev.get('by', '')}: {ev.get('ev', '')}  {output.fields(extra)}".rstrip())


@operation("task", "add", shared=AS_ROOM, params=(
    Param("title", help="One-line title.", parse=nonblank("title")),
    Param("lane", help="The agent whose lane gets the task.", flags=("--lane",), parse=named("lane"), metavar="LANE"),
    Param("done", help="Definition of done: the one condition that means it is finished.", flags=("--done",),
          parse=nonblank("definition of done")),
    Param("detail", default="", help="Optional detail.", flags=("--detail",)),
    Param("order", "float", None, "Position in the lane (default: last).", ("--order",), parse=finite_number, metavar="NUMBER",
          show_default=False, mcp=False),
    DEPENDS_ON,
), mcp=Mcp("task_add", "Add a task", TASK))
def task_add(run: Run, title: str, lane: str, done: str, detail: str, order: float | None, depends_on: list[str] | None) -> None:
    """Add a task to a lane (alias: create); --depends-on names the tasks it waits on (any lane).

    Example: rooms task add 'Wire the API' --lane api --done 'GET /users answers' --depends-on t-01JD3Z
    """
    from rooms_cli.board.deps import split_ids
    from rooms_cli.board.tasks import add_task

    task = add_task(run.project, run.room, title, lane=lane, done=done, by=run.me, detail=detail, order=order,
                    depends_on=split_ids(depends_on))
    run.emit(task, f"added {task.id} to lane {task.lane}: {task.title}")


@operation("task", "update", shared=AS_ROOM, params=(
    TASK_ID,
    Param("title", default=None, flags=("--title",), show_default=False, mcp=McpArg(help="New title.")),
    Param("detail", default=None, flags=("--detail",), show_default=False, mcp=McpArg(help="New detail.")),
    Param("done", default=None, help="New definition of done.", flags=("--done",), show_default=False),
    Param("order", "float", None, flags=("--order",), parse=finite_number, metavar="NUMBER", show_default=False,
          mcp=McpArg(help="New position in its lane (a number).")),
    DEPENDS_ON.replace(help="Replace the tasks it waits on (ids or unique prefixes; repeatable or comma-separated; '' clears them).",
                       mcp=McpArg(help="Replace the tasks it waits on (ids or unique prefixes); [] clears them.")),
), mcp=Mcp("task_update", "Update a task", TASK, idempotent=True))
def task_update(run: Run, task_id: str, title: str | None, detail: str | None, done: str | None, order: float | None,
                depends_on: list[str] | None) -> None:
    """Change a task's title, detail, definition of done or order, or the tasks it waits on.

    Example: rooms task update t-01JD3Z --order 1 --depends-on t-01JD40,t-01JD41
    """
    from rooms_cli.board.deps import split_ids
    from rooms_cli.board.tasks import update_task

    task = update_task(run.project, run.room, task_id, by=run.me, title=title, detail=detail, done=done, order=order,
                       depends_on=None if depends_on is None else split_ids(depends_on))
    run.emit(task, f"updated {output.task_line(task.to_json())}")


@operation("task", "set-status", shared=AS_ROOM, params=(
    TASK_ID,
    Param("status", help="todo, blocked, failed or cancelled.", parse=lambda flag: choice_value(flag, lambda: SETTABLE),
          mcp=McpArg(help="The new status.", choices=SETTABLE)),
    Param("summary", default=None, help="One line: what happened.", flags=("--summary",), show_default=False,
          mcp=McpArg(help="One line: why.")),
    RESULT_REF.replace(mcp=McpArg(help="file:<path>, msg:, task:, inbox:, group: or lesson:<id> (a search hit's ref).")),
    LEASE_ID.replace(mcp=McpArg(help="Your lease id, when you hold the task.")),
), mcp=Mcp("task_status", "Set a task's status", TASK, destructive=True))
def task_status(run: Run, task_id: str, status: str, summary: str | None, result_ref: str | None, lease_id: str | None) -> None:
    """Move a task to todo, blocked, failed or cancelled (a claimed task needs its lease id).

    Example: rooms task set-status t-01JD3Z blocked --summary 'waiting for API keys'
    """
    from rooms_cli.board.claims import set_status

    task = set_status(run.project, run.room, task_id, status, by=run.me, lease_id=lease_id, summary=summary,
                      result_ref=result_ref)
    run.emit(task, f"{status}: {output.task_line(task.to_json())}")


@operation("task", "archive", shared=AS_ROOM, params=(TASK_ID,),
           mcp=Mcp("task_archive", "Archive a task", TASK, destructive=True, idempotent=True))
def task_archive(run: Run, task_id: str) -> None:
    """Take a task off the board (it stays in the files; `rooms task show` still finds it).

    Example: rooms task archive t-01JD3Z
    """
    from rooms_cli.board.tasks import archive_task

    task = archive_task(run.project, run.room, task_id, by=run.me)
    run.emit(task, f"archived {task.id}: {task.title}")


@operation("task", "assign", shared=AS_ROOM, params=(
    TASK_ID, Param("to", help="The agent (or person) whose lane gets the task.", flags=("--to",)),
), mcp=Mcp("task_assign", "Assign a task", TASK))
def task_assign(run: Run, task_id: str, to: str) -> None:
    """Move a task to another lane; across owners it becomes a pending proposal until accepted.

    Example: rooms task assign t-01JD3Z --to reviewer
    """
    from rooms_cli.board.proposals import assign_task

    task = assign_task(run.project, run.room, task_id, to=to, by=run.me)
    note = f"proposed to {to}: pending until {task.pending['owner']} accepts" if task.pending else f"assigned to {to}"
    run.emit(task, f"{task.id} {note}")


@operation("task", "accept", shared=AS_ROOM, params=(TASK_ID,), mcp=Mcp("task_accept", "Accept a proposed task", TASK, idempotent=True))
def task_accept(run: Run, task_id: str) -> None:
    """Accept a pending proposal for your lane (or your agent's): the task becomes claimable there.

    Example: rooms task accept t-01JD3Z --as bob
    """
    from rooms_cli.board.proposals import answer_proposal

    task = answer_proposal(run.project, run.room, task_id, by=run.me, accept=True)
    run.emit(task, f"accepted: {output.task_line(task.to_json())}")


@operation("task", "reject", shared=AS_ROOM, params=(TASK_ID,), mcp=Mcp("task_reject", "Reject a proposed task", TASK, idempotent=True))
def task_reject(run: Run, task_id: str) -> None:
    """Reject a pending proposal: the task goes back to the lane it came from.

    Example: rooms task reject t-01JD3Z --as bob
    """
    from rooms_cli.board.proposals import answer_proposal

    task = answer_proposal(run.project, run.room, task_id, by=run.me, accept=False)
    run.emit(task, f"rejected: {output.task_line(task.to_json())}")


# every operation declared here: typer registers them (board_cmd.py), MCP serves their tools (tools.py)
OPERATIONS = (task_show, task_add, task_update, task_status, task_archive, task_assign, task_accept, task_reject)
