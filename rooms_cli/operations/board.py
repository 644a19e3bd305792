"""The board's operations, each declared once (operations/declare.py): `rooms board`, `rooms task
list|show|add|update|claim|next|renew|release|done|set-status|archive|assign|accept|reject`.

The commands agents loop on (board, task next|claim|renew|release|done|list) are parsed by the fast
path (cli/fast.py) like every declared operation; docs/board.md says what each does.
"""

from __future__ import annotations

from rooms_cli.board.transitions import SETTABLE
from rooms_cli.core.shapes import CLAIM, RESULT, STR, TASK, envelope, record
from rooms_cli.operations.common import (
    AS_ROOM,
    IN_ROOM,
    LANE,
    LEASE,
    LEASE_ID,
    LIMIT,
    RESULT_REF,
    SINCE,
    STATUS,
    SYNC,
    TASK_ID,
    listed,
    named,
    nonblank,
)
from rooms_cli.operations.declare import Mcp, McpArg, Param, operation
from rooms_cli.operations.values import choice_value, count_value, finite_number

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.board.claims import Claim, Write
    from rooms_cli.board.model import Task
    from rooms_cli.project.context import Context
    from rooms_cli.store.sync.engine import Syncing

BOARD = record({"room": STR, "counts": {"type": "object"}, "lanes": {"type": "array"}, "done": {"type": "array"}})
NOTHING_CLAIMED = {"task": None, "lease": None, "lease_id": None}  # task_next's result when there is nothing to claim

# the tasks a task waits on: repeatable, and each value may list several (`--depends-on A,B`; `''` is none)
DEPENDS_ON = Param("depends_on", "strs", None, "A task it waits on (id or unique prefix; repeatable or comma-separated).",
                   ("--depends-on",), metavar="ID", show_default=False,
                   mcp=McpArg(help="Ids (or unique prefixes) of the tasks it waits on, in any lane; only done meets one."))


def sync_of(ctx: Context, sync: bool | None) -> tuple[bool, str | None]:
    """Whether a task operation syncs through the git remote, and with which: `sync` when given (--sync,
    or the tool's argument), else `sync.claims` in .rooms.yaml (read only when it mentions sync)."""
    from rooms_cli.store.sync.settings import for_task_commands

    if sync is False:
        return False, None
    return for_task_commands(lambda: ctx.config, ctx.project.root, bool(sync), None)


def syncing_of(ctx: Context, sync: bool | None) -> Syncing | None:
    """How a task operation syncs (sync_of), with every part's hooks (rooms_cli/across/sync.py); None: it does not."""
    push, remote = sync_of(ctx, sync)
    if not push:
        return None
    from rooms_cli.across.sync import syncing

    return syncing(remote)


def _under_lease(ctx: Context, task_id: str, lease_id: str | None, write: Write, sync: bool | None) -> Task:
    """A renew, release or done: here, or (sync) answered once the git remote took it (board/claims.py)."""
    from rooms_cli.board.claims import write_under_lease

    return write_under_lease(ctx.project, ctx.room, task_id, lease_id, write, ctx.me, syncing=syncing_of(ctx, sync))


def _unsynced(ctx: Context, values: dict[str, Any]) -> bool:
    """A task call is quick unless it syncs through the git remote."""
    return not sync_of(ctx, values["sync"])[0]


class Shown:
    """What `task show` returns: the task with the history of its events (its JSON: the task's, and `history`)."""

    def __init__(self, task: Task, history: list[dict[str, Any]]) -> None:
        self.task, self.history = task, history

    def to_json(self) -> dict[str, Any]:
        return {**self.task.to_json(), "history": self.history}


class Finished:
    """What `task done` returns: the task's compact record (`--json` and the tool), the task beside it."""

    def __init__(self, task: Task) -> None:
        self.task = task

    def to_json(self) -> dict[str, Any] | None:
        return self.task.record


@operation("board", shared=IN_ROOM, params=(
    LANE, STATUS,
    Param("format", default="table", help="table (default) or md: compact markdown for prompts and commits.", flags=("--format",),
          view=True),
    Param("done", "int", 10, "Show the last N finished tasks.", ("--done",), parse=count_value, mcp=False),
    Param("all_", "bool", False, "Show every finished task (reads every task's log).", ("--all",), mcp=False),
), mcp=Mcp("board", "Show the board", BOARD, read_only=True, quick=True,
           description="The board of a room: each lane's open tasks (with leases), the done view with result records, and conflicts."))
def board(ctx: Context, lane: str | None, status: str | None, done: int, all_: bool) -> dict[str, Any]:
    """Show the board: each lane's open tasks, then the last finished ones, then any conflicts.

    Example: rooms board --format md
    """
    from rooms_cli.board.render import board_view

    return board_view(ctx.project, ctx.room, lane=lane, status=status, done=done, all_=all_)


@operation("task", "list", shared=IN_ROOM, params=(
    LANE, STATUS,
    Param("holder", default=None, help="Only tasks this agent holds under a live lease.", flags=("--holder",), complete="agents",
          show_default=False, parse=named("holder"), metavar="AGENT"),
    LIMIT, SINCE,
), mcp=Mcp("task_list", "List tasks", envelope("tasks", TASK, room=STR), read_only=True, quick=True,
           description="The board's tasks (not archived) as one list in lane and order, filtered; at most `limit`."))
def task_list(ctx: Context, lane: str | None, status: str | None, holder: str | None, limit: int | None, since: str | None) -> Any:
    """List the board's tasks, one a line, in lane order (archived ones left out); --json: a list.

    Example: rooms task list --holder frontend --status doing --json
    """
    from rooms_cli.board.render import list_tasks

    return listed("tasks", list_tasks(ctx.project, ctx.room, lane=lane, status=status, holder=holder), limit, since, room=ctx.room)


@operation("task", "ready", shared=IN_ROOM, params=(LANE, LIMIT, SINCE), mcp=Mcp(
    "task_ready", "List ready tasks", envelope("tasks", TASK, room=STR), read_only=True, quick=True,
    description="The ready work across lanes: todo tasks whose dependencies are all done, in lane order; at most `limit`."))
def task_ready(ctx: Context, lane: str | None, limit: int | None, since: str | None) -> Any:
    """List the ready work across lanes: todo tasks whose dependencies are all done (what `task next`
    hands out), one a line in lane order; --json: a list.

    Example: rooms task ready --lane api --json
    """
    from rooms_cli.board.tasks import ready_tasks

    return listed("tasks", ready_tasks(ctx.project, ctx.room, lane=lane), limit, since, room=ctx.room)


@operation("task", "show", shared=IN_ROOM, params=(TASK_ID,), mcp=Mcp(
    "task_show", "Show a task", TASK, read_only=True, quick=True,
    description="One task with its definition of done, lease, record and the history of its events."))
def task_show(ctx: Context, task_id: str) -> Shown:
    """Show one task with its history of events.

    Example: rooms task show t-01JD3Z
    """
    from rooms_cli.board.tasks import load_task, task_history

    task = load_task(ctx.project, ctx.room, task_id)
    return Shown(task, task_history(ctx.project, ctx.room, task.id))


@operation("task", "add", shared=AS_ROOM, params=(
    Param("title", help="One-line title.", parse=nonblank("title")),
    Param("lane", help="The agent whose lane gets the task.", flags=("--lane",), parse=named("lane"), metavar="LANE"),
    Param("done", help="Definition of done: the one condition that means it is finished.", flags=("--done",),
          parse=nonblank("definition of done")),
    Param("detail", default="", help="Optional detail.", flags=("--detail",)),
    Param("order", "float", None, "Position in the lane (default: last).", ("--order",), parse=finite_number, metavar="NUMBER",
          show_default=False, mcp=False),
    DEPENDS_ON,
), mcp=Mcp("task_add", "Add a task", TASK, quick=True,
           description="Add a task to a lane of the board (you are recorded as its author); `depends_on`: the tasks it "
                       "waits on (task_next hands it out once they are all done)."))
def task_add(ctx: Context, title: str, lane: str, done: str, detail: str, order: float | None, depends_on: list[str] | None) -> Task:
    """Add a task to a lane (alias: create); --depends-on names the tasks it waits on (any lane).

    Example: rooms task add 'Wire the API' --lane api --done 'GET /users answers' --depends-on t-01JD3Z
    """
    from rooms_cli.board.deps import split_ids
    from rooms_cli.board.tasks import add_task

    return add_task(ctx.project, ctx.room, title, lane=lane, done=done, by=ctx.me, detail=detail, order=order,
                    depends_on=split_ids(depends_on))


@operation("task", "update", shared=AS_ROOM, params=(
    TASK_ID,
    Param("title", default=None, flags=("--title",), show_default=False, mcp=McpArg(help="New title.")),
    Param("detail", default=None, flags=("--detail",), show_default=False, mcp=McpArg(help="New detail.")),
    Param("done", default=None, help="New definition of done.", flags=("--done",), show_default=False),
    Param("order", "float", None, flags=("--order",), parse=finite_number, metavar="NUMBER", show_default=False,
          mcp=McpArg(help="New position in its lane (a number).")),
    DEPENDS_ON.replace(help="Replace the tasks it waits on (ids or unique prefixes; repeatable or comma-separated; '' clears them).",
                       mcp=McpArg(help="Replace the tasks it waits on (ids or unique prefixes); [] clears them.")),
), mcp=Mcp("task_update", "Update a task", TASK, idempotent=True, quick=True,
           description="Change a task's title, detail, definition of done, order or the tasks it waits on (what is left "
                       "out stays; depends_on replaces the list)."))
def task_update(ctx: Context, task_id: str, title: str | None, detail: str | None, done: str | None, order: float | None,
                depends_on: list[str] | None) -> Task:
    """Change a task's title, detail, definition of done or order, or the tasks it waits on.

    Example: rooms task update t-01JD3Z --order 1 --depends-on t-01JD40,t-01JD41
    """
    from rooms_cli.board.deps import split_ids
    from rooms_cli.board.tasks import update_task

    return update_task(ctx.project, ctx.room, task_id, by=ctx.me, title=title, detail=detail, done=done, order=order,
                       depends_on=None if depends_on is None else split_ids(depends_on))


@operation("task", "claim", shared=AS_ROOM, params=(
    TASK_ID, LEASE,
    LEASE_ID.replace(help="Your lease on the task (default: ROOMS_LEASE): claiming a task you hold with it returns that lease.",
                     mcp=False),
    SYNC,
), mcp=Mcp("task_claim", "Claim a task", CLAIM, quick=_unsynced,
           description="Claim a todo task under a lease (todo → doing). Exactly one claimant wins a race; a loser gets "
                       "the error already_claimed naming the holder: stop working on that task then. Keep the lease id."))
def task_claim(ctx: Context, task_id: str, lease: float | None, lease_id: str | None, sync: bool | None) -> Claim:
    """Atomically move a task todo → doing under a lease, and print the lease id.

    A held task exits 3 with already_claimed, naming the holder, its lease id and when the lease ends:
    stop then. Presenting the task's current lease (--lease-id / ROOMS_LEASE) returns it unchanged.

    Example: rooms task claim t-01JD3Z --as researcher --lease 15m
    """
    from rooms_cli.board.claims import claim_task

    return claim_task(ctx.project, ctx.room, task_id, agent=ctx.me, lease=lease, lease_id=lease_id,
                      syncing=syncing_of(ctx, sync))


@operation("task", "next", shared=AS_ROOM, params=(LEASE, SYNC), mcp=Mcp(
    "task_next", "Claim your next task", CLAIM, quick=_unsynced, empty=NOTHING_CLAIMED,
    description="Claim the first ready task (todo, every task it depends on done; by order) in your own lane; task, lease "
                "and lease_id are null when there is nothing to claim."))
def task_next(ctx: Context, lease: float | None, sync: bool | None) -> Claim | None:
    """Claim the first ready task (by order) in your lane; exit 0 with "nothing to claim" (JSON null) if none.

    Example: rooms task next --as researcher --json
    """
    from rooms_cli.board.claims import next_task

    return next_task(ctx.project, ctx.room, agent=ctx.me, lease=lease, syncing=syncing_of(ctx, sync))


@operation("task", "renew", shared=AS_ROOM, params=(TASK_ID, LEASE_ID, LEASE, SYNC), mcp=Mcp(
    "task_renew", "Renew a task lease", TASK, quick=_unsynced,
    description="Extend your lease on a task, from now, by `lease` (default 10m)."))
def task_renew(ctx: Context, task_id: str, lease_id: str | None, lease: float | None, sync: bool | None) -> Task:
    """Extend your lease (from now, by --lease, default 10m).

    Example: rooms task renew t-01JD3Z --lease-id l-01JD40… --lease 15m
    """
    from rooms_cli.board.claims import renewing

    task = _under_lease(ctx, task_id, lease_id, renewing(lease), sync)
    ctx.done(f"renewed the lease of {task.id}")
    return task


@operation("task", "release", shared=AS_ROOM, params=(TASK_ID, LEASE_ID, SYNC), mcp=Mcp(
    "task_release", "Release a task", TASK, quick=_unsynced,
    description="Give a task you hold back to its lane (doing → todo); your lease ends."))
def task_release(ctx: Context, task_id: str, lease_id: str | None, sync: bool | None) -> Task:
    """Give the task back to its lane (todo); your lease ends.

    Example: rooms task release t-01JD3Z --lease-id l-01JD40…
    """
    from rooms_cli.board.claims import releasing

    task = _under_lease(ctx, task_id, lease_id, releasing(), sync)
    ctx.done(f"released {task.id}")
    return task


@operation("task", "done", shared=AS_ROOM, params=(
    TASK_ID,
    Param("summary", help="One line: what happened.", flags=("--summary",), parse=nonblank("summary")),
    Param("artifact", "strs", None, "file:<path>, msg:, task:, inbox:, group: or lesson:<id> (as rooms search prints it); repeatable.", ("--artifact",), show_default=False,
          mcp=McpArg(name="artifacts", help="References: file:<path>, msg:, task:, inbox:, group: or lesson:<id> (a search hit's ref).")),
    Param("next_", default=None, help="Optional one line: what should happen next.", flags=("--next",), show_default=False,
          mcp=McpArg(name="next_step")),
    RESULT_REF, LEASE_ID, SYNC,
), mcp=Mcp("task_done", "Finish a task", RESULT, quick=_unsynced,
           description="Finish a task you hold (doing → done) with a compact result record; returns the record."))
def task_done(ctx: Context, task_id: str, summary: str, artifact: list[str] | None, next_: str | None, result_ref: str | None,
              lease_id: str | None, sync: bool | None) -> Finished:
    """Finish a task you hold: doing → done with a compact record (not a narration).

    Example: rooms task done t-01JD3Z --summary 'spec written' --artifact file:specs/auth.md --result-ref file:specs/auth.md
    """
    from rooms_cli.board.claims import finishing

    write = finishing(ctx.project, ctx.room, summary=summary, artifacts=artifact or [], next_step=next_, result_ref=result_ref)
    task = _under_lease(ctx, task_id, lease_id, write, sync)
    ctx.done(f"finished {task.id}")
    return Finished(task)


@operation("task", "set-status", shared=AS_ROOM, params=(
    TASK_ID,
    Param("status", help="todo, blocked, failed or cancelled.", parse=lambda flag: choice_value(flag, lambda: SETTABLE),
          mcp=McpArg(help="The new status.", choices=SETTABLE)),
    Param("summary", default=None, help="One line: what happened.", flags=("--summary",), show_default=False,
          mcp=McpArg(help="One line: why.")),
    RESULT_REF.replace(mcp=McpArg(help="file:<path>, msg:, task:, inbox:, group: or lesson:<id> (a search hit's ref).")),
    LEASE_ID.replace(mcp=McpArg(help="Your lease id, when you hold the task.")),
), mcp=Mcp("task_status", "Set a task's status", TASK, destructive=True, quick=True,
           description="Move a task to todo, blocked, failed or cancelled (a claimed task needs its lease id)."))
def task_status(ctx: Context, task_id: str, status: str, summary: str | None, result_ref: str | None, lease_id: str | None) -> Task:
    """Move a task to todo, blocked, failed or cancelled (a claimed task needs its lease id).

    Example: rooms task set-status t-01JD3Z blocked --summary 'waiting for API keys'
    """
    from rooms_cli.board.claims import set_status

    return set_status(ctx.project, ctx.room, task_id, status, by=ctx.me, lease_id=lease_id, summary=summary, result_ref=result_ref)


@operation("task", "archive", shared=AS_ROOM, params=(TASK_ID,), mcp=Mcp(
    "task_archive", "Archive a task", TASK, destructive=True, idempotent=True, quick=True,
    description="Archive a finished task: it leaves the board (its file stays; task_show still finds it)."))
def task_archive(ctx: Context, task_id: str) -> Task:
    """Take a task off the board (it stays in the files; `rooms task show` still finds it).

    Example: rooms task archive t-01JD3Z
    """
    from rooms_cli.board.tasks import archive_task

    return archive_task(ctx.project, ctx.room, task_id, by=ctx.me)


@operation("task", "assign", shared=AS_ROOM, params=(
    TASK_ID, Param("to", help="The agent (or person) whose lane gets the task.", flags=("--to",)),
), mcp=Mcp("task_assign", "Assign a task", TASK, quick=True,
           description="Move a task to another lane; across owners it becomes a proposal the new lane accepts or rejects."))
def task_assign(ctx: Context, task_id: str, to: str) -> Task:
    """Move a task to another lane; across owners it becomes a pending proposal until accepted.

    Example: rooms task assign t-01JD3Z --to reviewer
    """
    from rooms_cli.board.proposals import assign_task

    return assign_task(ctx.project, ctx.room, task_id, to=to, by=ctx.me)


@operation("task", "accept", shared=AS_ROOM, params=(TASK_ID,), mcp=Mcp(
    "task_accept", "Accept a proposed task", TASK, idempotent=True, quick=True,
    description="Accept a task proposed to your lane (it becomes todo there)."))
def task_accept(ctx: Context, task_id: str) -> Task:
    """Accept a pending proposal for your lane (or your agent's): the task becomes claimable there.

    Example: rooms task accept t-01JD3Z --as bob
    """
    from rooms_cli.board.proposals import answer_proposal

    return answer_proposal(ctx.project, ctx.room, task_id, by=ctx.me, accept=True)


@operation("task", "reject", shared=AS_ROOM, params=(TASK_ID,), mcp=Mcp(
    "task_reject", "Reject a proposed task", TASK, idempotent=True, quick=True,
    description="Reject a task proposed to your lane (it goes back to the lane it came from)."))
def task_reject(ctx: Context, task_id: str) -> Task:
    """Reject a pending proposal: the task goes back to the lane it came from.

    Example: rooms task reject t-01JD3Z --as bob
    """
    from rooms_cli.board.proposals import answer_proposal

    return answer_proposal(ctx.project, ctx.room, task_id, by=ctx.me, accept=False)


OPERATIONS = (board, task_list, task_ready, task_show, task_add, task_update, task_claim, task_next, task_renew, task_release, task_done,
              task_status, task_archive, task_assign, task_accept, task_reject)
