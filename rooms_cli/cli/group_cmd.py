"""`rooms group …`: broadcast one four-field prompt to a group and gather the replies."""

from __future__ import annotations

from typing import Annotated

import typer

from rooms_cli.cli import operations_groups, output
from rooms_cli.cli.options import complete_agents, complete_groups
from rooms_cli.cli.shared import Run, declared_command, shared
from rooms_cli.cli.values import duration_value

group_app = typer.Typer(
    help="Groups: one prompt to many members, one reduced result.\n\nExample: rooms group ask --profiles analyst,analyst,wildcard --objective 'ship Friday? YES or NO' --reducer majority_vote",
    no_args_is_help=True,
)

NameArg = Annotated[str, typer.Argument(autocompletion=complete_groups, help="Group name.")]
TimeoutOpt = Annotated[float | None, typer.Option("--timeout", parser=duration_value("--timeout"), metavar="DURATION", help="Seconds or a duration such as 90s, 5m (default: groups.defaults.broadcast_timeout, 300).", show_default=False)]
ReducerOpt = Annotated[str | None, typer.Option("--reducer", help="concat, join_by_handle, last_wins, majority_vote, rank, or a custom one (default: groups.defaults.default_reducer, else concat).", show_default=False)]
ProfilesOpt = Annotated[str | None, typer.Option("--profiles", help="Comma-separated agent ids (group:NAME for a sub-group); repeat one for several members.", show_default=False)]
PresetOpt = Annotated[str | None, typer.Option("--preset", help="A preset from groups.presets in .rooms.yaml or .rooms/groups/<preset>.yaml.", show_default=False)]


def _profiles(run: Run, profiles: str | None, preset: str | None) -> list[str]:
    from rooms_cli.errors import UsageError
    from rooms_cli.groups.presets import preset_profiles

    if bool(profiles) == bool(preset):
        raise UsageError("give exactly one of --profiles a,b,c or --preset NAME")
    if preset:
        return preset_profiles(run.project, run.config, preset)
    return [p.strip() for p in (profiles or "").split(",") if p.strip()]


def _show_members(members, json_: bool, name: str) -> None:
    if json_:
        output.print_json({"group": name, "members": [m.to_json() for m in members]})
        return
    for m in members:
        output.say(f"{name}: + {m.handle} ({m.profile})")


@group_app.command("spawn")
@shared()
def spawn_cmd(run: Run, name: NameArg, profile: Annotated[str, typer.Option("--profile", autocompletion=complete_agents, help="Agent id, or group:NAME to nest a group.")],
              handle: Annotated[str | None, typer.Option("--handle", help="Member handle (default: the profile; -2, -3… when taken).")] = None) -> None:
    """Add one member to a group, creating the group if it is new.

    Example: rooms group spawn rev --profile reviewer --handle sec
    """
    from rooms_cli.groups import roster

    _show_members(roster.spawn(run.project, name, [profile], [handle]), run.json, name)


@group_app.command("spawn-mixed")
@shared()
def spawn_mixed_cmd(run: Run, name: NameArg, profiles: ProfilesOpt = None, preset: PresetOpt = None) -> None:
    """Add several members at once, from a list of profiles or a preset.

    Example: rooms group spawn-mixed audit --profiles reviewer,architect,ops
    """
    from rooms_cli.groups import roster

    _show_members(roster.spawn(run.project, name, _profiles(run, profiles, preset)), run.json, name)


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
                    src: Annotated[str, typer.Option("--from", help="Group it is in.")],
                    dst: Annotated[str, typer.Option("--to", help="Group to move it to (created if new).")]) -> None:
    """Move a member from one group to another.

    Example: rooms group move-member sec --from rev --to security
    """
    from rooms_cli.groups import roster

    member = roster.move_member(run.project, handle, src, dst)
    run.emit({"handle": member.handle, "profile": member.profile, "from": src, "to": dst}, f"{handle}: {src} → {dst}")


@group_app.command("ask")
@shared()
def ask_cmd(
    run: Run,
    objective: Annotated[str, typer.Option("--objective", help="What to accomplish.")],
    profiles: ProfilesOpt = None, preset: PresetOpt = None,
    output_format: Annotated[str, typer.Option("--output-format", help="How the reply should be shaped.")] = "",
    tool_guidance: Annotated[str, typer.Option("--tool-guidance", help="Which tools to reach for or avoid.")] = "",
    boundaries: Annotated[str, typer.Option("--boundaries", help="What is out of scope.")] = "",
    reducer: ReducerOpt = None, timeout: TimeoutOpt = None,
    any_: Annotated[bool, typer.Option("--any", help="Return the first reply and cancel the losers.")] = False,
) -> None:
    """One-shot committee: spawn an ephemeral group, broadcast, wait, dissolve — no file left behind.

    Example: rooms group ask --profiles analyst,analyst,wildcard --objective 'ship Friday? YES or NO' --reducer majority_vote
    """
    import asyncio

    from rooms_cli.cli import progress
    from rooms_cli.groups.api import ask

    def watch(project, name):
        return progress.live_line(progress.group_line(project, name), progress.wanted(run.json))

    fields = {"objective": objective, "output_format": output_format, "tool_guidance": tool_guidance, "boundaries": boundaries}
    name, result = asyncio.run(ask(_profiles(run, profiles, preset), fields, any_=any_, reducer=reducer,
                                   timeout=timeout, project=run.project, watch=watch))
    operations_groups.show_result(result, name, run.json)
