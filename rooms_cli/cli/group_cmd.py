"""`rooms group …`: broadcast one four-field prompt to a group and gather the replies."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from rooms_cli import terminal
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


def _show_result(result, name: str, json_: bool) -> None:
    import json

    if json_:
        output.print_json(result)
    else:
        meta = result.metadata
        reduced = result.reduced if isinstance(result.reduced, str) else json.dumps(result.reduced, ensure_ascii=False, indent=2)
        output.say("(no result: nothing to reduce)" if result.reduced is None else reduced)
        output.note(f"{name} · {result.broadcast_id} · {meta['reducer']} · {meta['replied']}/{meta['members']} replied · {meta['elapsed_s']}s"
                    + (f" · winner {meta['winner_handle']}" + (" (a tie, by arrival)" if meta.get("tie") else "") if meta.get("winner_handle") else ""))
        for line in _tally_lines(meta):
            output.note(line)
        for handle, r in result.by_member.items():
            if r.status != "ok":
                output.note(f"  {handle}: {r.status}")
            elif r.cut:
                output.note(f"  {handle}: cut at its max_tokens limit")
    problem = result.problem()
    if problem is not None:
        if problem.code == "no_result":
            output.print_error(problem, json_)
        raise typer.Exit(problem.exit_code)


def _tally_lines(meta: dict[str, Any]) -> list[str]:
    """How many votes or ballots were read, and why each of the others was not."""
    from rooms_cli.groups.model import tally

    counted = tally(meta)
    if counted is None:
        return []
    votes = meta.get("votes")
    lines = [counted + (f" ({', '.join(f'{o} {n}' for o, n in votes.items())})" if votes else "")]
    why = "ballot" if meta.get("reducer") == "rank" else "vote"
    lines += [f"  {handle}: {why} not read — {reason}" for handle, reason in (meta.get("unparsed") or {}).items()]
    lines += [f"  {handle}: {why} failed — {error}" for handle, error in (meta.get("ballot_errors") or {}).items()]
    return lines


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


@group_app.command("broadcast")
@shared(as_=True)
def broadcast_cmd(
    run: Run,
    name: NameArg,
    objective: Annotated[str, typer.Option("--objective", help="What to accomplish.")],
    output_format: Annotated[str, typer.Option("--output-format", help="How the reply should be shaped ('' allowed).")],
    tool_guidance: Annotated[str, typer.Option("--tool-guidance", help="Which tools to reach for or avoid ('' allowed).")],
    boundaries: Annotated[str, typer.Option("--boundaries", help="What is out of scope ('' allowed).")],
) -> None:
    """Send the four-field broadcast to every member (one broadcast in flight at a time).

    Example: rooms group broadcast rev --objective 'review PR 214' --output-format bullets --tool-guidance 'read only' --boundaries 'no patches'
    """
    from rooms_cli.groups import broadcasts

    fields = {"objective": objective, "output_format": output_format, "tool_guidance": tool_guidance, "boundaries": boundaries}
    b = broadcasts.send_broadcast(run.project, run.config, name, fields, run.me)
    if run.json:
        output.print_json({"group": name, "broadcast_id": b.id, "members": [m.handle for m in b.members], "sub_broadcasts": b.sub})
        return
    output.say(f"{name}: broadcast {b.id} sent to {', '.join(m.handle for m in b.members)}")
    output.note(f"gather with: rooms group wait {name}")


@group_app.command("wait")
@shared()
def wait_cmd(
    run: Run,
    name: NameArg, timeout: TimeoutOpt = None, reducer: ReducerOpt = None,
    any_: Annotated[bool, typer.Option("--any", help="Return the first reply and cancel the losers.")] = False,
    no_cancel_losers: Annotated[bool, typer.Option("--no-cancel-losers", help="With --any: let the losers finish (their replies are dropped).")] = False,
) -> None:
    """Gather the broadcast in flight: run model-backed members, wait for external ones, reduce.

    Exit 4 on timeout (the partial result is still printed). Example: rooms group wait rev --reducer join_by_handle --timeout 5m
    """
    import asyncio

    from rooms_cli.cli import progress
    from rooms_cli.groups import gather

    async def gather_and_show() -> None:
        async with progress.live_line(progress.group_line(run.project, name), progress.wanted(run.json)):
            result = await gather.gather(run.project, run.config, name, any_=any_, timeout=timeout, reducer=reducer,
                                         cancel_losers=not no_cancel_losers, by=run.me)
        try:
            _show_result(result, name, run.json)
        finally:
            await gather.drain()

    asyncio.run(gather_and_show())


@group_app.command("reply")
@shared()
def reply_cmd(
    run: Run,
    name: NameArg,
    text: Annotated[str, typer.Argument(help="The reply ('-' reads it from stdin).")],
    handle: Annotated[str, typer.Option("--as", help="Your member handle in the group.")],
    broadcast: Annotated[str | None, typer.Option("--broadcast", help="Broadcast id or a unique prefix (default: the one in flight).")] = None,
) -> None:
    """Reply to a broadcast as an external member (a late reply is recorded as dropped).

    Example: rooms group reply rev --as coder 'LGTM, one nit in api.py:40'
    """

    from rooms_cli.groups import broadcasts

    outcome = broadcasts.reply(run.project, run.config, name, handle, terminal.read_stdin("the reply") if text == "-" else text, broadcast)
    if run.json:
        output.print_json(outcome)
    elif outcome.accepted:
        output.say(f"{name}: reply from {handle} recorded for {outcome.broadcast_id}")
    else:
        output.say(f"{name}: reply from {handle} dropped — {outcome.reason}")


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
    _show_result(result, name, run.json)
