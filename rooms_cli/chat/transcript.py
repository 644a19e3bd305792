"""The transcript: `.rooms/rooms/<room>/transcript.jsonl`, one message record a line, append-only.

A record: {"id": "m-…", "ts": ISO, "room", "speaker", "kind", "text", …optional "model", "usage",
"mode", "meta"}. Kinds: message (a person or an agent), pass, flavor, system, budget_exhausted,
handoff_suggested, join, kick, mute, unmute, handoff, continue, roundtable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rooms_cli.chat.rooms import transcript_path
from rooms_cli.store import jsonl
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id
from rooms_cli.store.paths import Project

KINDS = (
    "message", "pass", "flavor", "system", "budget_exhausted", "handoff_suggested",
    "join", "kick", "mute", "unmute", "handoff", "continue", "roundtable",
)


@dataclass
class Message:
    id: str
    ts: str
    room: str
    speaker: str
    kind: str
    text: str
    model: str | None = None
    usage: dict | None = None
    meta: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        data: dict = {"id": self.id, "ts": self.ts, "room": self.room, "speaker": self.speaker, "kind": self.kind, "text": self.text}
        if self.model:
            data["model"] = self.model
        if self.usage:
            data["usage"] = self.usage
        if self.meta:
            data["meta"] = self.meta
        return data

    @classmethod
    def from_json(cls, data: dict) -> Message:
        return cls(
            id=str(data.get("id", "")),
            ts=str(data.get("ts", "")),
            room=str(data.get("room", "")),
            speaker=str(data.get("speaker", "")),
            kind=str(data.get("kind", "message")),
            text=str(data.get("text", "")),
            model=data.get("model"),
            usage=data.get("usage"),
            meta=data.get("meta") or {},
        )


def make_message(room: str, speaker: str, text: str, kind: str = "message", **extra) -> Message:
    return Message(id=new_id("m"), ts=now_iso(), room=room, speaker=speaker, kind=kind, text=text, **extra)


def append_message(project: Project, room: str, speaker: str, text: str, kind: str = "message", **extra) -> Message:
    """Append one record to the room's transcript and return it."""
    msg = make_message(room, speaker, text, kind, **extra)
    jsonl.append(transcript_path(project, room), msg.to_json())
    return msg


def in_order(records: list[dict]) -> list[dict]:
    """Records by time (a stable sort: records of one millisecond keep their file order), each id once.

    A git merge (`merge=union`) puts one clone's new lines after the other's, so a merged transcript
    is not in file order by time; readers sort it back."""
    seen: set = set()
    unique = []
    for record in records:
        key = record.get("id") if isinstance(record.get("id"), str) and record.get("id") else id(record)
        if key not in seen:
            seen.add(key)
            unique.append(record)
    return sorted(unique, key=lambda r: str(r.get("ts", "")))


def _sorted(records: list[dict]) -> bool:
    stamps = [str(r.get("ts", "")) for r in records]
    ids = [r["id"] for r in records if isinstance(r.get("id"), str)]
    return all(a <= b for a, b in zip(stamps, stamps[1:], strict=False)) and len(set(ids)) == len(ids)


def read_transcript(project: Project, room: str) -> list[Message]:
    return [Message.from_json(r) for r in in_order(jsonl.read(transcript_path(project, room)))]


def tail(project: Project, room: str, count: int) -> list[Message]:
    """The last `count` records by time, read from the end of the file (cost independent of its
    length) while the file is in time order; a merged file that is not is read whole and sorted."""
    path = transcript_path(project, room)
    records = jsonl.tail(path, count + 1)
    if not _sorted(records):
        records = in_order(jsonl.read(path))
    return [Message.from_json(r) for r in records[-count:]] if count > 0 else []
