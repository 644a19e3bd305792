"""The transcript: `.rooms/rooms/<room>/transcript.jsonl`, one message record a line, append-only.

A record: {"id": "m-…", "ts": ISO, "room", "speaker", "kind", "text", …optional "model", "usage",
"mode", "meta"}. Kinds: message (a person or an agent), pass, flavor, repeat (a reply that copied
another's message: not spoken, costs nothing), system, budget_exhausted,
handoff_suggested, join, kick, mute, unmute, handoff, continue, roundtable.
"""

from __future__ import annotations

from rooms_cli.chat.rooms import transcript_path
from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.store import jsonl, order, schema
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    import os
    from typing import Any


@dataclass
class Message:
    """One line of a room's transcript: who said what and when, its kind (message, join…), model, usage."""

    id: str
    ts: str
    room: str
    speaker: str
    kind: str
    text: str
    model: str | None = None
    usage: dict[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "ts": self.ts, "room": self.room, "speaker": self.speaker, "kind": self.kind, "text": self.text}
        if self.model:
            data["model"] = self.model
        if self.usage:
            data["usage"] = self.usage
        if self.meta:
            data["meta"] = self.meta
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Message:
        # by position, in the order of the fields: a 10 000-line read pays a third less than by keyword,
        # which pays for the schema check of each record (read_transcript)
        get = data.get
        return cls(str(get("id", "")), str(get("ts", "")), str(get("room", "")), str(get("speaker", "")),
                   str(get("kind", "message")), str(get("text", "")), get("model"), get("usage"), get("meta") or {})


def make_message(room: str, speaker: str, text: str, kind: str = "message", **extra: Any) -> Message:
    return Message(id=new_id("m"), ts=now_iso(), room=room, speaker=speaker, kind=kind, text=text, **extra)


def append_message(project: Project, room: str, speaker: str, text: str, kind: str = "message", **extra: Any) -> Message:
    """Append one record to the room's transcript and return it."""
    from rooms_cli.store import schema

    msg = make_message(room, speaker, text, kind, **extra)
    path = transcript_path(project, room)
    jsonl.append_many(path, schema.checked("transcript", [msg.to_json()], project.relative(path)))
    return msg


def in_order(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records in the one order of every log (store/order.py: stamp, then id), each record once.

    A git merge (`merge=union`) or `rooms sync` puts one clone's new lines after the other's, so a
    merged transcript is not in file order; readers sort it back."""
    return order.ordered(records)


def _sorted(records: list[dict[str, Any]]) -> bool:
    keys = [order.sort_key(r) for r in records]
    ids = [r["id"] for r in records if isinstance(r.get("id"), str)]
    return all(a <= b for a, b in zip(keys, keys[1:], strict=False)) and len(set(ids)) == len(ids)


def read_transcript(project: Project, room: str) -> list[Message]:
    return [Message.from_json(r) for r in in_order(_usable(project, room, jsonl.read(transcript_path(project, room))))]


def _usable(project: Project, room: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records `schema.problem` passes, the check doctor makes: a wrong-typed one (`"text": 5`) is
    skipped with a warning like a line that does not parse, the others are kept."""
    return schema.usable("transcript", records, project.relative(transcript_path(project, room)))


def tail(project: Project, room: str, count: int) -> list[Message]:
    """The last `count` records by time.

    A union merge puts one clone's new lines after the other's, and the seam can lie anywhere, so
    the end of the file alone cannot tell whether it is in time order. A cache under `.rooms/run/`
    (this machine's, git-ignored) records, for the file as it was last read (same inode: git writes
    a changed file anew, rooms only appends), where its whole lines end, the time of the last one,
    and how many records at its end are in time order after everything before them. A call reads
    only the lines appended since; while the ordered end holds `count` records it reads the last
    `count` from the end of the file (cost independent of its length). Otherwise — the first call
    after a merge or a pull — it reads the file whole, sorts it, and records the new ordered end.
    """
    if count <= 0:
        return []
    import os

    from rooms_cli.store import cache
    from rooms_cli.store.layout import transcript_order_file

    path = transcript_path(project, room)
    cache_path = transcript_order_file(project, room)
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return []
    except OSError:
        stat = None
    known = _order_cache(cache.load(cache_path, ORDER_VERSION))
    if stat is not None and known is not None and (known["ino"], known["dev"]) == (stat.st_ino, stat.st_dev) \
            and known["end"] <= stat.st_size:
        since = jsonl.scan(path, known["end"])
        new = since.records
        if not since.bad and _sorted(new) and (not new or order.sort_key(new[0]) >= known["last"]):
            ordered = known["ordered"] + len(new)
            if new:
                _save_order(cache_path, stat, since.end, order.sort_key(new[-1]), ordered)
            if ordered >= count:
                recent = _usable(project, room, jsonl.tail(path, count))
                if len(recent) == count:  # else a record was skipped: the whole read below finds `count` good ones
                    return [Message.from_json(r) for r in recent]
    records = jsonl.read(path)
    if stat is not None:
        end = jsonl.scan(path).end if records else 0
        _save_order(cache_path, stat, end, order.sort_key(records[-1]) if records else "", _ordered_end(records))
    return [Message.from_json(r) for r in in_order(_usable(project, room, records))[-count:]]


ORDER_VERSION = 1


def _order_cache(data: dict[str, Any] | None) -> dict[str, Any] | None:
    if data is not None and all(isinstance(data.get(k), int) for k in ("ino", "dev", "end", "ordered")) \
            and isinstance(data.get("last"), str):
        return data
    return None


def _save_order(path: str, stat: os.stat_result, end: int, last: str, ordered: int) -> None:
    from rooms_cli.store import cache

    cache.save(path, {"version": ORDER_VERSION, "ino": stat.st_ino, "dev": stat.st_dev, "end": end, "last": last,
                      "ordered": ordered})


def _ordered_end(records: list[dict[str, Any]]) -> int:
    """How many records at the end of `records` are in time order, each id once in the file, and not
    older than any record before them: their file order is their place in `in_order`."""
    from collections import Counter

    stamps = [order.sort_key(r) for r in records]
    ids = Counter(r["id"] for r in records if isinstance(r.get("id"), str))
    start = len(records)
    while start > 0:
        rid = records[start - 1].get("id")
        if isinstance(rid, str) and ids[rid] > 1:
            break
        if start < len(records) and stamps[start - 1] > stamps[start]:
            break
        start -= 1
    before = max(stamps[:start], default="")
    while start < len(records) and stamps[start] < before:
        start += 1
    return len(records) - start
