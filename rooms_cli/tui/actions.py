"""What the keys of `rooms top` do: each calls the function its CLI command calls, and returns one line.

No operation is implemented twice: a claim is `board.claims.claim_task` as in `rooms task claim`, a
broadcast `groups.broadcasts.send_broadcast` as in `rooms group broadcast`, a posted line runs the
turn `rooms chat` runs (slash commands included, under the room's floor). A refusal is the part's
RoomsError, whose message is the sentence the CLI prints; the app shows it as it is.
"""

from __future__ import annotations

import os

from rooms_cli.core.errors import RoomsError, StorageError
from rooms_cli.project.context import Context


def read_only(ctx: Context) -> bool:
    """True when `.rooms/` cannot be written (a read-only mount, or no write permission)."""
    return not os.access(ctx.project.dir, os.W_OK)


def refuse_if_read_only(ctx: Context) -> None:
    if read_only(ctx):
        raise StorageError(f"{ctx.project.dir} is read-only: rooms top shows it but cannot change it")


def claim(ctx: Context, room: str, task_id: str) -> str:
    """`rooms task claim ID` as the acting identity."""
    from rooms_cli.board.claims import claim_task

    refuse_if_read_only(ctx)
    result = claim_task(ctx.project, room, task_id, agent=ctx.me)
    lease = result.lease
    verb = "already yours" if result.already_yours else "claimed"
    return f"{verb}: {result.task.id} ({result.task.title}) as {lease.holder} until {lease.expires_at}"


def release(ctx: Context, room: str, task_id: str) -> str:
    """`rooms task release ID`: the acting identity's lease on it ends."""
    from rooms_cli.board.claims import release_task

    refuse_if_read_only(ctx)
    task = release_task(ctx.project, room, task_id, None, holder=ctx.me)
    return f"released: {task.id} ({task.title})"


def done(ctx: Context, room: str, task_id: str, summary: str) -> str:
    """`rooms task done ID --summary S` with the acting identity's lease."""
    from rooms_cli.board.claims import finish_task

    refuse_if_read_only(ctx)
    task = finish_task(ctx.project, room, task_id, None, summary=summary, holder=ctx.me)
    return f"done: {task.id} ({task.title})"


def post(ctx: Context, room: str, text: str) -> str:
    """`rooms chat TEXT` in `room`: the line, then the agents' answers, under the room's floor."""
    from rooms_cli.chat import coordinator, slash

    if not text.strip():
        raise RoomsError("the message is empty; type something to post")
    refuse_if_read_only(ctx)
    if text.lstrip().startswith("/"):
        slash.refuse_agents(ctx.project, ctx.me)
        result = slash.run(ctx.project, ctx.config, room, ctx.me, text)
        return f"/{result.command} done in #{result.room}"
    with coordinator.floor(ctx.project, room):
        turn = coordinator.run_message(ctx.project, ctx.config, room, ctx.me, text)
    answered = [m.speaker for m in turn.replies if m.kind == "message"]
    return f"posted to #{room}" + (f"; {', '.join(answered)} answered" if answered else "")


def create_group(ctx: Context, name: str, profiles: list[str]) -> str:
    """`rooms group spawn-mixed NAME --profiles a,b,c` (the lasso, and the new-group tab)."""
    from rooms_cli.groups import roster

    refuse_if_read_only(ctx)
    members = roster.spawn(ctx.project, name, profiles)
    return f"{name}: + " + ", ".join(m.handle for m in members)


def check_broadcast(ctx: Context, name: str) -> None:
    """Refuse before the composer opens what `rooms group broadcast` would refuse: a broadcast in flight
    (its sentence), a read-only tree."""
    from rooms_cli.groups import broadcasts, log

    refuse_if_read_only(ctx)
    group = log.load(ctx.project, name, head=True)
    if group.in_flight:
        raise broadcasts.in_flight_error(name, group.in_flight)


def broadcast(ctx: Context, name: str, fields: dict[str, str]) -> str:
    """`rooms group broadcast NAME --objective … --output-format … --tool-guidance … --boundaries …`."""
    from rooms_cli.groups import broadcasts

    refuse_if_read_only(ctx)
    b = broadcasts.send_broadcast(ctx.project, ctx.config, name, fields, ctx.me)
    return f"{name}: broadcast {b.id} sent to {', '.join(m.handle for m in b.members)}"


def dissolve(ctx: Context, name: str) -> str:
    """`rooms group dissolve NAME`."""
    from rooms_cli.groups import roster

    refuse_if_read_only(ctx)
    info = roster.dissolve(ctx.project, ctx.config, name, ctx.me)
    return f"{name}: dissolved" + (f" (cancelled {info['cancelled_broadcast']})" if info.get("cancelled_broadcast") else "")


def rename(ctx: Context, old: str, new: str) -> str:
    """`rooms group rename OLD NEW`."""
    from rooms_cli.groups import roster

    refuse_if_read_only(ctx)
    roster.rename(ctx.project, old, new)
    return f"{old} → {new}"
