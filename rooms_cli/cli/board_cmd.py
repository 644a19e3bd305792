"""`rooms board` and `rooms task …`: lanes of tasks claimed under fenced leases (see docs/board.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from rooms_cli.cli.dispatch import declared_command
from rooms_cli.cli.help import GROUPS
from rooms_cli.cli.options import commands
from rooms_cli.cli.output import task_line
from rooms_cli.cli.shared import Run, shared
from rooms_cli.core.text import count
from rooms_cli.operations import board as ops

task_app = commands(GROUPS["task"])

IdArg = Annotated[str, typer.Argument(help="Task id (any unique prefix, like git).")]


board_cmd = declared_command(ops.board)


add_cmd = task_app.command("add")(declared_command(ops.task_add))
task_app.command("create", help="Alias of `rooms task add`.\n\nExample: rooms task create 'Fix login' --lane dev --done 'tests pass'")(add_cmd)


@task_app.command("import")
@shared(as_=True, room=True)
def import_cmd(
    run: Run,
    source: Annotated[str, typer.Argument(help="A file (JSONL, JSON, CSV, markdown checklist), - for stdin, or with --from backlog a Backlog.md project directory.")],
    lane: Annotated[str, typer.Option("--lane", metavar="LANE", help="The lane of rows that name none.")] = "",
    done: Annotated[str, typer.Option("--done", metavar="TEXT", help="The definition of done of rows that give none.")] = "as the title says",
    format: Annotated[str | None, typer.Option("--format", metavar="FORMAT", help="jsonl, json, csv or md (default: from the file's extension).", show_default=False)] = None,
    from_: Annotated[str | None, typer.Option("--from", metavar="KIND", help="backlog: import a Backlog.md project's tasks from the directory SOURCE.", show_default=False)] = None,
) -> None:
    """Add many tasks at once, in one process; every row is checked first (one bad row: nothing added).

    Example: rooms task import tasks.jsonl --lane dev
    """
    import sys
    from pathlib import Path

    from rooms_cli.board import importing
    from rooms_cli.core.errors import InvalidInput
    from rooms_cli.store import files

    if from_ is not None:
        if from_ != "backlog":
            raise InvalidInput(f"--from takes backlog, not {from_!r}")
        rows = importing.backlog_rows(Path(source), lane=lane, done=done)
    else:
        if source == "-":
            text, name = sys.stdin.read(), "stdin"
            fmt = importing.format_of("-", format or "jsonl")
        else:
            fmt = importing.format_of(source, format)
            try:
                text, name = files.read_text(source), source
            except (OSError, UnicodeDecodeError) as exc:
                raise InvalidInput(f"cannot read {source}: {exc}") from None
        rows = importing.parse(text, fmt, lane=lane, done=done, name=name)
    ids = importing.import_rows(run.project, run.room, rows, by=run.me)
    run.emit({"imported": len(ids), "ids": ids}, f"imported {count(len(ids), 'task')} into the board of room {run.room}")


for _op in (ops.task_list, ops.task_ready, ops.task_show, ops.task_update, ops.task_archive):
    task_app.command(_op.words[-1])(declared_command(_op))


@task_app.command("resolve")
@shared(as_=True, room=True)
def resolve_cmd(run: Run, task_id: IdArg) -> None:
    """Acknowledge a task's merge conflicts, such as a double claim after a git merge; keeps its state.

    Example: rooms task resolve t-01JD3Z
    """
    from rooms_cli.board.tasks import resolve_conflicts

    task = resolve_conflicts(run.project, run.room, task_id, by=run.me)
    run.emit(task, f"resolved the conflicts of {task_line(task.to_json())}")


for _op in (ops.task_claim, ops.task_next, ops.task_renew, ops.task_release, ops.task_done, ops.task_status, ops.task_assign,
            ops.task_accept, ops.task_reject):
    task_app.command(_op.words[-1])(declared_command(_op))
