"""`rooms group …`: broadcast one four-field prompt to a group and gather the replies."""

from __future__ import annotations

from typing import Annotated

import typer

from rooms_cli.cli.dispatch import declared_command
from rooms_cli.cli.help import GROUPS
from rooms_cli.cli.options import commands
from rooms_cli.cli.shared import Run, shared
from rooms_cli.operations import groups as ops

group_app = commands(GROUPS["group"])

group_app.command("spawn")(declared_command(ops.group_spawn))
group_app.command("spawn-mixed")(declared_command(ops.group_spawn_mixed))
group_app.command("broadcast")(declared_command(ops.group_broadcast))
group_app.command("wait")(declared_command(ops.group_wait))
group_app.command("reply")(declared_command(ops.group_reply))
group_app.command("cancel")(declared_command(ops.group_cancel))
group_app.command("status")(declared_command(ops.group_status))
group_app.command("list")(declared_command(ops.group_list))
group_app.command("dissolve")(declared_command(ops.group_dissolve))


group_app.command("rename")(declared_command(ops.group_rename))


@group_app.command("move-member")
@shared()
def move_member_cmd(run: Run, handle: Annotated[str, typer.Argument(help="Member handle.")],
                    src: Annotated[str, typer.Option("--from", metavar="GROUP", help="Group it is in.")],
                    dst: Annotated[str, typer.Option("--to", metavar="GROUP", help="Group to move it to (created if new).")]) -> None:
    """Move a member from one group to another.

    Example: rooms group move-member sec --from rev --to security
    """
    from rooms_cli.groups import roster

    member = roster.move_member(run.project, handle, src, dst)
    run.emit({"handle": member.handle, "profile": member.profile, "from": src, "to": dst}, f"{handle}: {src} → {dst}")


group_app.command("ask")(declared_command(ops.group_ask))
