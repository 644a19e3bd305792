"""How the command line shows the board's operations (operations/board.py): `rooms board`, `rooms task …`."""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.views import renders
from rooms_cli.operations import board as ops

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.board.claims import Claim
    from rooms_cli.board.model import Task
    from rooms_cli.cli.shared import Run


@renders(ops.board)
def _board(run: Run, view: dict[str, Any], values: dict[str, Any]) -> None:
    from rooms_cli.core.errors import UsageError

    if values["format"] not in ("table", "md"):
        raise UsageError(f"--format must be table or md, not {values['format']!r}")
    if run.json:
        output.print_json(view)
    elif values["format"] == "md":
        from rooms_cli.board.render import markdown_from_view

        output.say(markdown_from_view(view).rstrip() or f"The board of room {run.room} is empty.")
    else:
        output.print_board(view)


def _tasks(run: Run, tasks: list[dict[str, Any]], none: str) -> None:
    """Tasks as a JSON list (--json), else one a line; `none` when there are none."""
    if run.json:
        output.print_json(tasks)
        return
    for task in tasks:
        output.say(output.task_line(task))
    if not tasks:
        output.say(none)


@renders(ops.task_list)
def _task_list(run: Run, tasks: list[dict[str, Any]], values: dict[str, Any]) -> None:
    _tasks(run, tasks, f"No tasks match on the board of room {run.room}.")


@renders(ops.task_ready)
def _task_ready(run: Run, tasks: list[dict[str, Any]], values: dict[str, Any]) -> None:
    lane = values["lane"]
    _tasks(run, tasks, f"Nothing is ready on the board of room {run.room}" + (f" in lane {lane}." if lane else "."))


@renders(ops.task_show)
def _task_show(run: Run, shown: ops.Shown, values: dict[str, Any]) -> None:
    if run.json:
        output.print_json(shown)
        return
    task = shown.task
    output.say(output.task_line(task.to_json()), style="bold")
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
    for ev in shown.history:
        extra = {k: v for k, v in ev.items() if k not in ("at", "by", "ev")}
        output.say(f"  {ev.get('at', '')}  {ev.get('by', '')}: {ev.get('ev', '')}  {output.fields(extra)}".rstrip())


@renders(ops.task_claim, ops.task_next)
def _claimed(run: Run, claim: Claim | None, values: dict[str, Any]) -> None:
    if claim is None:
        run.emit(None, lambda: output.say(_nothing_to_claim(run)))
        return
    output.done(output.claim_done(claim))  # should printing fail, the error says the claim was made (cli/guard.py)
    run.emit(claim, output.claim_text(claim))


def _nothing_to_claim(run: Run) -> str:
    """`nothing to claim in lane L of room R`, and how many of the lane's tasks wait on others."""
    from rooms_cli.board.tasks import waiting_in_lane

    text = f"nothing to claim in lane {run.me} of room {run.room}"
    waiting = waiting_in_lane(run.project, run.room, run.me)
    return text + (f" ({waiting} waiting on other tasks: rooms board --lane {run.me})" if waiting else "")


def _task_said(how: str) -> Any:
    """A renderer printing `how: <the task's line>` (or the task as JSON)."""
    def render(run: Run, task: Task, values: dict[str, Any]) -> None:
        run.emit(task, f"{how.format(**values)}: {output.task_line(task.to_json())}")

    return render


renders(ops.task_renew)(_task_said("renewed"))
renders(ops.task_release)(_task_said("released"))
renders(ops.task_update)(_task_said("updated"))
renders(ops.task_status)(_task_said("{status}"))
renders(ops.task_accept)(_task_said("accepted"))
renders(ops.task_reject)(_task_said("rejected"))


@renders(ops.task_done)
def _done(run: Run, finished: ops.Finished, values: dict[str, Any]) -> None:
    task = finished.task
    run.emit(finished, "\n".join([f"done: {task.id} {task.title}", *output.record_lines(task.record or {})]))


@renders(ops.task_add)
def _added(run: Run, task: Task, values: dict[str, Any]) -> None:
    run.emit(task, f"added {task.id} to lane {task.lane}: {task.title}")


@renders(ops.task_archive)
def _archived(run: Run, task: Task, values: dict[str, Any]) -> None:
    run.emit(task, f"archived {task.id}: {task.title}")


@renders(ops.task_assign)
def _assigned(run: Run, task: Task, values: dict[str, Any]) -> None:
    to = values["to"]
    note = f"proposed to {to}: pending until {task.pending['owner']} accepts" if task.pending else f"assigned to {to}"
    run.emit(task, f"{task.id} {note}")
