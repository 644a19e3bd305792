"""What the keys of `rooms top` do: each runs the operation its CLI command runs, and returns one line.

No operation is implemented twice: a claim is the operation `task claim` (operations/board.py) as
`rooms task claim` runs it, a broadcast `group broadcast`, a posted line `chat` (slash commands included,
under the room's floor). A refusal is the operation's RoomsError, whose message is the sentence the CLI
prints; the app shows it as it is. This is the dashboard's own view of each result: one line.
"""

from __future__ import annotations

import os

from rooms_cli.core.errors import RoomsError, StorageError
from rooms_cli.operations import board, chat, groups
from rooms_cli.project.context import Context

TYPE_CHECKING = False  # typing is not imported at run time; mypy reads the block
if TYPE_CHECKING:
    from rooms_cli.search.engine import Results

SEARCH_SHOWN = 50  # hits a search in the dashboard lists (`rooms search --limit` for more)


def read_only(ctx: Context) -> bool:
    """True when `.rooms/` cannot be written (a read-only mount, or no write permission)."""
    return not os.access(ctx.project.dir, os.W_OK)


def refuse_if_read_only(ctx: Context) -> None:
    if read_only(ctx):
        raise StorageError(f"{ctx.project.dir} is read-only: rooms top shows it but cannot change it")


def _in(ctx: Context, room: str) -> Context:
    """The dashboard's context in `room` (the one on screen): its project, identity and config."""
    here = Context(ctx.project, as_=ctx.as_, room=room, config=ctx.config)
    here.person = True  # a person at the dashboard: slash commands are theirs
    return here


def claim(ctx: Context, room: str, task_id: str) -> str:
    """`rooms task claim ID` as the acting identity."""
    refuse_if_read_only(ctx)
    result = board.task_claim.call(_in(ctx, room), task_id=task_id)
    lease = result.lease
    verb = "already yours" if result.already_yours else "claimed"
    return f"{verb}: {result.task.id} ({result.task.title}) as {lease.holder} until {lease.expires_at}"


def release(ctx: Context, room: str, task_id: str) -> str:
    """`rooms task release ID`: the acting identity's lease on it ends."""
    refuse_if_read_only(ctx)
    task = board.task_release.call(_in(ctx, room), task_id=task_id)
    return f"released: {task.id} ({task.title})"


def done(ctx: Context, room: str, task_id: str, summary: str) -> str:
    """`rooms task done ID --summary S` with the acting identity's lease."""
    refuse_if_read_only(ctx)
    task = board.task_done.call(_in(ctx, room), task_id=task_id, summary=summary).task
    return f"done: {task.id} ({task.title})"


def post(ctx: Context, room: str, text: str) -> str:
    """`rooms chat TEXT` in `room`: the line, then the agents' answers, under the room's floor."""
    from rooms_cli.chat.slash import SlashResult

    if not text.strip():
        raise RoomsError("the message is empty; type something to post")
    refuse_if_read_only(ctx)
    result = chat.chat.call(_in(ctx, room), message=text)
    if isinstance(result, SlashResult):
        return f"/{result.command} done in #{result.room}"
    answered = [m.speaker for m in result.replies if m.kind == "message"]
    return f"posted to #{room}" + (f"; {', '.join(answered)} answered" if answered else "")


def create_group(ctx: Context, name: str, profiles: list[str]) -> str:
    """`rooms group spawn-mixed NAME --profiles a,b,c` (the lasso, and the new-group tab)."""
    refuse_if_read_only(ctx)
    added = groups.group_spawn_mixed.call(ctx, name=name, profiles=profiles)
    return f"{name}: + " + ", ".join(m.handle for m in added["members"])


def check_broadcast(ctx: Context, name: str) -> None:
    """Refuse before the composer opens what `rooms group broadcast` would refuse: a broadcast in flight
    (its sentence), a read-only tree."""
    from rooms_cli.tui.views import broadcast_refusal

    refuse_if_read_only(ctx)
    refusal = broadcast_refusal(ctx.project, name)
    if refusal is not None:
        raise refusal


def broadcast(ctx: Context, name: str, fields: dict[str, str]) -> str:
    """`rooms group broadcast NAME --objective … --output-format … --tool-guidance … --boundaries …`."""
    refuse_if_read_only(ctx)
    sent = groups.group_broadcast.call(ctx, name=name, **fields)
    return f"{name}: broadcast {sent['broadcast_id']} sent to {', '.join(sent['members'])}"


def dissolve(ctx: Context, name: str) -> str:
    """`rooms group dissolve NAME`."""
    refuse_if_read_only(ctx)
    info = groups.group_dissolve.call(ctx, name=name)
    return f"{name}: dissolved" + (f" (cancelled {info['cancelled_broadcast']})" if info.get("cancelled_broadcast") else "")


def rename(ctx: Context, old: str, new: str) -> str:
    """`rooms group rename OLD NEW`."""
    refuse_if_read_only(ctx)
    groups.group_rename.call(ctx, old=old, new=new)
    return f"{old} → {new}"


def search(ctx: Context, query: str, limit: int = SEARCH_SHOWN) -> Results:
    """`rooms search QUERY --limit N` over the whole project: the hits, best first. The operation's module
    (and sqlite3 with its body) is imported here, when a search runs: `rooms top` starts without it."""
    from rooms_cli.operations import search as declared

    found: declared.Found = declared.search.call(ctx, query=query, within=None, room=None, who=None, since=None, limit=limit)
    return found.results
