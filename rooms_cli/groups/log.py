"""The append-only group log `.rooms/groups/<name>.jsonl`, replayed on every command.

One event a line, each with `ev`, `ts`, `eid` (a unique time-ordered id, `e-…`) and `hlc` (the
store's hybrid-logical-clock stamp, store/clock.py):

    created        {name, gid, ephemeral}
    member_added   {handle, profile}
    member_removed {handle, to?}
    broadcast      {id, gid, fields, members: [{handle, profile}], sender, sub?, parent?}   gid: the group's, since issue 25
    reply          {id, handle, text, status: ok|error, elapsed_s, source: model|external|group, cut?: true}
    dropped        {id, handle, text, reason}          a reply that came too late, never reduced
    gathered       {id, result: GroupResult JSON}
    cancelled      {id, by, reason}
    renamed        {from, to}       in the new log (after a copy of the old one's events) and in the old log
    dissolved      {by, seen}        seen: how many events the dissolving clone knew of

The log is merged by git (`merge=union`), so two clones' events can interleave in any order in
the file: replay sorts them in the one order of every log and drops duplicates (store/order.py).
A renamed or dissolved group keeps its log with a tombstone event (deleting it would conflict with
another clone that appends to it); a log whose group is gone is not listed.

Nothing depends on a process staying alive: state is whatever the replay of these lines says.
A torn last line (a crash mid-append) is skipped with a warning; the next append repairs it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from rooms_cli.core import terminal
from rooms_cli.core.errors import InvalidData, NotFound
from rooms_cli.groups.model import Broadcast, Group, Member, Reply
from rooms_cli.store import cache, eventlog, files, jsonl, known, layout, order, schema
from rooms_cli.store.ids import is_valid_name, validate_name
from rooms_cli.store.locks import lock_path, locked
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

_torn_warned: set[str] = set()


def validate_group_name(name: str) -> str:
    return validate_name(name, "group name")


def log_path(project: Project, name: str) -> str:
    return layout.group_log(project, name)


def gather_lock_path(project: Project, name: str) -> str:
    """Held by the process gathering a group's broadcast (model calls run there, once)."""
    return layout.group_gather_lock(project, name)


def read_events(project: Project, name: str) -> list[dict[str, Any]]:
    """The events of one log file as written (file order); bad lines are reported and skipped."""
    path = log_path(project, name)
    scan = jsonl.scan(path)
    for lineno, reason in scan.bad:
        jsonl.warn(path, lineno, reason)
    if scan.torn and str(path) not in _torn_warned:
        _torn_warned.add(str(path))
        terminal.warn(f"{project.relative(path)}: unfinished last line skipped (a crash cut it)")
    return scan.records


_TOMBSTONES = ("renamed", "dissolved")


def replay(name: str, events: list[dict[str, Any]]) -> Group | None:
    """Build the group's state from its events (in `ordered` order); None when no `created` event.

    Merges of two clones: a second `created` of a live group merges into it (noted in
    `merge_notes`); a member added in both clones under one handle is kept once (same profile) or
    under a free handle (different profiles). `renamed` away or `dissolved` makes the group `gone`
    (a later `created` starts it afresh); a dissolve that did not see every event of the group (another
    clone kept using it) is overruled: the group stays, noted (unless it was renamed away: then its
    new name holds what the other clone did, and the old name stays gone). Events keep applying while
    gone, so nothing another clone added is dropped from the state. A group made anew under a dissolved name
    keeps the dissolved one aside: the other clone's events for its broadcasts still apply to it, and
    when they overrule the dissolve its members and broadcasts join the new group.
    """
    state = _Replay(name)
    for ev in eventlog.ordered(events):
        state.apply(ev)
    return state.finish()


def _on_broadcast(handler: Callable[[_Replay, dict[str, Any], Broadcast, Group], Group]
                  ) -> Callable[[_Replay, dict[str, Any]], Group | None]:
    """A handler of an event about one broadcast, given that broadcast and its group (`_addressed`);
    an event whose broadcast is unknown is left out."""
    def handle(self: _Replay, ev: dict[str, Any]) -> Group | None:
        found = self._addressed(ev)
        return None if found is None else handler(self, ev, *found)

    return handle


class _Replay:
    """The state of a replay between events, so a replay can resume (see `_load_cached`).

    `apply` checks the event against the schema doctor uses (store/schema.py, "group-event": one
    sentence naming the log and the field), then looks its kind up in `_HANDLERS`: one small method a
    kind, which changes the state and returns the group the event counts in (`event_count`, which a
    dissolve's `seen` is compared with), or None when it counts nowhere (a tombstone, an event for no
    known broadcast). A kind this version does not know counts in the group and changes nothing."""

    def __init__(self, name: str):
        self.name = name
        self.group: Group | None = None
        self.by_id: dict[str, Broadcast] = {}
        self.dissolve_seen: int | None = None
        # the dissolved group a later `created` replaced, with its broadcasts and its dissolve's `seen`
        self.before: Group | None = None
        self.before_ids: dict[str, Broadcast] = {}
        self.before_seen: int | None = None

    def apply(self, ev: dict[str, Any]) -> None:
        kind = ev.get("ev")
        if self.group is None and kind != "created":
            return
        wrong = schema.problem("group-event", ev, strict=False)
        if wrong is not None:
            raise InvalidData(f"groups/{self.name}.jsonl: {kind!r} event {ev.get('eid', '?')}: {wrong}")
        handler = _Replay._HANDLERS.get(kind, _Replay._unknown) if isinstance(kind, str) else _Replay._unknown
        try:
            counted = handler(self, ev)
        except (KeyError, TypeError, ValueError):
            raise InvalidData(f"groups/{self.name}.jsonl: malformed {kind!r} event: {ev!r}") from None
        if counted is not None:
            counted.event_count += 1

    def _created(self, ev: dict[str, Any]) -> Group | None:
        group = self.group
        if group is not None and not group.gone:
            group.merge_notes.append({"kind": "duplicate_created", "gid": str(ev.get("gid", "")), "ts": ev.get("ts")})
            return group
        if group is not None and group.gone == "dissolved":
            self.before, self.before_ids, self.before_seen = group, self.by_id, self.dissolve_seen
        self.group = Group(name=self.name, gid=str(ev.get("gid", "")), created=str(ev.get("ts", "")), ephemeral=bool(ev.get("ephemeral")))
        self.by_id, self.dissolve_seen = {}, None
        return self.group

    def _member_added(self, ev: dict[str, Any]) -> Group | None:
        group = self.live
        member = Member(handle=ev["handle"], profile=ev["profile"])
        same = group.member(member.handle)
        if same is None:
            group.members.append(member)
        elif same.profile != member.profile:
            taken = {m.handle for m in group.members}
            n = 2
            while f"{member.handle}-{n}" in taken:
                n += 1
            group.merge_notes.append({"kind": "handle_clash", "handle": member.handle, "profile": member.profile,
                                      "kept_as": f"{member.handle}-{n}"})
            group.members.append(Member(handle=f"{member.handle}-{n}", profile=member.profile))
        return group

    def _member_removed(self, ev: dict[str, Any]) -> Group | None:
        group = self.live
        group.members = [m for m in group.members if m.handle != ev["handle"]]
        return group

    def _broadcast(self, ev: dict[str, Any]) -> Group | None:
        group, by_id, gid = self.live, self.by_id, ev.get("gid")
        if self.before is not None and gid and gid == self.before.gid and gid != group.gid:
            # another clone broadcast to the dissolved group (the one order puts its concurrent
            # events after the new `created` when its clock ran later): it counts there
            group, by_id = self.before, self.before_ids
        if ev["id"] not in by_id:
            group.broadcasts.append(by_id.setdefault(ev["id"], Broadcast(
                id=ev["id"], fields=dict(ev.get("fields") or {}), members=[Member.from_json(m) for m in ev.get("members", [])],
                sender=str(ev.get("sender", "")), ts=str(ev.get("ts", "")), sub=dict(ev.get("sub") or {}), parent=ev.get("parent"),
            )))
        return group

    def _addressed(self, ev: dict[str, Any]) -> tuple[Broadcast, Group] | None:
        """The broadcast an event names and the group it counts in: the live group's, else the
        dissolved one's (another clone still working on it), else None (the event is left out)."""
        b = self.by_id.get(ev["id"])
        if b is not None:
            return b, self.live
        if ev["id"] in self.before_ids and self.before is not None:
            return self.before_ids[ev["id"]], self.before
        return None

    def _reply(self, ev: dict[str, Any], b: Broadcast, group: Group) -> Group:
        if b.in_flight and ev["handle"] not in b.replies:
            b.replies[ev["handle"]] = Reply(
                handle=ev["handle"], text=str(ev.get("text", "")), status=str(ev.get("status", "ok")),
                elapsed_s=float(ev.get("elapsed_s", 0.0)), ts=str(ev.get("ts", "")), source=str(ev.get("source", "")),
                cut=ev.get("cut") is True,
            )
        else:
            # the same member answered in two clones, or after the result: kept as dropped, never reduced
            b.dropped.append({"handle": ev["handle"], "text": ev.get("text", ""), "ts": ev.get("ts"),
                              "reason": f"{ev['handle']!r} already replied to {b.id}" if b.in_flight else f"broadcast {b.id} was already {b.status}"})
        return group

    def _dropped(self, ev: dict[str, Any], b: Broadcast, group: Group) -> Group:
        b.dropped.append({"handle": ev["handle"], "text": ev.get("text", ""), "reason": ev.get("reason", ""), "ts": ev.get("ts")})
        return group

    def _closed(self, ev: dict[str, Any], b: Broadcast, group: Group) -> Group:
        """`gathered` or `cancelled`: the first close of a broadcast counts, a second is noted."""
        kind = ev["ev"]
        if b.in_flight:
            b.status = kind
            b.closed_ts = ev.get("ts")
            b.result = ev.get("result") if kind == "gathered" else None
        else:
            group.merge_notes.append({"kind": "closed_twice", "broadcast_id": b.id, "as": kind, "was": b.status})
        return group

    def _renamed(self, ev: dict[str, Any]) -> Group | None:
        group = self.live
        if ev.get("from") == self.name and ev.get("to") != self.name:
            group.renamed_to.append(str(ev.get("to", "")))
            group.gone = group.gone or "renamed"
        else:
            group.renamed_from.append(str(ev.get("from", "")))
            group.gone = None
        return None  # a tombstone counts nowhere

    def _dissolved(self, ev: dict[str, Any]) -> Group | None:
        group = self.live
        group.dissolved_by.append(str(ev.get("by", "")))
        seen = ev.get("seen")
        if isinstance(seen, int) and not isinstance(seen, bool) and self.dissolve_seen is None:
            self.dissolve_seen = seen
        group.gone = "dissolved"
        return None  # a tombstone counts nowhere

    def _unknown(self, ev: dict[str, Any]) -> Group | None:
        return self.group  # a kind of a newer version: it counts, and changes nothing here

    @property
    def live(self) -> Group:
        """The group the events apply to (`apply` calls a handler other than `_created` only once there is one)."""
        assert self.group is not None
        return self.group

    _HANDLERS = {"created": _created, "member_added": _member_added, "member_removed": _member_removed,
                 "broadcast": _broadcast, "reply": _on_broadcast(_reply), "dropped": _on_broadcast(_dropped),
                 "gathered": _on_broadcast(_closed), "cancelled": _on_broadcast(_closed), "renamed": _renamed, "dissolved": _dissolved}

    def finish(self) -> Group | None:
        group, dissolve_seen, before = self.group, self.dissolve_seen, self.before
        if (group is not None and before is not None and self.before_seen is not None
                and before.event_count > self.before_seen):
            # the dissolve did not see everything another clone did: what it dissolved stays, in the new group
            taken = {m.handle for m in group.members}
            group.members = [m for m in before.members if m.handle not in taken] + group.members
            group.broadcasts = [b for b in before.broadcasts if group.broadcast(b.id) is None] + group.broadcasts
            group.merge_notes.append({"kind": "dissolve_overruled", "seen": self.before_seen, "events": before.event_count,
                                      "by": before.dissolved_by})
            if group.gone == "dissolved":
                group.gone = None
        if group is not None and group.gone == "dissolved" and dissolve_seen is not None and group.event_count > dissolve_seen:
            if group.renamed_to:
                # renamed away in another clone: what it did went with the rename (and what a third clone
                # appended here follows it, `gather_events`), so the old name stays gone, as the new one is kept
                group.gone = "renamed"
            else:
                group.gone = None
                group.merge_notes.append({"kind": "dissolve_overruled", "seen": dissolve_seen, "events": group.event_count,
                                          "by": group.dissolved_by})
        return group


def gather_events(project: Project, name: str, _visiting: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The events of group `name`: its own log, plus what another clone appended to the log it was
    renamed from after the rename copied it (those events are not lost, they follow the group), plus
    the replies, drops and closes of their shared broadcasts appended under another name the same
    log was renamed to (two clones renamed it differently: both groups hold each reply once)."""
    events = read_events(project, name)
    own = {eventlog.event_key(ev) for ev in events}
    sources = [ev.get("from") for ev in events if ev.get("ev") == "renamed" and ev.get("to") == name and ev.get("from") != name]
    for src in dict.fromkeys(s for s in sources if isinstance(s, str)):
        if src in _visiting or not is_valid_name(src) or not os.path.exists(log_path(project, src)):
            continue
        src_events = eventlog.ordered(gather_events(project, src, _visiting | {name}))
        departed = False
        for ev in src_events:
            kind = ev.get("ev")
            if kind == "renamed" and ev.get("from") == src and ev.get("to") == name:
                departed = True
            elif departed and kind == "created":
                break  # the old name was used again for a new group: that is not ours
            if kind not in _TOMBSTONES and eventlog.event_key(ev) not in own:
                events.append(ev)
                own.add(eventlog.event_key(ev))
        _gather_siblings(project, name, src, events, own)
    return events


_BROADCAST_EVENTS = ("reply", "dropped", "gathered", "cancelled")


def _gather_siblings(project: Project, name: str, src: str, events: list[dict[str, Any]], own: set[Any]) -> None:
    """The replies, drops and closes that another clone appended, under the other name of a group
    renamed to two names (`src` -> `name` here, `src` -> another name there, or on from it), to the
    broadcasts of the history they share: each copy of a shared broadcast holds them, as both hold
    what was appended to `src` (a reply is held exactly once by every group that holds its broadcast).
    Broadcasts sent under the other name stay there; only the log files are read, not their sources."""
    shared = {ev.get("id") for ev in events if ev.get("ev") == "broadcast"}
    read: dict[str, list[dict[str, Any]]] = {}  # `src` and every log renamed on from it (but `name`), read once
    todo = [src]
    while todo:
        log = todo.pop()
        read[log] = read_events(project, log)
        for ev in read[log]:
            to = ev.get("to")
            if (ev.get("ev") == "renamed" and ev.get("from") not in (None, to) and isinstance(to, str) and to != name
                    and to not in read and to not in todo and is_valid_name(to) and os.path.exists(log_path(project, to))):
                todo.append(to)
    for sibling in sorted(set(read) - {src}):
        for ev in read[sibling]:
            if ev.get("ev") in _BROADCAST_EVENTS and ev.get("id") in shared and eventlog.event_key(ev) not in own:
                events.append(ev)
                own.add(eventlog.event_key(ev))


def has_log(project: Project, name: str) -> bool:
    """A log file of that name exists (the group may be gone: renamed away or dissolved)."""
    return os.path.exists(log_path(project, name))


def load_any(project: Project, name: str) -> Group | None:
    """The replay of the log `name`, live or gone; None without a log."""
    if not has_log(project, name):
        return None
    state = _load_cached(project, name)
    if state is None:
        state = _Replay(name)
        for ev in eventlog.ordered(gather_events(project, name)):
            state.apply(ev)
    return state.finish()


_CACHE_VERSION = 4  # 4: JSON, keyed by the log's device and inode (3 was a pickle)


def _load_cached(project: Project, name: str) -> _Replay | None:
    """The replay of `name` resumed from `.rooms/run/groups/<name>.json`, or None (replay it all).

    The cache holds the replay state after the first `end` bytes of the log, their CRC-32, the last
    event's place in the one order (store/order.py) and the log's device and inode. It is used only
    while it is this very file (an append keeps its inode; a checkout, a merge or a clone makes another),
    those bytes are unchanged, the state has the shape of a replay (`_state_from`), and every event
    after them is whole, has a stamp and sorts after that key (an append by this or another process);
    anything else — a git merge, a torn or bad line, a rename, a missing, damaged or planted cache —
    means a full replay, which writes a fresh cache. The cache is JSON: a file a clone carried into
    `.rooms/run/` is at worst ignored, never run. Nothing else reads it; a clone without it is just as
    correct. Only events after `end` are decoded.
    """
    import zlib

    path = log_path(project, name)
    cache_path = layout.group_replay_cache(project, name)
    try:
        st = os.stat(path)  # before the read: an append in between makes the identity not match the bytes
        data = files.read_bytes(path)
    except OSError:
        return None
    cached = cache.load(cache_path, _CACHE_VERSION)
    resumed = _resumable(cached, name, st, data)
    if cached is not None and resumed is not None:
        state, last, end, crc = resumed, cached["last"], cached["end"], cached["crc"]
        new = data[end:]
    else:
        state, last, end, crc, new = _Replay(name), None, 0, 0, data
    if not new:
        return state
    scan = jsonl.parse_bytes(new)
    if scan.bad or scan.torn:
        return None
    keys = []
    for ev in scan.records:
        if not isinstance(ev.get("hlc"), str) or ev.get("ev") == "renamed" or not isinstance(ev.get("eid"), str):
            return None
        keys.append(order.sort_key(ev))
    ordered_keys = sorted(keys)
    if len(set(keys)) != len(keys) or (last is not None and ordered_keys[0] <= last):
        return None
    for _, ev in sorted(zip(keys, scan.records, strict=True), key=lambda item: item[0]):
        state.apply(ev)
    where = {"version": _CACHE_VERSION, "name": name, "log": [st.st_dev, st.st_ino], "end": len(data),
             "crc": zlib.crc32(new, crc)}
    blob = {**where, "last": ordered_keys[-1], "state": _state_json(state)}
    head = {**where, "group": _group_json(_head_of(state.group)), "dissolve_seen": state.dissolve_seen,
            "before": _group_json(_head_of(state.before)), "before_seen": state.before_seen,
            "stat": known.identity_of(st) if st.st_size == len(data) else None}
    cache.save(cache_path, blob)  # never fails: a read-only checkout only means a full replay every time
    cache.save(_head_path(cache_path), head)
    return state


def _resumable(cached: dict[str, Any] | None, name: str, st: os.stat_result, data: bytes) -> _Replay | None:
    """The state a cache document holds, when it covers a prefix of these bytes of this very log file
    and has the shape of a replay; None otherwise."""
    import zlib

    if (cached is None or cached.get("name") != name or cached.get("log") != [st.st_dev, st.st_ino]
            or not _whole_number(cached.get("end")) or not _whole_number(cached.get("crc"))
            or cached["end"] > len(data) or zlib.crc32(data[: cached["end"]]) != cached["crc"]):
        return None
    if not isinstance(cached.get("last"), str):
        return None
    return _state_from(cached.get("state"), name)


def _whole_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# --- the cache's JSON form of a replay: every object rebuilt and its fields' types checked ------------------


def _state_json(state: _Replay) -> dict[str, Any]:
    return {"group": _group_json(state.group), "dissolve_seen": state.dissolve_seen,
            "before": _group_json(state.before), "before_seen": state.before_seen}


def _group_json(group: Group | None) -> dict[str, Any] | None:
    import dataclasses

    return None if group is None else dataclasses.asdict(group)


def _state_from(doc: Any, name: str) -> _Replay | None:
    """The replay state a cache document holds; None when any part of it is not what `_state_json` writes."""
    try:
        state = _Replay(name)
        state.group, state.before = _group_from(doc["group"]), _group_from(doc["before"])
        state.dissolve_seen, state.before_seen = _count_or_none(doc["dissolve_seen"]), _count_or_none(doc["before_seen"])
    except (KeyError, TypeError, ValueError):
        return None
    # a broadcast's id leads to it in its group (the replay's index, rebuilt rather than stored twice)
    state.by_id = {b.id: b for b in state.group.broadcasts} if state.group else {}
    state.before_ids = {b.id: b for b in state.before.broadcasts} if state.before else {}
    return state


_Types = tuple[type, ...]
_TEXT_OR_NONE: _Types = (str, type(None))
_COUNT_OR_NONE: _Types = (int, type(None))
_GROUP_FIELDS: dict[str, _Types] = {"name": (str,), "gid": (str,), "created": (str,), "ephemeral": (bool,), "gone": _TEXT_OR_NONE,
                 "renamed_to": (list,), "renamed_from": (list,), "dissolved_by": (list,), "merge_notes": (list,),
                 "event_count": (int,), "broadcast_count": _COUNT_OR_NONE}
_BROADCAST_FIELDS: dict[str, _Types] = {"id": (str,), "fields": (dict,), "sender": (str,), "ts": (str,), "sub": (dict,),
                     "parent": (dict, type(None)), "dropped": (list,), "status": (str,), "result": (dict, type(None)),
                     "closed_ts": _TEXT_OR_NONE}
_REPLY_FIELDS: dict[str, _Types] = {"handle": (str,), "text": (str,), "status": (str,), "elapsed_s": (float, int), "ts": (str,),
                 "source": (str,), "cut": (bool,)}


def _fields(doc: Any, shape: dict[str, _Types], rest: tuple[str, ...] = ()) -> dict[str, Any]:
    """The fields of `doc` when it has exactly `shape`'s keys (and `rest`), each of its types; else
    ValueError (KeyError for a missing one)."""
    if not isinstance(doc, dict) or len(doc) != len(shape) + len(rest):
        raise ValueError("not a cached record")
    fields = {}
    for key, types in shape.items():
        value = doc[key]
        if not isinstance(value, types):
            raise ValueError(f"field {key!r}")
        fields[key] = value
    for key in rest:
        doc[key]  # noqa: B018 - present, or KeyError
    return fields


def _group_from(doc: Any) -> Group | None:
    if doc is None:
        return None
    return Group(**_fields(doc, _GROUP_FIELDS, ("members", "broadcasts")),
                 members=[Member.from_json(m) for m in doc["members"]],
                 broadcasts=[_broadcast_from(b) for b in doc["broadcasts"]])


def _broadcast_from(doc: Any) -> Broadcast:
    return Broadcast(**_fields(doc, _BROADCAST_FIELDS, ("members", "replies")),
                     members=[Member.from_json(m) for m in doc["members"]],
                     replies={str(handle): Reply(**_fields(reply, _REPLY_FIELDS)) for handle, reply in doc["replies"].items()})


def _count_or_none(value: Any) -> int | None:
    if value is None:
        return None
    if _whole_number(value):
        return int(value)
    raise ValueError("not a count")


HEAD_BROADCASTS = 20  # the newest broadcasts the head cache keeps (`group status` shows 5)


def _head_path(cache_path: str) -> str:
    return cache_path[: -len(".json")] + ".head.json"


def _head_of(group: Group | None) -> Group | None:
    """The group with only what `group status` reads: its newest HEAD_BROADCASTS broadcasts (a suffix
    of the full list), every broadcast in flight and the newest gathered one with a result (member
    states), in log order; `broadcast_count` says how many there are in all."""
    import dataclasses

    if group is None:
        return None
    keep = {id(b) for b in group.broadcasts[-HEAD_BROADCASTS:]} | {id(b) for b in group.broadcasts if b.in_flight}
    last = next((b for b in reversed(group.broadcasts) if b.status == "gathered" and b.result), None)
    if last is not None:
        keep.add(id(last))
    head = dataclasses.replace(group, broadcasts=[b for b in group.broadcasts if id(b) in keep],
                               members=list(group.members), merge_notes=list(group.merge_notes))
    head.broadcast_count = len(group.broadcasts)
    return head


def load_head(project: Project, name: str) -> Group | None:
    """Like `load_any`, but the group's broadcasts are only its newest HEAD_BROADCASTS (plus those in
    flight and the newest gathered one with a result): what `group status` shows, loaded in the same
    time however long the history. Read from `.rooms/run/groups/<name>.head.json` while it covers
    exactly the log's bytes of this very file: the same stat (inode, size, mtime; the log only grows, a
    merge rewrites it), else the same device and inode, length and CRC-32; and while it has the shape
    of a replay; otherwise the full replay (which rewrites it).
    """
    import zlib

    if not has_log(project, name):
        return None
    head = cache.load(_head_path(layout.group_replay_cache(project, name)), _CACHE_VERSION)
    log_file = log_path(project, name)
    fresh = head is not None and head.get("name") == name
    if head is not None and fresh and head.get("stat") != cache.identity(log_file):
        try:
            st = os.stat(log_file)
            data = files.read_bytes(log_file)
        except OSError:
            data = None
        fresh = (data is not None and head.get("log") == [st.st_dev, st.st_ino]
                 and head.get("end") == len(data) and zlib.crc32(data) == head.get("crc"))
    state = _state_from(head, name) if head is not None and fresh else None
    if state is None:
        return load_any(project, name)
    return state.finish()


def load(project: Project, name: str, *, head: bool = False) -> Group:
    """The live group as its log says; NotFound names the known groups (or where it went).
    `head=True`: only its newest broadcasts (see `load_head`)."""
    group = load_head(project, name) if head else load_any(project, name)
    if group is None or group.gone:
        if group is not None and group.gone == "renamed":
            raise NotFound(f"no group {name!r}: it was renamed to {' and '.join(map(repr, group.renamed_to))}")
        known = ", ".join(names(project)) or "none yet (rooms group spawn NAME --profile AGENT)"
        raise NotFound(f"no group {name!r}; known groups: {known}")
    group.name = name
    return group


def load_optional(project: Project, name: str) -> Group | None:
    """The live group, or None (no log, or renamed away, or dissolved)."""
    group = load_any(project, name)
    return group if group is not None and not group.gone else None


def exists(project: Project, name: str) -> bool:
    """A live group of that name exists."""
    group = load_head(project, name)
    return group is not None and not group.gone


def log_names(project: Project) -> list[str]:
    """Every group log, live or gone."""
    return layout.record_names(project, layout.groups_dir(project), ".jsonl", "group name")


def names(project: Project) -> list[str]:
    """The live groups."""
    return [n for n in log_names(project) if exists(project, n)]


def event(kind: str, **data: Any) -> dict[str, Any]:
    """A new event: its kind, time and unique id (`hlc` is added when it is appended)."""
    return eventlog.event("ev", kind, **data)


def append(project: Project, name: str, *events: dict[str, Any], lock: bool = False) -> None:
    """Append events in one write. `lock=True` takes the log's lock; otherwise the caller holds it.

    Each event gets its stamp (`hlc`, store/clock.py); an event that already has one (copied by a
    rename) keeps it. Each is checked first as the replay will read it (store/schema.py; an event of a
    newer version, copied by a rename, passes as it does there): nothing written is refused.
    """
    path = log_path(project, name)
    for ev in events:
        schema.validate("group-event", ev, f"groups/{name}.jsonl", strict=False)
    if lock:
        with locked(path, what=f"group {name!r}"):
            eventlog.append(path, events, lock=False)
    else:
        eventlog.append(path, events, lock=False)


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
        files.remove(target)
