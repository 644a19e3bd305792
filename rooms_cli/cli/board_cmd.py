"""`rooms board` and `rooms task …`: lanes of tasks claimed under fenced leases (see docs/board.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from rooms_cli.cli import operations, operations_board
from rooms_cli.cli.options import annotation
from rooms_cli.cli.output import task_line
from rooms_cli.cli.shared import Run, declared_command, shared
from rooms_cli.cli.values import choice_value, finite_number

task_app = typer.Typer(
    help="Tasks of a room's board: add, claim under a lease, finish with a record.\n\n"
    "Example: rooms task add 'Write the auth spec' --lane researcher --done 'specs/auth.md exists'",
    no_args_is_help=True,
)

IdArg = Annotated[str, typer.Argument(help="Task id (any unique prefix, like git).")]
LeaseIdOpt = annotation(operations.LEASE_ID)  # the declared option (cli/operations.py), for set-status too
SummaryOpt = Annotated[str | None, typer.Option("--summary", help="One line: what happened.", show_default=False)]
RefOpt = Annotated[
    str | None,
    typer.Option("--result-ref", help="file:<path in the project> or msg:<message id>.", show_default=False),
]


board_cmd = declared_command(operations.board)


add_cmd = task_app.command("add")(declared_command(operations_board.task_add))
task_app.command("create", help="Alias of `rooms task add`.\n\nExample: rooms task create 'Fix login' --lane dev --done 'tests pass'")(add_cmd)


@task_app.command("import")
@shared(as_=True, room=True)
def import_cmd(
    run: Run,
    source: Annotated[str, typer.Argument(help="A file (JSONL, JSON, CSV, markdown checklist), - for stdin, or with --from backlog a Backlog.md project directory.")],
    lane: Annotated[str, typer.Option("--lane", help="The lane of rows that name none.")] = "",
    done: Annotated[str, typer.Option("--done", help="The definition of done of rows that give none.")] = "as the title says",
    format: Annotated[str | None, typer.Option("--format", help="jsonl, json, csv or md (default: from the file's extension).", show_default=False)] = None,
    from_: Annotated[str | None, typer.Option("--from", help="backlog: import a Backlog.md project's tasks from the directory SOURCE.", show_default=False)] = None,
) -> None:
    """Add many tasks at once, in one process; every row is checked first (one bad row: nothing added).

    Example: rooms task import tasks.jsonl --lane dev
    """
    import sys
    from pathlib import Path

    from rooms_cli.board import importing
    from rooms_cli.errors import InvalidInput
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
    run.emit({"imported": len(ids), "ids": ids}, f"imported {len(ids)} tasks into the board of room {run.room}")


task_app.command("list")(declared_command(operations.task_list))


task_app.command("show")(declared_command(operations_board.task_show))


@task_app.command("update")
@shared(as_=True, room=True)
def update_cmd(
    run: Run,
    task_id: IdArg,
    title: Annotated[str | None, typer.Option("--title", show_default=False)] = None,
    detail: Annotated[str | None, typer.Option("--detail", show_default=False)] = None,
    done: Annotated[str | None, typer.Option("--done", help="New definition of done.", show_default=False)] = None,
    order: Annotated[float | None, typer.Option("--order", parser=finite_number("--order"), metavar="NUMBER", show_default=False)] = None,
) -> None:
    """Change a task's title, detail, definition of done or order.

    Example: rooms task update t-01JD3Z --order 1 --done 'specs/auth.md reviewed'
    """
    from rooms_cli.board.tasks import update_task

    task = update_task(run.project, run.room, task_id, by=run.me, title=title, detail=detail, done=done, order=order)
    run.emit(task, f"updated {task_line(task.to_json())}")


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


def _settable() -> tuple[str, ...]:
    from rooms_cli.board.transitions import SETTABLE

    return SETTABLE


@task_app.command("set-status")
@shared(as_=True, room=True)
def set_status_cmd(
    run: Run,
    task_id: IdArg,
    status: Annotated[str, typer.Argument(parser=choice_value("STATUS", _settable), help="todo, blocked, failed or cancelled.")],
    summary: SummaryOpt = None,
    result_ref: RefOpt = None,
    lease_id: LeaseIdOpt = None,  # type: ignore[valid-type]  # the declared --lease-id, built by options.annotation
) -> None:
    """Move a task to todo, blocked, failed or cancelled (a claimed task needs its lease id).

    Example: rooms task set-status t-01JD3Z blocked --summary 'waiting for API keys'
    """
    from rooms_cli.board.claims import set_status

    task = set_status(run.project, run.room, task_id, status, by=run.me, lease_id=lease_id, summary=summary,
                      result_ref=result_ref)
    run.emit(task, f"{status}: {task_line(task.to_json())}")


for _op in (operations_board.task_assign, operations_board.task_accept, operations_board.task_reject):
    task_app.command(_op.words[-1])(declared_command(_op))
