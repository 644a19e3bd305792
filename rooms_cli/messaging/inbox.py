"""Inboxes: `.rooms/inbox/<agent>.jsonl`, one message a line, append-only.

Every part that tells an agent something delivers it here (direct messages, broadcasts, group
envelopes, spawn output). A record:

    {"n": 3, "id": "i-…", "ts": ISO, "from": "alice", "to": "bob", "kind": "direct",
     "text": "…", "tag": "group:rev/broadcast:b-…" (optional), "reply_to": 2 (optional), "meta": {…}}

`n` is a small integer, unique within one inbox and increasing, so an agent can say `--reply-to 3`.
It is assigned under the inbox's lock. Kinds: direct, broadcast, group, group_cancel, spawn_output,
spawn_error, system.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rooms_cli.store import jsonl
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id, validate_name
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project


@dataclass
class InboxMessage:
    n: int
    id: str
    ts: str
    sender: str
    to: str
    kind: str
    text: str
    tag: str | None = None
    reply_to: int | None = None
    meta: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        data = {"n": self.n, "id": self.id, "ts": self.ts, "from": self.sender, "to": self.to, "kind": self.kind, "text": self.text}
        if self.tag:
            data["tag"] = self.tag
        if self.reply_to is not None:
            data["reply_to"] = self.reply_to
        if self.meta:
            data["meta"] = self.meta
        return data

    @classmethod
    def from_json(cls, data: dict) -> InboxMessage:
        return cls(
            n=int(data.get("n", 0)), id=str(data.get("id", "")), ts=str(data.get("ts", "")),
            sender=str(data.get("from", "")), to=str(data.get("to", "")), kind=str(data.get("kind", "direct")),
            text=str(data.get("text", "")), tag=data.get("tag"), reply_to=data.get("reply_to"), meta=data.get("meta") or {},
        )


def inbox_path(project: Project, agent: str):
    return project.path("inbox", validate_name(agent, "agent id") + ".jsonl")


def deliver(
    project: Project, to: str, sender: str, text: str, *, kind: str = "direct",
    tag: str | None = None, reply_to: int | None = None, meta: dict | None = None,
) -> InboxMessage:
    """Append a message to `to`'s inbox, numbering it under the inbox lock."""
    path = inbox_path(project, to)
    with locked(path):
        last = jsonl.tail(path, 1)
        n = int(last[0].get("n", 0)) + 1 if last else 1
        msg = InboxMessage(n=n, id=new_id("i"), ts=now_iso(), sender=sender, to=to, kind=kind, text=text,
                           tag=tag, reply_to=reply_to, meta=dict(meta or {}))
        jsonl.append_many(path, [msg.to_json()], lock=False)
    return msg


def read_inbox(project: Project, agent: str) -> list[InboxMessage]:
    """Every message in `agent`'s inbox, oldest first."""
    return [InboxMessage.from_json(r) for r in jsonl.read(inbox_path(project, agent))]
