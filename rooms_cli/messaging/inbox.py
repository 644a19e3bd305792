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

from rooms_cli.store import jsonl, layout
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id
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
        # a hand-edited or badly merged line may hold any JSON: wrong types read as absent
        reply_to, tag, meta = data.get("reply_to"), data.get("tag"), data.get("meta")
        return cls(
            n=_number(data), id=str(data.get("id", "")), ts=str(data.get("ts", "")),
            sender=str(data.get("from", "")), to=str(data.get("to", "")), kind=str(data.get("kind", "direct")),
            text=str(data.get("text", "")), tag=tag if isinstance(tag, str) else None,
            reply_to=reply_to if isinstance(reply_to, int) and not isinstance(reply_to, bool) else None,
            meta=meta if isinstance(meta, dict) else {},
        )


def inbox_path(project: Project, agent: str):
    return layout.inbox_file(project, agent)


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


# Read state: `.rooms/inbox/read/<agent>.jsonl`, append-only lines {"ts", "upto": n}. Messages are
# numbered in append order, so "read up to n" is the whole state; the highest `upto` wins, which
# also makes a git union merge of two clones' lines come out right. (A subdirectory, not
# `<agent>.read.jsonl`, so no agent name can collide with another agent's inbox file.)


def read_state_path(project: Project, agent: str):
    return layout.inbox_read_file(project, agent)


def read_upto(project: Project, agent: str) -> int:
    """The highest message number `agent` has read (0: none)."""
    best = 0
    for record in jsonl.read(read_state_path(project, agent)):
        try:
            best = max(best, int(record.get("upto", 0)))
        except (TypeError, ValueError):
            continue
    return best


def mark_read(project: Project, agent: str, upto: int) -> bool:
    """Record that `agent` has read every message up to `upto`; False when nothing changed."""
    path = read_state_path(project, agent)
    with locked(path):
        if upto <= read_upto(project, agent):
            return False
        jsonl.append_many(path, [{"ts": now_iso(), "upto": int(upto)}], lock=False)
    return True


def unread_messages(project: Project, agent: str) -> list[InboxMessage]:
    """Messages of `agent` not read yet, oldest first.

    Read from the end of the inbox, so the cost follows the number of unread messages, not the
    size of the inbox (numbers grow along the file).
    """
    upto = read_upto(project, agent)
    path = inbox_path(project, agent)
    count = 32
    while True:
        records = jsonl.tail(path, count)
        if len(records) < count or _number(records[0]) <= upto:
            return [InboxMessage.from_json(r) for r in records if _number(r) > upto]
        count *= 4


def _number(record: dict) -> int:
    try:
        return int(record.get("n", 0))
    except (TypeError, ValueError):
        return 0


def take_unread(project: Project, agent: str) -> list[InboxMessage]:
    """The unread messages of `agent`, marked read (they are being shown to it now)."""
    messages = unread_messages(project, agent)
    if messages:
        mark_read(project, agent, max(m.n for m in messages))
    return messages


@dataclass
class InboxView:
    """What `rooms inbox` shows: the messages, which were unread, and whether they are now marked read."""

    agent: str
    messages: list[InboxMessage]
    read_upto: int  # before this read: messages numbered above it were unread
    fresh: int  # how many of `messages` were unread
    marked_read: bool

    def unread(self, message: InboxMessage) -> bool:
        return message.n > self.read_upto

    def to_json(self) -> dict:
        return {"agent": self.agent, "unread": self.fresh, "marked_read": self.marked_read,
                "messages": [{**m.to_json(), "read": not self.unread(m)} for m in self.messages]}


def open_inbox(project: Project, agent: str, *, unread_only: bool = False, peek: bool = False) -> InboxView:
    """`agent`'s inbox (or only its unread messages), the unread ones marked read unless `peek`."""
    upto = read_upto(project, agent)
    messages = unread_messages(project, agent) if unread_only else read_inbox(project, agent)
    fresh = [m for m in messages if m.n > upto]
    if fresh and not peek:
        mark_read(project, agent, max(m.n for m in fresh))
    return InboxView(agent=agent, messages=messages, read_upto=upto, fresh=len(fresh), marked_read=bool(fresh) and not peek)


def find_message(project: Project, agent: str, n: int) -> InboxMessage:
    """Message number `n` in `agent`'s inbox, or NotFound."""
    from rooms_cli.errors import NotFound

    for message in read_inbox(project, agent):
        if message.n == n:
            return message
    raise NotFound(f"no message {n} in {agent}'s inbox (see `rooms inbox --as {agent}`)")


def inbox_owners(project: Project) -> list[str]:
    """Agents that have an inbox file."""
    folder = layout.inbox_dir(project)
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.jsonl") if p.is_file())
