"""`rooms group …`: broadcast one four-field prompt to a group and gather the replies."""

from __future__ import annotations

from typing import Annotated

import typer

from rooms_cli.cli.shared import Run, declared_command, shared
from rooms_cli.operations import groups as operations_groups

group_app = typer.Typer(
    help="Groups: one prompt to many members, one reduced result.\n\nExample: rooms group ask --profiles analyst,analyst,wildcard --objective 'ship Friday? YES or NO' --reducer majority_vote",
    no_args_is_help=True,
)

group_app.command("spawn")(declared_command(operations_groups.group_spawn))
group_app.command("spawn-mixed")(declared_command(operations_groups.group_spawn_mixed))
group_app.command("broadcast")(declared_command(operations_groups.group_broadcast))
group_app.command("wait")(declared_command(operations_groups.group_wait))
group_app.command("reply")(declared_command(operations_groups.group_reply))
group_app.command("cancel")(declared_command(operations_groups.group_cancel))
group_app.command("status")(declared_command(operations_groups.group_status))
group_app.command("list")(declared_command(operations_groups.group_list))
group_app.command("dissolve")(declared_command(operations_groups.group_dissolve))


@group_app.command("rename")
@shared()
def rename_cmd(run: Run, old: Annotated[str, typer.Argument(help="Current name.")], new: Annotated[str, typer.Argument(help="New name.")]) -> None:
    """Rename a group (its history moves with it).

    Example: rooms group rename rev reviewers
    """
    from rooms_cli.groups import roster

    roster.rename(run.project, old, new)
    run.emit({"from": old, "to": new}, f"{old} → {new}")


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


group_app.command("ask")(declared_command(operations_groups.group_ask))
