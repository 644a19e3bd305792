"""`rooms status`: the project at a glance, for one agent — what `git status` is to a checkout.

    overview(project, config, me="alice", room="default").to_json()

What it holds, each part read through its own quick path (no log read whole, nothing written, no
inbox marked read):
- your unread messages (messaging's cursor), the first `UNREAD_SHOWN` of them;
- your claims in every live room, each with the time its lease has left (each board's open index);
- the current room's board, lane by lane: open (todo), doing, blocked — blocked counting the tasks
  set `blocked` and those waiting on a dependency (`blocked_by`, docs/board.md);
- the live groups (`▣ name [busy/total state]`, the group replay cache);
- the live rooms with activity in the last `RECENT_S` (the last record of each transcript), newest first;
- the other agents' status lines, newest first.
`lines()` renders it in at most `MAX_LINES` lines: each section is cut to its share (the `*_SHOWN`) and
says how many more there are, so the page fits a terminal whatever the project holds.
"""

from __future__ import annotations

from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.core.text import count
from rooms_cli.store.clock import now, parse_time
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from rooms_cli.project.config import Config

MAX_LINES = 25  # what the shares below add up to at most: 1 + 5 + 5 + 7 + 1 + 1 + 5
RECENT_S = 24 * 3600.0  # a room is active when its last record is this recent
UNREAD_SHOWN = 3
CLAIMS_SHOWN = 3
LANES_SHOWN = 5
GROUPS_SHOWN = 3
ROOMS_SHOWN = 3
AGENTS_SHOWN = 3
TEXT_CHARS = 72  # a message or a status line is cut here on its line


@dataclass
class Overview:
    """The project at a glance for `me` (see the module docstring); `to_json` is `rooms status --json`."""

    me: str
    room: str
    at: str
    unread: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    lanes: list[dict[str, Any]] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)
    rooms: list[dict[str, Any]] = field(default_factory=list)
    agents: list[dict[str, Any]] = field(default_factory=list)
    my_status: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"agent": self.me, "room": self.room, "at": self.at, "status": self.my_status, "unread": self.unread,
                "claims": self.claims, "lanes": self.lanes, "groups": self.groups, "rooms": self.rooms,
                "agents": self.agents}


def _seconds_left(expires_at: str, moment: datetime) -> int:
    return int((parse_time(expires_at) - moment).total_seconds())


def _ago(moment: str | None, at: datetime) -> str:
    """`5m ago`, `3h ago`, `2d ago` (`just now` under a minute)."""
    if not moment:
        return ""
    seconds = (at - parse_time(moment)).total_seconds()
    if seconds < 60:
        return "just now"
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def left(seconds: int) -> str:
    """A lease's time left: `9m59s`, `1h05m`, `lapsed`."""
    if seconds <= 0:
        return "lapsed"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def _cut(text: str, chars: int = TEXT_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def _unread(project: Project, me: str) -> list[dict[str, Any]]:
    from rooms_cli.messaging.unread import unread

    return [{"n": m.n, "ref": m.ref or str(m.n), "from": m.sender, "text": m.text, "ts": m.ts, "kind": m.kind}
            for m in unread(project, me)]


def _boards(project: Project, rooms: list[str], me: str, room: str, at: str, moment: datetime
            ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(my claims in every room, the current room's lanes)."""
    from rooms_cli.board.render import short_ids
    from rooms_cli.board.tasks import open_board

    claims: list[dict[str, Any]] = []
    lanes: dict[str, dict[str, Any]] = {}
    for name in rooms:
        tasks, _rest = open_board(project, name, at, done=0)
        mine = [t for t in tasks if (t.get("lease") or {}).get("holder") == me]
        short = short_ids([t["id"] for t in tasks]) if mine else {}  # as `rooms board` shows them
        for task in mine:
            lease = task["lease"]
            claims.append({"task": task["id"], "short": short[task["id"]], "title": task["title"], "room": name, "lane": task["lane"],
                           "expires_at": lease["expires_at"], "seconds_left": _seconds_left(lease["expires_at"], moment)})
        for task in tasks if name == room else ():
            counts = lanes.setdefault(task["lane"], {"lane": task["lane"], "open": 0, "doing": 0, "blocked": 0})
            if task["status"] == "blocked" or task.get("blocked_by"):
                counts["blocked"] += 1
            elif task["status"] == "doing":
                counts["doing"] += 1
            elif task["status"] == "todo":
                counts["open"] += 1
    claims.sort(key=lambda c: c["seconds_left"])
    return claims, [lanes[name] for name in sorted(lanes)]


def _active_rooms(project: Project, rooms: list[str], moment: datetime) -> list[dict[str, Any]]:
    from rooms_cli.chat.transcript import tail

    active = []
    for name in rooms:
        last = tail(project, name, 1)
        if last and (moment - parse_time(last[0].ts)).total_seconds() <= RECENT_S:
            active.append({"room": name, "last_at": last[0].ts, "last_speaker": last[0].speaker})
    return sorted(active, key=lambda r: r["last_at"], reverse=True)


def _statuses(project: Project, me: str) -> tuple[str, list[dict[str, Any]]]:
    """(my status line, the other agents' status lines newest first)."""
    from rooms_cli.messaging.status import read_status, status_names

    mine, others = "", []
    for name in status_names(project):
        state = read_status(project, name)
        text = state.get("status") or ""
        if name == me:
            mine = text
        elif text:
            others.append({"agent": name, "status": text, "updated": state.get("updated")})
    return mine, sorted(others, key=lambda a: a["updated"] or "", reverse=True)


def overview(project: Project, config: Config, me: str, room: str) -> Overview:
    """Read the project at a glance for `me` in `room` (nothing written)."""
    from rooms_cli.chat.rooms import list_room_states
    from rooms_cli.store import layout
    from rooms_cli.store.clock import iso

    moment = now()
    at = iso(moment)
    live = sorted(state.id for state in list_room_states(project, quiet=True) if state.live)
    claims, lanes = _boards(project, sorted(set(live) | {room}), me, room, at, moment)
    mine, others = _statuses(project, me)
    groups: list[dict[str, Any]] = []
    if layout.record_names(project, layout.groups_dir(project), ".jsonl", "group name"):  # the groups part costs ~15 ms to load
        from rooms_cli.groups.status import list_groups

        groups = list_groups(project)
    return Overview(me=me, room=room, at=at, unread=_unread(project, me), claims=claims, lanes=lanes,
                    groups=groups, rooms=_active_rooms(project, live, moment), agents=others, my_status=mine)


def _more(shown: int, total: int, what: str, hint: str) -> list[str]:
    return [f"  … {count(total - shown, 'more ' + what)} ({hint})"] if total > shown else []


def lines(view: Overview) -> list[str]:
    """The overview as at most MAX_LINES lines for a person (the sections that are empty say so in one line)."""
    moment = parse_time(view.at)
    out = [f"{view.me} in room {view.room}" + (f" · {_cut(view.my_status, 50)}" if view.my_status else
                                              " · no status line (rooms status TEXT sets one)")]
    if view.unread:
        out.append(f"Inbox: {count(len(view.unread), 'unread message')} (rooms inbox)")
        out += [f"  #{m['ref']} {m['from']}: {_cut(m['text'])}" for m in view.unread[:UNREAD_SHOWN]]
        out += _more(UNREAD_SHOWN, len(view.unread), "message", "rooms inbox")
    else:
        out.append("Inbox: nothing unread")
    if view.claims:
        out.append(f"Claims: {count(len(view.claims), 'task')} held by you")
        out += [f"  {c['short']}  {_cut(c['title'], 40)}  ({c['room']}/{c['lane']})  "
                f"{left(_seconds_left(c['expires_at'], moment))} left" for c in view.claims[:CLAIMS_SHOWN]]
        out += _more(CLAIMS_SHOWN, len(view.claims), "claim", "rooms task list --holder " + view.me)
    else:
        out.append("Claims: none (rooms task next claims the next task of your lane)")
    if view.lanes:
        out.append(f"Board of {view.room}: open · doing · blocked")
        out += [f"  {lane['lane']:<16} {lane['open']:>4} · {lane['doing']:>3} · {lane['blocked']:>3}" for lane in view.lanes[:LANES_SHOWN]]
        out += _more(LANES_SHOWN, len(view.lanes), "lane", "rooms board")
    else:
        out.append(f"Board of {view.room}: no open tasks")
    if view.groups:
        shown = [g["label"] + (f" in flight: {g['in_flight']}" if g["in_flight"] else "") for g in view.groups[:GROUPS_SHOWN]]
        out.append("Groups: " + "  ".join(shown) + (f"  … {len(view.groups) - GROUPS_SHOWN} more" if len(view.groups) > GROUPS_SHOWN else ""))
    if view.rooms:
        shown = [f"{r['room']} ({r['last_speaker']}, {_ago(r['last_at'], moment)})" for r in view.rooms[:ROOMS_SHOWN]]
        out.append("Rooms: " + " · ".join(shown) + (f" · … {len(view.rooms) - ROOMS_SHOWN} more" if len(view.rooms) > ROOMS_SHOWN else ""))
    if view.agents:
        out.append("Agents:")
        out += [f"  {a['agent']:<16} {_cut(a['status'], 48)}  ({_ago(a['updated'], moment)})" for a in view.agents[:AGENTS_SHOWN]]
        out += _more(AGENTS_SHOWN, len(view.agents), "agent", "rooms agents")
    return out
