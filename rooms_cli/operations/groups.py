"""Groups' operations, each declared once (operations/declare.py): `rooms group spawn|spawn-mixed|broadcast|wait|reply|status|cancel|
list|dissolve|ask` (spawn-mixed has no MCP tool of its own: group_spawn takes a list of profiles).

As in operations/board.py, each declaration gives the typer command (group_cmd.py) and the MCP
tool's input schema (mcp_server/tools.py); typer parses them (not on the fast path: cli/fast.py).
"""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.shared import Run
from rooms_cli.core.shapes import BOOL, MEMBER, STR, envelope, nullable, record
from rooms_cli.operations.declare import Mcp, McpArg, Param, operation
from rooms_cli.operations.hot import AS, LIMIT, SINCE, nonblank
from rooms_cli.operations.values import duration_value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from rooms_cli.groups.model import GroupResult, Member

DIR_JSON = ("dir", "json_")  # the shared options of a group command that acts as no one

# the MCP tools' results (their outputSchema)
GROUP = record({"name": STR, "members": {"type": "array", "items": MEMBER}, "in_flight": nullable({"type": "object"})})
GATHERED = record({"broadcast_id": STR, "by_member": {"type": "object"}, "reduced": {}, "metadata": {"type": "object"}})

GATHER_DEFAULT_S = 300.0  # how long group_wait and group_ask block over MCP when no timeout_seconds is given

NAME = Param("name", help="Group name.", complete="groups")
OBJECTIVE = Param("objective", help="What to accomplish.", flags=("--objective",))
# the other three fields of a broadcast: required on `group broadcast` ('' allowed), '' when left out over MCP
OUTPUT_FORMAT = Param("output_format", help="How the reply should be shaped ('' allowed).", flags=("--output-format",),
                      mcp=McpArg(default="", help="How each reply should be shaped ('' allowed)."))
TOOL_GUIDANCE = Param("tool_guidance", help="Which tools to reach for or avoid ('' allowed).", flags=("--tool-guidance",),
                      mcp=McpArg(default=""))
BOUNDARIES = Param("boundaries", help="What is out of scope ('' allowed).", flags=("--boundaries",), mcp=McpArg(default=""))
TIMEOUT = Param("timeout", "duration", None, "Seconds or a duration such as 90s, 5m (default: groups.defaults.broadcast_timeout, 300).",
                ("--timeout",), parse=duration_value, metavar="DURATION", show_default=False,
                mcp=McpArg(name="timeout_seconds", kind="float", default=GATHER_DEFAULT_S, ge=0, le=3600,
                           help="Give up after this many seconds."))
REDUCER = Param("reducer", default=None, flags=("--reducer",), show_default=False,
                help="concat, join_by_handle, last_wins, majority_vote, rank, or a custom one (default: groups.defaults.default_reducer, else concat).",
                mcp=McpArg(help="concat, join_by_handle, last_wins, majority_vote, rank, or a custom one."))
# --any on the command line, mode over MCP
ANY = Param("any_", "bool", False, "Return the first reply and cancel the losers.", ("--any",), mcp=False)
# who the members are on the command line: a comma-separated list of profiles, or a preset (groups/presets.py)
PROFILES = Param("profiles", default=None, help="Comma-separated agent ids (group:NAME for a sub-group); repeat one for several members.",
                 flags=("--profiles",), show_default=False, mcp=False)
PRESET = Param("preset", default=None, help="A preset from groups.presets in .rooms.yaml or .rooms/groups/<preset>.yaml.",
               flags=("--preset",), show_default=False, mcp=False)
MODE = Param("mode", default="all", help="all: every member's reply; any: the first, the rest cancelled.", cli=False,
             mcp=McpArg(choices=("all", "any")))


def _profiles(run: Run, profiles: str | None, preset: str | None) -> list[str]:
    from rooms_cli.core.errors import UsageError
    from rooms_cli.groups.presets import preset_profiles

    if bool(profiles) == bool(preset):
        raise UsageError("give exactly one of --profiles a,b,c or --preset NAME")
    if preset:
        return preset_profiles(run.project, run.config, preset)
    return [p.strip() for p in (profiles or "").split(",") if p.strip()]


def _show_members(members: Iterable[Member], json_: bool, name: str) -> None:
    if json_:
        output.print_json({"group": name, "members": [m.to_json() for m in members]})
        return
    for m in members:
        output.say(f"{name}: + {m.handle} ({m.profile})")


def show_result(result: GroupResult, name: str, json_: bool) -> None:
    """A gathered result (JSON, or the reduced text and a summary on stderr), exiting with its problem's code."""
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
        import typer

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


@operation("group", "spawn", shared=DIR_JSON, params=(
    NAME.replace(mcp=McpArg(help="Group name (created if new).")),
    Param("profile", help="Agent id, or group:NAME to nest a group.", flags=("--profile",), complete="agents",
          mcp=McpArg(name="profiles", kind="strs", min_length=1, help="Agent ids, one member each (group:NAME nests a group).")),
    Param("handle", default=None, help="Member handle (default: the profile; -2, -3… when taken).", flags=("--handle",),
          mcp=McpArg(name="handles", kind="optional_strs", help="Member handles, in the order of profiles (default: the profile).")),
), mcp=Mcp("group_spawn", "Add group members", record({"group": STR, "members": {"type": "array", "items": MEMBER}})))
def group_spawn(run: Run, name: str, profile: str, handle: str | None) -> None:
    """Add one member to a group, creating the group if it is new.

    Example: rooms group spawn rev --profile reviewer --handle sec
    """
    from rooms_cli.groups import roster

    _show_members(roster.spawn(run.project, name, [profile], [handle]), run.json, name)


@operation("group", "spawn-mixed", shared=DIR_JSON, params=(NAME, PROFILES, PRESET))
def group_spawn_mixed(run: Run, name: str, profiles: str | None, preset: str | None) -> None:
    """Add several members at once, from a list of profiles or a preset.

    Example: rooms group spawn-mixed audit --profiles reviewer,architect,ops
    """
    from rooms_cli.groups import roster

    _show_members(roster.spawn(run.project, name, _profiles(run, profiles, preset)), run.json, name)


@operation("group", "broadcast", shared=AS, params=(NAME, OBJECTIVE, OUTPUT_FORMAT, TOOL_GUIDANCE, BOUNDARIES),
           mcp=Mcp("group_broadcast", "Broadcast to a group", record({"group": STR, "broadcast_id": STR, "members": {"type": "array", "items": STR}})))
def group_broadcast(run: Run, name: str, objective: str, output_format: str, tool_guidance: str, boundaries: str) -> None:
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


@operation("group", "wait", shared=DIR_JSON, params=(
    NAME, MODE, TIMEOUT, REDUCER, ANY,
    Param("no_cancel_losers", "bool", False, "With --any: let the losers finish (their replies are dropped).", ("--no-cancel-losers",),
          mcp=False),
), mcp=Mcp("group_wait", "Gather a group broadcast", GATHERED, long=True))
def group_wait(run: Run, name: str, timeout: float | None, reducer: str | None, any_: bool, no_cancel_losers: bool) -> None:
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
            show_result(result, name, run.json)
        finally:
            await gather.drain()

    asyncio.run(gather_and_show())


@operation("group", "reply", shared=DIR_JSON, params=(
    NAME,
    Param("text", help="The reply ('-' reads it from stdin).", mcp=McpArg(help="Your reply."), parse=nonblank("reply")),
    Param("handle", help="Your member handle in the group.", flags=("--as",),
          mcp=McpArg(default=None, help="Your member handle in the group (default: your identity).")),
    Param("broadcast", default=None, help="Broadcast id or a unique prefix (default: the one in flight).", flags=("--broadcast",)),
), mcp=Mcp("group_reply", "Reply to a group broadcast", record({"group": STR, "broadcast_id": STR, "handle": STR, "accepted": BOOL})))
def group_reply(run: Run, name: str, text: str, handle: str, broadcast: str | None) -> None:
    """Reply to a broadcast as an external member (a late reply is recorded as dropped).

    Example: rooms group reply rev --as coder 'LGTM, one nit in api.py:40'
    """
    from rooms_cli.core import terminal
    from rooms_cli.groups import broadcasts

    outcome = broadcasts.reply(run.project, run.config, name, handle, terminal.read_stdin("the reply") if text == "-" else text, broadcast)
    if run.json:
        output.print_json(outcome)
    elif outcome.accepted:
        output.say(f"{name}: reply from {handle} recorded for {outcome.broadcast_id}")
    else:
        output.say(f"{name}: reply from {handle} dropped — {outcome.reason}")


@operation("group", "cancel", shared=AS, params=(NAME,),
           mcp=Mcp("group_cancel", "Cancel a group broadcast", record({"group": STR, "broadcast_id": STR, "status": STR}),
                   destructive=True))
def group_cancel(run: Run, name: str) -> None:
    """Cancel the broadcast in flight; members still working get a cancel envelope.

    Example: rooms group cancel rev
    """
    from rooms_cli.groups import broadcasts

    b = broadcasts.cancel(run.project, run.config, name, run.me)
    run.emit({"group": name, "broadcast_id": b.id, "status": b.status}, f"{name}: broadcast {b.id} cancelled")


@operation("group", "status", shared=DIR_JSON, params=(NAME,), mcp=Mcp("group_status", "Show a group", GROUP, read_only=True))
def group_status(run: Run, name: str) -> None:
    """Members and their state, the broadcast in flight, recent broadcasts, and the ▣ label.

    Example: rooms group status rev --json
    """
    from rooms_cli.groups.status import EMOJI, status

    info = status(run.project, name)
    if run.json:
        output.print_json(info)
        return
    output.say(info["label"], style="bold")
    for m in info["members"]:
        output.say(f"  {EMOJI[m['state']]} {m['handle']:<16} {m['state']:<8} {m['profile']}")
    if info["in_flight"]:
        f = info["in_flight"]
        output.say(f"in flight: {f['broadcast_id']} · {f['objective']} · waiting for {', '.join(f['pending']) or 'the gather'}")
    if info["recent"]:
        output.say("recent:")
    for b in info["recent"]:
        tallied = f" · {b['tally']}" if b.get("tally") else ""
        output.say(f"  {b['broadcast_id']} {b['status']:<9} {len(b['replied'])}/{len(b['members'])} {b.get('reducer') or '-'}{tallied} · {b['objective']}")
        why = "ballot" if b.get("reducer") == "rank" else "vote"
        for handle, reason in (b.get("unparsed") or {}).items():
            output.say(f"      {handle}: {why} not read — {reason}")


@operation("group", "list", shared=DIR_JSON, params=(LIMIT, SINCE),
           mcp=Mcp("group_list", "List groups", envelope("groups", record({"name": STR, "members": {"type": "array", "items": STR}})),
                   read_only=True))
def group_list(run: Run) -> None:
    """Every group with its label.

    Example: rooms group list
    """
    from rooms_cli.groups.status import list_groups

    rows = list_groups(run.project)
    if run.json:
        output.print_json(rows)
        return
    if not rows:
        output.say("No groups yet. Create one with rooms group spawn NAME --profile AGENT.")
    for row in rows:
        output.say(f"{row['label']}  {', '.join(row['members'])}" + (f"  (in flight: {row['in_flight']})" if row["in_flight"] else ""))


@operation("group", "dissolve", shared=AS, params=(NAME,),
           mcp=Mcp("group_dissolve", "Dissolve a group", record({"group": STR, "dissolved": BOOL, "members": {"type": "array", "items": STR}}),
                   destructive=True))
def group_dissolve(run: Run, name: str) -> None:
    """End a group: cancel its broadcast in flight; it is no longer listed.

    Its log is kept, closed by a `dissolved` event (git keeps its history; docs/groups.md).

    Example: rooms group dissolve rev
    """
    from rooms_cli.groups import roster

    info = roster.dissolve(run.project, run.config, name, run.me)
    run.emit(info, f"{name}: dissolved" + (f" (cancelled {info['cancelled_broadcast']})" if info["cancelled_broadcast"] else ""))


@operation("group", "ask", shared=DIR_JSON, params=(
    # over MCP the profiles come first, as a list; on the command line after --objective, comma-separated or a preset
    Param("profiles", "strs", help="Agent ids, one member each.", cli=False, mcp=McpArg(min_length=1)),
    OBJECTIVE, PROFILES, PRESET,
    OUTPUT_FORMAT.replace(default="", help="How the reply should be shaped."),
    TOOL_GUIDANCE.replace(default="", help="Which tools to reach for or avoid.",
                          mcp=McpArg(default="", help="Which tools to reach for or avoid ('' allowed).")),
    BOUNDARIES.replace(default="", help="What is out of scope.", mcp=McpArg(default="", help="What is out of scope ('' allowed).")),
    REDUCER, MODE, TIMEOUT, ANY,
), mcp=Mcp("group_ask", "Ask a one-shot committee", GATHERED, long=True))
def group_ask(run: Run, objective: str, profiles: str | None, preset: str | None, output_format: str, tool_guidance: str,
              boundaries: str, reducer: str | None, timeout: float | None, any_: bool) -> None:
    """One-shot committee: spawn an ephemeral group, broadcast, wait, dissolve — no file left behind.

    Example: rooms group ask --profiles analyst,analyst,wildcard --objective 'ship Friday? YES or NO' --reducer majority_vote
    """
    import asyncio

    from rooms_cli.cli import progress
    from rooms_cli.groups.api import ask
    from rooms_cli.store.paths import Project

    def watch(project: Project, name: str) -> Any:
        return progress.live_line(progress.group_line(project, name), progress.wanted(run.json))

    fields = {"objective": objective, "output_format": output_format, "tool_guidance": tool_guidance, "boundaries": boundaries}
    name, result = asyncio.run(ask(_profiles(run, profiles, preset), fields, any_=any_, reducer=reducer,
                                   timeout=timeout, project=run.project, watch=watch))
    show_result(result, name, run.json)


# every operation declared here: typer registers them (group_cmd.py), MCP serves their tools (tools.py)
OPERATIONS = (group_spawn, group_spawn_mixed, group_broadcast, group_wait, group_reply, group_cancel, group_status, group_list,
              group_dissolve, group_ask)
