"""`rooms board` and `rooms task …`: lanes of tasks claimed under fenced leases (see docs/board.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from rooms_cli.cli.output import task_line
from rooms_cli.cli.shared import Run, declared_command, shared
from rooms_cli.core.text import count
from rooms_cli.operations import board as operations_board
from rooms_cli.operations import hot as operations

task_app = typer.Typer(
    help="Tasks of a room's board: add, claim under a lease, finish with a record.\n\n"
    "Example: rooms task add 'Write the auth spec' --lane researcher --done 'specs/auth.md exists'",
    no_args_is_help=True,
)

IdArg = Annotated[str, typer.Argument(help="Task id (any unique prefix, like git).")]


board_cmd = declared_command(operations.board)


add_cmd = task_app.command("add")(declared_command(operations_board.task_add))
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


task_app.command("list")(declared_command(operations.task_list))
task_app.command("ready")(declared_command(operations.task_ready))


task_app.command("show")(declared_command(operations_board.task_show))


task_app.command("update")(declared_command(operations_board.task_update))
task_app.command("archive")(declared_command(operations_board.task_archive))


@task_app.command("resolve")
@shared(as_=True, room=True)
def resolve_cmd(run: Run, task_id: IdArg) -> None:
    """Acknowledge a task's merge conflicts, such as a double claim after a git merge; keeps its state.

    Example: rooms task resolve t-01JD3Z
    """
    from rooms_cli.board.tasks import resolve_conflicts

    task = resolve_conflicts(run.project, run.room, task_id, by=run.me)
    run.emit(task, f"resolved the conflicts of {task_line(task.to_json())}")


for _op in (operations.task_claim, operations.task_next, operations.task_renew, operations.task_release, operations.task_done):
    task_app.command(_op.words[-1])(declared_command(_op))


task_app.command("set-status")(declared_command(operations_board.task_status))
for _op in (operations_board.task_assign, operations_board.task_accept, operations_board.task_reject):
    task_app.command(_op.words[-1])(declared_command(_op))
