"""What each tab of `rooms top` shows, read through the parts' own functions (no textual here).

Each function returns plain data the widgets lay out; none of them writes (a viewer on a read-only
`.rooms/` reads like `rooms board` does). The board keeps every open task and only the newest
DONE_SHOWN finished ones: a 10 000-task board is mostly open work, and the table widget draws only
the rows on screen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rooms_cli.core.errors import RoomsError
from rooms_cli.store.clock import now, parse_time
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from rooms_cli.messaging.roster import RosterEntry
    from rooms_cli.project.config import Config

FIXED_TABS = ("board", "rooms", "agents")  # the tabs every dashboard has; a group's tab is added by name
DONE_SHOWN = 50  # finished tasks shown in the board's done column (the newest first)
TRANSCRIPT_SHOWN = 200  # messages of the current room kept on screen
INBOX_SHOWN = 200  # messages of an agent tab


@dataclass
class TaskRow:
    """One task as a board cell: who holds it until when, what is wrong with it, when it is done."""

    id: str
    short: str
    title: str
    status: str
    lane: str
    holder: str = ""
    expires_at: str = ""
    flags: list[str] = field(default_factory=list)
    done_when: str = ""


def _task_row(task: dict[str, Any], short: dict[str, str]) -> TaskRow:
    lease = task.get("lease") or {}
    flags = []
    if any(c.get("kind") == "double_claim" for c in task.get("conflicts") or ()):
        flags.append("double claim")
    elif task.get("conflicts"):
        flags.append("conflict")
    lapsed = task.get("lapsed_lease")
    if lapsed and not lease:
        # a claim the clock withdrew: its lease lapsed without a release, the task is open again
        flags.append(f"lapsed: {lapsed.get('holder', '?')}")
    if task.get("pending"):
        flags.append(f"pending → {task['pending'].get('to', '?')}")
    if task.get("blocked_by"):
        flags.append("waits on " + ", ".join(short.get(dep, dep[:12]) for dep in task["blocked_by"]))
    return TaskRow(
        id=task["id"], short=short.get(task["id"], task["id"]), title=task["title"], status=task["status"],
        lane=task["lane"], holder=lease.get("holder", "") if lease else "",
        expires_at=lease.get("expires_at", "") if lease else "", flags=flags, done_when=task.get("definition_of_done") or "",
    )


def board(project: Project, room: str, *, done_shown: int = DONE_SHOWN) -> dict[str, Any]:
    """{room, counts, lanes: [(lane, [TaskRow])], done: [TaskRow], conflicts}: `rooms board`'s view
    (archived tasks are not on it), the done column cut to the newest `done_shown`."""
    from rooms_cli.board.render import board_view, counts_shown

    view = board_view(project, room)
    short = view["short_ids"]
    return {
        "room": room,
        "counts": dict(counts_shown(view["counts"])),
        "lanes": [(lane["lane"], [_task_row(t, short) for t in lane["tasks"]]) for lane in view["lanes"]],
        "done": [_task_row(t, short) for t in view["done"][:done_shown]],
        "done_total": len(view["done"]),
        "conflicts": len(view["conflicts"]),
    }


def task_row(project: Project, room: str, task_id: str) -> TaskRow | None:
    """One task, replayed alone (a live update of a big board); None when it is no longer an open
    task of the board (archived or finished: the whole board is read again instead)."""
    from rooms_cli.board.model import FINISHED
    from rooms_cli.board.tasks import load_task

    task = load_task(project, room, task_id).to_json()
    if task.get("archived") or task["status"] in FINISHED or not task.get("created_at"):
        return None
    return _task_row(task, {})


def countdown(expires_at: str, moment: datetime | None = None) -> str:
    """`9m59s` left on a lease (`ROOMS_NOW` is the clock), `lapsed` once it is over, "" without one."""
    if not expires_at:
        return ""
    left = int((parse_time(expires_at) - (moment or now())).total_seconds())
    if left <= 0:
        return "lapsed"
    hours, rest = divmod(left, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s"


def room_names(project: Project) -> list[str]:
    """The live rooms, in name order (`rooms room list`)."""
    from rooms_cli.chat.membership import live_rooms

    return sorted(r["id"] for r in live_rooms(project))


def room(project: Project, config: Config, room_id: str, *, shown: int = TRANSCRIPT_SHOWN, around: str | None = None) -> dict[str, Any]:
    """{info: `rooms room show`, messages: the newest `shown`, state: {agent: idle | active | busy: GROUP}}.
    `around`: a message id (a search hit) that must be among them: when it is older than the newest
    `shown`, the `shown` messages from a quarter of them before it."""
    from rooms_cli.chat.membership import show
    from rooms_cli.chat.transcript import read_transcript, tail

    info = show(project, config, room_id)
    messages = tail(project, room_id, shown)
    if around is not None and all(m.id != around for m in messages):
        every = read_transcript(project, room_id)
        at = next((n for n, m in enumerate(every) if m.id == around), None)
        if at is not None:
            start = max(0, at - shown // 4)
            messages = every[start:start + shown]
    return {"info": info, "messages": messages, "state": agent_states(project, config)}


def busy_in_groups(project: Project) -> dict[str, list[str]]:
    """agent -> the groups whose broadcast in flight waits on it (what a group tab calls `busy`)."""
    from rooms_cli.groups import log
    from rooms_cli.groups.status import list_groups, member_states

    busy: dict[str, list[str]] = {}
    for row in list_groups(project):
        if not row["in_flight"]:
            continue
        group = log.load(project, row["name"], head=True)
        states = member_states(project, group)
        for member in group.members:
            if states.get(member.handle) == "busy":
                busy.setdefault(member.profile, []).append(row["name"])
    return busy


def state_of(idle: bool, groups: list[str]) -> str:
    """An agent's state as every tab says it: `busy: rev` while a group waits on it, else idle or active."""
    return f"busy: {', '.join(groups)}" if groups else "idle" if idle else "active"


def agent_states(project: Project, config: Config) -> dict[str, str]:
    busy = busy_in_groups(project)
    return {e.name: state_of(e.idle, busy.get(e.name, [])) for e in agents_roster(project, config)}


def agents_roster(project: Project, config: Config) -> list[RosterEntry]:
    from rooms_cli.messaging.roster import roster

    return roster(project, config)


def agents(project: Project, config: Config) -> list[dict[str, Any]]:
    """`rooms agents`, each with its unread count (nothing is marked read) and its running spawns."""
    from rooms_cli.messaging.inbox import unread_messages
    from rooms_cli.messaging.spawn import list_spawns

    running: dict[str, list[str]] = {}
    for spawn in list_spawns(project):
        if spawn.active:
            running.setdefault(spawn.parent, []).append(spawn.alias)
    busy = busy_in_groups(project)
    rows = []
    for entry in agents_roster(project, config):
        rows.append({**entry.to_json(), "unread": len(unread_messages(project, entry.name)),
                     "spawns": running.get(entry.name, []), "state": state_of(entry.idle, busy.get(entry.name, []))})
    return rows


def groups(project: Project) -> list[dict[str, Any]]:
    """Every group with its `▣ name [busy/total state]` label (`rooms group list`)."""
    from rooms_cli.groups.status import list_groups

    return list_groups(project)


def group(project: Project, name: str) -> dict[str, Any]:
    """`rooms group status NAME`: members with their state, the broadcast in flight (with its four
    fields), recent ones."""
    from rooms_cli.groups import log
    from rooms_cli.groups.status import status

    info = status(project, name)
    if info["in_flight"]:
        flight = log.load(project, name, head=True).in_flight
        info["in_flight"]["fields"] = dict(flight.fields) if flight is not None else {}
    return info


def broadcast_refusal(project: Project, name: str) -> RoomsError | None:
    """What `rooms group broadcast NAME` would refuse before anything is typed: the broadcast in flight
    (its sentence), or None."""
    from rooms_cli.groups import broadcasts, log

    group = log.load(project, name, head=True)
    return broadcasts.in_flight_error(name, group.in_flight) if group.in_flight else None


def inbox(project: Project, agent: str, *, shown: int = INBOX_SHOWN) -> dict[str, Any]:
    """An agent tab: its status line and inbox, peeked (`rooms inbox --peek`: nothing marked read)."""
    from rooms_cli.messaging.attention import message_line
    from rooms_cli.messaging.inbox import open_inbox
    from rooms_cli.messaging.status import last_seen, read_status

    view = open_inbox(project, agent, peek=True)
    messages = view.messages[-shown:]
    return {
        "agent": agent,
        "status": read_status(project, agent).get("status") or "",
        "last_seen": last_seen(project, agent),
        "unread": view.fresh,
        "lines": [(m.ts, message_line(m, limit=None), view.unread(m)) for m in messages],
    }


def agent_ids(project: Project) -> list[str]:
    """The agents defined under .rooms/agents (the lasso's choices)."""
    from rooms_cli.agents.definitions import agent_ids as ids

    return ids(project)
