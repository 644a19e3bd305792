"""The append-only group log `.rooms/groups/<name>.jsonl`, replayed on every command.

One event a line, each with `ev` and `ts`:

    created        {name, gid, ephemeral}
    member_added   {handle, profile}
    member_removed {handle, to?}
    broadcast      {id, fields, members: [{handle, profile}], sender, sub?, parent?}
    reply          {id, handle, text, status: ok|error, elapsed_s, source: model|external|group}
    dropped        {id, handle, text, reason}          a reply that came too late, never reduced
    gathered       {id, result: GroupResult JSON}
    cancelled      {id, by, reason}
    renamed        {from, to}

Nothing depends on a process staying alive: state is whatever the replay of these lines says.
A torn last line (a crash mid-append) is skipped with a warning; the next append repairs it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from rooms_cli.errors import InvalidData, NotFound
from rooms_cli.groups.model import Broadcast, Group, Member, Reply
from rooms_cli.store import jsonl, layout
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import validate_name
from rooms_cli.store.locks import lock_path, locked
from rooms_cli.store.paths import Project

_torn_warned: set[str] = set()


def validate_group_name(name: str) -> str:
    return validate_name(name, "group name")


def log_path(project: Project, name: str):
    return layout.group_log(project, name)


def gather_lock_path(project: Project, name: str):
    """Held by the process gathering a group's broadcast (model calls run there, once)."""
    return layout.group_gather_lock(project, name)


def exists(project: Project, name: str) -> bool:
    return log_path(project, name).exists()


def read_events(project: Project, name: str) -> list[dict]:
    path = log_path(project, name)
    scan = jsonl.scan(path)
    for lineno, reason in scan.bad:
        jsonl.warn(path, lineno, reason)
    if scan.torn and str(path) not in _torn_warned:
        _torn_warned.add(str(path))
        print(f"warning: {project.relative(path)}: unfinished last line skipped (a crash cut it)", file=sys.stderr)
    return scan.records


def _text(ev: dict, key: str) -> str:
    """A required non-empty string field of an event (TypeError otherwise: a malformed event)."""
    value = ev[key]
    if not isinstance(value, str) or not value:
        raise TypeError(f"{key} must be a non-empty string")
    return value


def replay(name: str, events: list[dict]) -> Group | None:
    """Build the group's state from its events; None when the log holds no `created` event."""
    group: Group | None = None
    by_id: dict[str, Broadcast] = {}
    for ev in events:
        kind = ev.get("ev")
        try:
            if kind == "created":
                group = Group(name=name, gid=str(ev.get("gid", "")), created=str(ev.get("ts", "")), ephemeral=bool(ev.get("ephemeral")))
            elif group is None:
                continue
            elif kind == "member_added":
                group.members.append(Member(handle=_text(ev, "handle"), profile=_text(ev, "profile")))
            elif kind == "member_removed":
                group.members = [m for m in group.members if m.handle != _text(ev, "handle")]
            elif kind == "broadcast":
                group.broadcasts.append(by_id.setdefault(ev["id"], Broadcast(
                    id=ev["id"], fields=dict(ev.get("fields") or {}), members=[Member.from_json(m) for m in ev.get("members", [])],
                    sender=str(ev.get("sender", "")), ts=str(ev.get("ts", "")), sub=dict(ev.get("sub") or {}), parent=ev.get("parent"),
                )))
            elif kind in ("reply", "dropped", "gathered", "cancelled"):
                b = by_id.get(ev["id"])
                if b is None:
                    continue
                if kind == "reply" and b.in_flight and _text(ev, "handle") not in b.replies:
                    b.replies[ev["handle"]] = Reply(
                        handle=ev["handle"], text=str(ev.get("text", "")), status=str(ev.get("status", "ok")),
                        elapsed_s=float(ev.get("elapsed_s", 0.0)), ts=str(ev.get("ts", "")), source=str(ev.get("source", "")),
                    )
                elif kind == "dropped":
                    b.dropped.append({"handle": _text(ev, "handle"), "text": ev.get("text", ""), "reason": ev.get("reason", ""), "ts": ev.get("ts")})
                elif kind in ("gathered", "cancelled") and b.in_flight:
                    b.status = kind
                    b.closed_ts = ev.get("ts")
                    b.result = ev.get("result") if kind == "gathered" else None
            elif kind == "renamed":
                group.name = str(ev.get("to", group.name))
        except (KeyError, TypeError, ValueError):
            raise InvalidData(f"groups/{name}.jsonl: malformed {kind!r} event: {ev!r}") from None
    return group


def load(project: Project, name: str) -> Group:
    """The group as its log says; NotFound names the known groups."""
    group = replay(name, read_events(project, name)) if exists(project, name) else None
    if group is None:
        known = ", ".join(names(project)) or "none yet (rooms group spawn NAME --profile AGENT)"
        raise NotFound(f"no group {name!r}; known groups: {known}")
    group.name = name
    return group


def load_optional(project: Project, name: str) -> Group | None:
    return replay(name, read_events(project, name)) if exists(project, name) else None


def names(project: Project) -> list[str]:
    folder = layout.groups_dir(project)
    if not folder.is_dir():
        return []
    return sorted(p.name[: -len(".jsonl")] for p in folder.glob("*.jsonl"))


def event(kind: str, **data) -> dict:
    return {"ev": kind, "ts": now_iso(), **data}


def append(project: Project, name: str, *events: dict, lock: bool = False) -> None:
    """Append events in one write. `lock=True` takes the log's lock; otherwise the caller holds it."""
    jsonl.append_many(log_path(project, name), list(events), lock=lock)


@contextmanager
def locked_groups(project: Project, *group_names: str) -> Iterator[None]:
    """Hold the logs' locks of several groups, taken in name order (no lock-order deadlock)."""
    with ExitStack() as stack:
        for name in sorted(set(group_names)):
            stack.enter_context(locked(log_path(project, name), what=f"group {name!r}"))
        yield


def remove(project: Project, name: str) -> None:
    """Delete a group's log and its lock files (dissolve: the group leaves no file behind)."""
    path = log_path(project, name)
    for target in (path, lock_path(gather_lock_path(project, name)), lock_path(path)):
        try:
            os.unlink(target)
        except FileNotFoundError:
            pass
