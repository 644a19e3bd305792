"""Groups' operations, each declared once (cli/declare.py): `rooms group status|cancel|list|dissolve`.

As in cli/operations_board.py, each declaration gives the typer command (group_cmd.py) and the MCP
tool's input schema (mcp_server/tools.py); typer parses them (not on the fast path: cli/fast.py).
"""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.declare import Mcp, Param, operation
from rooms_cli.cli.operations import AS, LIMIT, SINCE
from rooms_cli.cli.shared import Run
from rooms_cli.shapes import BOOL, MEMBER, STR, envelope, nullable, record

DIR_JSON = ("dir", "json_")  # the shared options of a group command that acts as no one

# the MCP tools' results (their outputSchema)
GROUP = record({"name": STR, "members": {"type": "array", "items": MEMBER}, "in_flight": nullable({"type": "object"})})

NAME = Param("name", help="Group name.", complete="groups")


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
    """Drop a group: cancel its broadcast in flight and delete its log.

    Example: rooms group dissolve rev
    """
    from rooms_cli.groups import roster

    info = roster.dissolve(run.project, run.config, name, run.me)
    run.emit(info, f"{name}: dissolved" + (f" (cancelled {info['cancelled_broadcast']})" if info["cancelled_broadcast"] else ""))


# every operation declared here: typer registers them (group_cmd.py), MCP serves their tools (tools.py)
OPERATIONS = (group_cancel, group_status, group_list, group_dissolve)
