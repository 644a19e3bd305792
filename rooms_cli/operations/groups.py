"""Groups' operations, each declared once (operations/declare.py): `rooms group spawn|spawn-mixed|broadcast|wait|
reply|status|cancel|list|dissolve|ask` (docs/groups.md). spawn-mixed has no MCP tool of its own:
group_spawn takes a list of profiles."""

from __future__ import annotations

from rooms_cli.core.shapes import BOOL, MEMBER, STR, envelope, nullable, record
from rooms_cli.operations.common import AS, DIR_JSON, LIMIT, SINCE, listed, nonblank
from rooms_cli.operations.declare import REQUIRED, Mcp, McpArg, Param, operation
from rooms_cli.operations.values import comma_list, duration_value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.groups.model import GroupResult
    from rooms_cli.project.context import Context
    from rooms_cli.store.paths import Project

# the MCP tools' results (their outputSchema)
GROUP = record({"name": STR, "members": {"type": "array", "items": MEMBER}, "in_flight": nullable({"type": "object"})})
GATHERED = record({"broadcast_id": STR, "by_member": {"type": "object"}, "reduced": {}, "metadata": {"type": "object"}})
MEMBERS = record({"group": STR, "members": {"type": "array", "items": MEMBER}})

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
MODE = Param("mode", default="all", help="all: every member's reply; any: the first, the rest cancelled.", cli=False,
             mcp=McpArg(choices=("all", "any")))
# who the members are: a comma-separated list of profiles (a list over MCP), or a preset (groups/presets.py)
PROFILES = Param("profiles", default=None, help="Comma-separated agent ids (group:NAME for a sub-group); repeat one for several members.",
                 flags=("--profiles",), parse=comma_list, show_default=False, mcp=False)
PRESET = Param("preset", default=None, help="A preset from groups.presets in .rooms.yaml or .rooms/groups/<preset>.yaml.",
               flags=("--preset",), show_default=False, mcp=False)


def _members(ctx: Context, profiles: list[str] | None, preset: str | None) -> list[str]:
    """The profiles of the members asked for: the list given, or the preset's (exactly one of them)."""
    from rooms_cli.core.errors import UsageError
    from rooms_cli.groups.presets import preset_profiles

    if bool(profiles) == bool(preset):
        raise UsageError("give exactly one of --profiles a,b,c or --preset NAME")
    if preset:
        return preset_profiles(ctx.project, ctx.config, preset)
    return list(profiles or ())


def gathering(project: Project, name: str) -> Callable[[float], str]:
    """While a gather waits: `▣ rev · 3s · answered: sec · pending: perf` for the broadcast in flight of `name`."""
    from rooms_cli.groups.status import status

    def describe(elapsed: float) -> str:
        shown = status(project, name)
        flight = shown["in_flight"] or {}
        pending = flight.get("pending", [])
        answered = [m["handle"] for m in shown["members"] if m["handle"] not in pending]
        return (f"▣ {name} · {elapsed:.0f}s · answered: {', '.join(answered) or 'nobody yet'}"
                f" · pending: {', '.join(pending) or 'nobody'}")

    return describe


@operation("group", "spawn", shared=DIR_JSON, params=(
    NAME.replace(mcp=McpArg(help="Group name (created if new).")),
    Param("profile", "strs", REQUIRED, "Agent id, or group:NAME to nest a group (repeat for several members).", ("--profile",),
          complete="agents",
          mcp=McpArg(name="profiles", min_length=1, help="Agent ids, one member each (group:NAME nests a group).")),
    Param("handle", "strs", None, "Member handle, one per --profile (default: the profile; -2, -3… when taken).", ("--handle",),
          show_default=False,
          mcp=McpArg(name="handles", kind="optional_strs", help="Member handles, in the order of profiles (default: the profile).")),
), mcp=Mcp("group_spawn", "Add group members", MEMBERS,
           description="Add members to a group, creating it if new; returns the members with their handles."))
def group_spawn(ctx: Context, name: str, profile: list[str], handle: list[str | None] | None) -> dict[str, Any]:
    """Add a member to a group (or several: one --profile each), creating the group if it is new.

    Example: rooms group spawn rev --profile reviewer --handle sec
    """
    from rooms_cli.groups import roster

    return {"group": name, "members": roster.spawn(ctx.project, name, profile, handle)}


@operation("group", "spawn-mixed", shared=DIR_JSON, params=(NAME, PROFILES, PRESET))
def group_spawn_mixed(ctx: Context, name: str, profiles: list[str] | None, preset: str | None) -> dict[str, Any]:
    """Add several members at once, from a list of profiles or a preset.

    Example: rooms group spawn-mixed audit --profiles reviewer,architect,ops
    """
    from rooms_cli.groups import roster

    return {"group": name, "members": roster.spawn(ctx.project, name, _members(ctx, profiles, preset))}


@operation("group", "broadcast", shared=AS, params=(NAME, OBJECTIVE, OUTPUT_FORMAT, TOOL_GUIDANCE, BOUNDARIES), mcp=Mcp(
    "group_broadcast", "Broadcast to a group", record({"group": STR, "broadcast_id": STR, "members": {"type": "array", "items": STR}}),
    description="Send the four-field broadcast to every member of a group (one broadcast in flight at a time); gather with group_wait."))
def group_broadcast(ctx: Context, name: str, objective: str, output_format: str, tool_guidance: str, boundaries: str) -> dict[str, Any]:
    """Send the four-field broadcast to every member (one broadcast in flight at a time).

    Example: rooms group broadcast rev --objective 'review PR 214' --output-format bullets --tool-guidance 'read only' --boundaries 'no patches'
    """
    from rooms_cli.groups import broadcasts

    fields = {"objective": objective, "output_format": output_format, "tool_guidance": tool_guidance, "boundaries": boundaries}
    b = broadcasts.send_broadcast(ctx.project, ctx.config, name, fields, ctx.me)
    return {"group": name, "broadcast_id": b.id, "members": [m.handle for m in b.members], "sub_broadcasts": b.sub}


@operation("group", "wait", shared=DIR_JSON, params=(
    NAME, MODE, TIMEOUT, REDUCER, ANY,
    Param("no_cancel_losers", "bool", False, "With --any: let the losers finish (their replies are dropped).", ("--no-cancel-losers",),
          mcp=False),
), mcp=Mcp("group_wait", "Gather a group broadcast", GATHERED, long=True, problem_fails=True,
           description="Gather the broadcast in flight: run model-backed members, wait for external ones, reduce. "
                       "A timeout is the error timed_out with the partial result attached."))
def group_wait(ctx: Context, name: str, mode: str, timeout: float | None, reducer: str | None, any_: bool,
               no_cancel_losers: bool) -> GroupResult:
    """Gather the broadcast in flight: run model-backed members, wait for external ones, reduce.

    Exit 4 on timeout (the partial result is still printed). Example: rooms group wait rev --reducer join_by_handle --timeout 5m
    """
    import asyncio

    from rooms_cli.groups import gather

    async def gathered() -> GroupResult:
        try:
            return await gather.gather(ctx.project, ctx.config, name, any_=any_ or mode == "any", timeout=timeout, reducer=reducer,
                                       cancel_losers=not no_cancel_losers, by=ctx.me)
        finally:
            await gather.drain()

    with ctx.waiting(gathering(ctx.project, name)):
        return asyncio.run(gathered())


@operation("group", "reply", shared=DIR_JSON, params=(
    NAME,
    Param("text", help="The reply ('-' reads it from stdin).", mcp=McpArg(help="Your reply."), parse=nonblank("reply")),
    Param("handle", help="Your member handle in the group.", flags=("--as",),
          mcp=McpArg(default=None, help="Your member handle in the group (default: your identity).")),
    Param("broadcast", default=None, help="Broadcast id or a unique prefix (default: the one in flight).", flags=("--broadcast",)),
), mcp=Mcp("group_reply", "Reply to a group broadcast", record({"group": STR, "broadcast_id": STR, "handle": STR, "accepted": BOOL}),
           description="Answer a group broadcast as one of its (external) members; a late or duplicate reply is returned "
                       "with accepted false and the reason."))
def group_reply(ctx: Context, name: str, text: str, handle: str | None, broadcast: str | None) -> Any:
    """Reply to a broadcast as an external member (a late reply is recorded as dropped).

    Example: rooms group reply rev --as coder 'LGTM, one nit in api.py:40'
    """
    from rooms_cli.groups import broadcasts

    return broadcasts.reply(ctx.project, ctx.config, name, handle or ctx.me, text, broadcast)


@operation("group", "cancel", shared=AS, params=(NAME,), mcp=Mcp(
    "group_cancel", "Cancel a group broadcast", record({"group": STR, "broadcast_id": STR, "status": STR}), destructive=True,
    description="Cancel the broadcast in flight in a group (members are told)."))
def group_cancel(ctx: Context, name: str) -> dict[str, Any]:
    """Cancel the broadcast in flight; members still working get a cancel envelope.

    Example: rooms group cancel rev
    """
    from rooms_cli.groups import broadcasts

    b = broadcasts.cancel(ctx.project, ctx.config, name, ctx.me)
    return {"group": name, "broadcast_id": b.id, "status": b.status}


@operation("group", "status", shared=DIR_JSON, params=(NAME,), mcp=Mcp(
    "group_status", "Show a group", GROUP, read_only=True,
    description="Members of a group and their state, the broadcast in flight (who is pending), and recent broadcasts."))
def group_status(ctx: Context, name: str) -> dict[str, Any]:
    """Members and their state, the broadcast in flight, recent broadcasts, and the ▣ label.

    Example: rooms group status rev --json
    """
    from rooms_cli.groups.status import status

    return status(ctx.project, name)


@operation("group", "list", shared=DIR_JSON, params=(LIMIT, SINCE), mcp=Mcp(
    "group_list", "List groups", envelope("groups", record({"name": STR, "members": {"type": "array", "items": STR}})),
    read_only=True, description="Every group: name, label, members, the broadcast in flight, how many broadcasts."))
def group_list(ctx: Context, limit: int | None, since: str | None) -> Any:
    """Every group with its label.

    Example: rooms group list
    """
    from rooms_cli.groups.status import list_groups

    return listed("groups", list_groups(ctx.project), limit, since, key=lambda g: g["name"])


@operation("group", "dissolve", shared=AS, params=(NAME,), mcp=Mcp(
    "group_dissolve", "Dissolve a group", record({"group": STR, "dissolved": BOOL, "members": {"type": "array", "items": STR}}),
    destructive=True, description="Dissolve a group (cancelling its broadcast in flight); its log stays for the record."))
def group_dissolve(ctx: Context, name: str) -> dict[str, Any]:
    """End a group: cancel its broadcast in flight; it is no longer listed.

    Its log is kept, closed by a `dissolved` event (git keeps its history; docs/groups.md).

    Example: rooms group dissolve rev
    """
    from rooms_cli.groups import roster

    return roster.dissolve(ctx.project, ctx.config, name, ctx.me)


@operation("group", "rename", shared=DIR_JSON, params=(
    Param("old", help="Current name."), Param("new", help="New name."),
))
def group_rename(ctx: Context, old: str, new: str) -> dict[str, str]:
    """Rename a group (its history moves with it).

    Example: rooms group rename rev reviewers
    """
    from rooms_cli.groups import roster

    roster.rename(ctx.project, old, new)
    return {"from": old, "to": new}


class Asked:
    """What `group ask` returns: the gathered result, and the name its ephemeral group had."""

    def __init__(self, name: str, result: GroupResult) -> None:
        self.name, self.result = name, result

    def to_json(self) -> dict[str, Any]:
        return self.result.to_json()

    def problem(self) -> Any:
        return self.result.problem()


@operation("group", "ask", shared=DIR_JSON, params=(
    # the members: a list over MCP; on the command line comma-separated, or a preset
    OBJECTIVE, PROFILES.replace(mcp=McpArg(kind="strs", default=REQUIRED, min_length=1, help="Agent ids, one member each.")),
    PRESET,
    OUTPUT_FORMAT.replace(default="", help="How the reply should be shaped."),
    TOOL_GUIDANCE.replace(default="", help="Which tools to reach for or avoid.",
                          mcp=McpArg(default="", help="Which tools to reach for or avoid ('' allowed).")),
    BOUNDARIES.replace(default="", help="What is out of scope.", mcp=McpArg(default="", help="What is out of scope ('' allowed).")),
    REDUCER, MODE, TIMEOUT, ANY,
), mcp=Mcp("group_ask", "Ask a one-shot committee", GATHERED, long=True, problem_fails=True,
           description="One-shot committee: an ephemeral group of these profiles gets the broadcast; returns the reduced "
                       "result, and no file is left behind."))
def group_ask(ctx: Context, objective: str, profiles: list[str] | None, preset: str | None, output_format: str, tool_guidance: str,
              boundaries: str, reducer: str | None, mode: str, timeout: float | None, any_: bool) -> Asked:
    """One-shot committee: spawn an ephemeral group, broadcast, wait, dissolve — no file left behind.

    Example: rooms group ask --profiles analyst,analyst,wildcard --objective 'ship Friday? YES or NO' --reducer majority_vote
    """
    import asyncio

    from rooms_cli.groups.api import ask

    fields = {"objective": objective, "output_format": output_format, "tool_guidance": tool_guidance, "boundaries": boundaries}
    name, result = asyncio.run(ask(_members(ctx, profiles, preset), fields, any_=any_ or mode == "any", reducer=reducer,
                                   timeout=timeout, project=ctx.project,
                                   watch=lambda project, group: ctx.waiting(gathering(project, group))))
    return Asked(name, result)


OPERATIONS = (group_spawn, group_spawn_mixed, group_broadcast, group_wait, group_reply, group_cancel, group_status, group_list,
              group_dissolve, group_rename, group_ask)
