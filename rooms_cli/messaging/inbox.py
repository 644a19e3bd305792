"""Inboxes: `.rooms/inbox/<agent>.jsonl`, one message a line, append-only.

Every part that tells an agent something delivers it here (direct messages, broadcasts, group
envelopes, spawn output). A record:

    {"n": 3, "id": "i-…", "ts": ISO, "from": "alice", "to": "bob", "kind": "direct",
     "text": "…", "tag": "group:rev/broadcast:b-…" (optional), "reply_to": 2 (optional), "meta": {…}}

Kinds: direct, broadcast, group, group_cancel, spawn_output, spawn_error, system.

Merging in git (docs/git.md): the inbox is read in time/id order, never in file order. `id` is the
message's identity (unique across clones). `n` is a small number for people to type: the next one
after the highest in the inbox, assigned under the inbox's lock, so one clone never repeats a number;
two clones that each received a message offline can both hand out the same `n`. After such a merge
a number shared by several messages is not shown: each of them is referred to by a short prefix of
its id instead (its `ref`), `--reply-to 2` is refused as ambiguous (naming the candidates), and any
unique id prefix is accepted, like git. Numbers never change once shown, so a reply cannot go to
the wrong sender because of a merge.
"""

from __future__ import annotations

from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.store import jsonl, layout, order, schema
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

NUMBER_WINDOW = 256  # lines read back to find the highest number when delivering
SHORT_ID = 10  # characters of an id body shown, at least, when a number is shared after a merge


@dataclass
class InboxMessage:
    """One message of an inbox, numbered in the order it arrived."""

    n: int
    id: str
    ts: str
    sender: str
    to: str
    kind: str
    text: str
    tag: str | None = None
    reply_to: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    ref: str = ""  # how to refer to it: its number, or a short id prefix when a merge duplicated the number

    @property
    def key(self) -> str:
        """What a read mark names: the id (a hand-edited line without one: its number and time)."""
        return self.id or f"#{self.n}@{self.ts}"

    @property
    def label(self) -> str:
        """`#3`, or `#i-01M83SV5SY` for a message whose number another message shares after a merge."""
        return f"#{self.ref or self.n}"

    def to_json(self) -> dict[str, Any]:
        data = {"n": self.n, "id": self.id, "ts": self.ts, "from": self.sender, "to": self.to, "kind": self.kind, "text": self.text}
        if self.tag:
            data["tag"] = self.tag
        if self.reply_to is not None:
            data["reply_to"] = self.reply_to
        if self.meta:
            data["meta"] = self.meta
        return data

    def shown(self, read: bool) -> dict[str, Any]:
        """The message record every --json output and MCP result shows (docs/json.md: message): the
        stored line plus `ref` (what --reply-to takes) and whether it had been read."""
        return {**self.to_json(), "ref": self.ref or str(self.n), "read": read}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> InboxMessage:
        # a hand-edited or badly merged line may hold any JSON: wrong types read as absent
        # by position, in the order of the fields: a third less than by keyword over a 10 000-message inbox,
        # which pays for the schema check of each record (read_inbox)
        get = data.get
        reply_to, tag, meta = get("reply_to"), get("tag"), get("meta")
        return cls(_number(data), str(get("id", "")), str(get("ts", "")), str(get("from", "")), str(get("to", "")),
                   str(get("kind", "direct")), str(get("text", "")), tag if isinstance(tag, str) else None,
                   reply_to if isinstance(reply_to, int) and not isinstance(reply_to, bool) else None,
                   meta if isinstance(meta, dict) else {})


def inbox_path(project: Project, agent: str) -> str:
    return layout.inbox_file(project, agent)


def deliver(
    project: Project, to: str, sender: str, text: str, *, kind: str = "direct",
    tag: str | None = None, reply_to: int | None = None, meta: dict[str, Any] | None = None,
) -> InboxMessage:
    """Append a message to `to`'s inbox, numbering it under the inbox lock.

    The number follows the highest of the last lines (not just the last line: after a union merge
    the last line may come from the clone that numbered lower).
    """
    path = inbox_path(project, to)
    with locked(path):
        n = _highest_number(path) + 1
        msg = InboxMessage(n=n, id=new_id("i"), ts=now_iso(), sender=sender, to=to, kind=kind, text=text,
                           tag=tag, reply_to=reply_to, meta=dict(meta or {}))
        jsonl.append_many(path, schema.checked("inbox", [msg.to_json()], project.relative(path)), lock=False)
        _note_highest(path, n)
    return msg


# inbox path -> (its seal (store/known.seal) just after this process last numbered a message in it, the
# highest number up to there). A process that delivers again (an MCP session, a group's fan-out) reads
# only what others appended since instead of the last NUMBER_WINDOW lines; a file replaced, rewritten
# or cut short since (a merge, a checkout) fails the seal and is read back as before.
_HIGHEST: dict[str, tuple[list[Any], int]] = {}
APPENDED_MAX = 1 << 16  # bytes appended by others since, parsed; more: the read-back


def _highest_number(path: str) -> int:
    """The highest message number in the inbox at `path` (its lock held): from what this process
    noted when the file still carries the seal it noted, else from its last NUMBER_WINDOW lines."""
    from rooms_cli.store import files, known

    noted = _HIGHEST.get(str(path))
    if noted is not None:
        seal, highest = noted
        end = seal[1]
        if known.seal(path, end) == seal:
            appended = files.read_from(path, end, APPENDED_MAX + 1)
            if len(appended) <= APPENDED_MAX and b"<<<<<<<" not in appended:
                scan = jsonl.parse_bytes(appended)
                if not scan.bad:  # a bad line: the read-back warns about it as every read does
                    return max([highest, *(_number(r) for r in scan.records)])
    _HIGHEST.pop(str(path), None)
    return max((_number(r) for r in jsonl.tail(path, NUMBER_WINDOW)), default=0)


def _note_highest(path: str, n: int) -> None:
    """Remember, with the inbox's seal at its end, that `n` (just appended) is its highest number."""
    import os

    from rooms_cli.store import known

    known.remember(_HIGHEST, str(path), (known.seal(path, os.stat(path).st_size), n))


def read_inbox(project: Project, agent: str) -> list[InboxMessage]:
    """Every message in `agent`'s inbox, oldest first, each with its `ref`.

    Order: the one order of every log (store/order.py): stamp, then id; a message seen twice once.
    """
    path = inbox_path(project, agent)
    records = order.ordered(usable(project, "inbox", jsonl.read(path), path))
    messages = [InboxMessage.from_json(r) for r in records]
    assign_refs(messages)
    return messages


def usable(project: Project, kind: str, records: list[dict[str, Any]], path: str) -> list[dict[str, Any]]:
    """The records of an inbox (`kind` "inbox") or of its read marks ("inbox-read") that `schema.problem`
    passes, the check doctor makes: a wrong-typed one (`"n": "x"`, `"read": "i-1"`) is skipped with a
    warning naming it, like a line that does not parse, and every other one is kept."""
    return schema.usable(kind, records, project.relative(path))


def assign_refs(messages: list[InboxMessage]) -> None:
    """Give each message its `ref`: its number when no other message has it, else a short id prefix."""
    from collections import Counter

    counts = Counter(m.n for m in messages)
    ids = [m.id for m in messages]
    for m in messages:
        m.ref = str(m.n) if counts[m.n] == 1 and m.n > 0 else short_id(m.id, ids)


def short_id(full: str, ids: list[str]) -> str:
    """The shortest prefix of `full` (at least SHORT_ID characters of its body) no other id starts with."""
    kind, _, body = full.partition("-")
    others = [i for i in ids if i != full]
    for length in range(SHORT_ID, len(body) + 1):
        prefix = f"{kind}-{body[:length]}"
        if not any(o.startswith(prefix) for o in others):
            return prefix
    return full


# Read state: `.rooms/inbox/read/<agent>.jsonl`, append-only lines {"id": "r-…", "ts", "read": [message
# ids]}: a message is read when some line names its id. Two clones that read different messages
# merge (union) into the set of both; nothing unread can look read. (A subdirectory, not
# `<agent>.read.jsonl`, so no agent name can collide with another agent's inbox file.)


def read_state_path(project: Project, agent: str) -> str:
    return layout.inbox_read_file(project, agent)


@dataclass
class ReadMarks:
    """What an agent has marked read: the ids of the messages, and how many marks were skipped (wrongly typed)."""

    ids: set[str] = field(default_factory=set)
    skipped: int = 0

    def covers(self, message: InboxMessage) -> bool:
        return message.key in self.ids


def read_marks(project: Project, agent: str) -> ReadMarks:
    marks = ReadMarks()
    path = read_state_path(project, agent)
    records = jsonl.read(path)
    kept = usable(project, "inbox-read", records, path)
    for record in kept:
        marks.ids.update(record.get("read", ()))
    marks.skipped = len(records) - len(kept)
    return marks


def mark_read(project: Project, agent: str, messages: list[InboxMessage]) -> bool:
    """Record that `agent` has read `messages`; False when they all were read already."""
    path = read_state_path(project, agent)
    with locked(path):
        marks = read_marks(project, agent)
        fresh = [m.key for m in messages if not marks.covers(m)]
        if not fresh:
            return False
        written: list[dict[str, Any]] = [{"id": new_id("r"), "ts": now_iso(), "read": fresh}]
        jsonl.append_many(path, schema.checked("inbox-read", written, project.relative(path)), lock=False)
    return True


def unread_messages(project: Project, agent: str) -> list[InboxMessage]:
    """Messages of `agent` not read yet, oldest first."""
    marks = read_marks(project, agent)
    return [m for m in read_inbox(project, agent) if not marks.covers(m)]


def _number(record: dict[str, Any]) -> int:
    try:
        return int(record.get("n", 0))
    except (TypeError, ValueError):
        return 0


def take_unread(project: Project, agent: str) -> list[InboxMessage]:
    """The unread messages of `agent`, marked read (they are being shown to it now)."""
    messages = unread_messages(project, agent)
    if messages:
        mark_read(project, agent, messages)
    return messages


@dataclass
class InboxView:
    """What `rooms inbox` shows: the messages, which were unread, and whether they are now marked read."""

    agent: str
    messages: list[InboxMessage]
    unread_ids: set[str]  # before this read: the messages that were unread
    marked_read: bool
    remaining: int = 0  # messages not shown: past `limit` (not marked read), or older than the last N
    next_cursor: str | None = None  # the id to pass as `after` for the messages past `limit`

    @property
    def fresh(self) -> int:
        """How many of the inbox's messages were unread."""
        return len(self.unread_ids)

    def unread(self, message: InboxMessage) -> bool:
        return message.key in self.unread_ids

    def to_json(self) -> dict[str, Any]:
        shown = [m.shown(read=not self.unread(m)) for m in self.messages]
        return {"agent": self.agent, "unread": self.fresh, "marked_read": self.marked_read, "messages": shown,
                "count": len(shown), "remaining": self.remaining, "next_cursor": self.next_cursor}


def open_inbox(project: Project, agent: str, *, unread_only: bool = False, peek: bool = False,
               limit: int | None = None, after: str | None = None, last: int | None = None) -> InboxView:
    """`agent`'s inbox (or only its unread messages), oldest first: those after message id `after`, at
    most `limit`; the unread ones shown are marked read unless `peek` (those past the limit stay unread).

    With `last`: the unread messages and the last `last` messages (`rooms inbox`); `remaining` counts the
    older read ones left out, which no cursor fetches (all of them: `last=None`)."""
    from rooms_cli.core.shapes import page

    marks = read_marks(project, agent)
    everything = read_inbox(project, agent)
    fresh = [m for m in everything if not marks.covers(m)]
    if last is not None:
        shown = with_latest(fresh, everything[-last:] if last else [])
        remaining, cursor = len(everything) - len(shown), None
    else:
        listed = page("messages", fresh if unread_only else everything, limit=limit, after=after, key=lambda m: m.id)
        shown, remaining, cursor = listed["messages"], listed["remaining"], listed["next_cursor"]
    shown_fresh = [m for m in shown if not marks.covers(m)]
    if shown_fresh and not peek:
        mark_read(project, agent, shown_fresh)
    return InboxView(agent=agent, messages=shown, unread_ids={m.key for m in fresh}, marked_read=bool(shown_fresh) and not peek,
                     remaining=remaining, next_cursor=cursor)


def with_latest(unread: list[InboxMessage], latest: list[InboxMessage]) -> list[InboxMessage]:
    """The unread messages and the latest ones, in the one order: every message not among the latest
    sorts before them, so the unread ones outside them come first."""
    keys = {m.key for m in latest}
    return [m for m in unread if m.key not in keys] + latest


def find_message(project: Project, agent: str, ref: str | int) -> InboxMessage:
    """A message of `agent`'s inbox by number (`3`, `#3`) or by any unique prefix of its id.

    A number two messages share after a merge is refused as ambiguous, naming both, so a reply
    never goes to the wrong sender.
    """
    from rooms_cli.core.errors import InvalidInput, NotFound
    from rooms_cli.store.ids import resolve_prefix

    messages = read_inbox(project, agent)
    given = str(ref).strip().lstrip("#")
    hint = f"see `rooms inbox --peek --as {agent}`"
    if given.isdigit() and not given.startswith("0"):
        hits = [m for m in messages if m.n == int(given)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            shown = "; ".join(f"{m.ref} from {m.sender}: {m.text[:40]!r}" for m in hits)
            raise InvalidInput(f"message number {given} is shared by {len(hits)} messages after a merge ({shown}); "
                               f"give the id shown instead, e.g. --reply-to {hits[0].ref}")
        raise NotFound(f"no message {given} in {agent}'s inbox ({hint})")
    try:
        wanted = resolve_prefix(given, [m.id for m in messages], "message id")
    except NotFound:
        raise NotFound(f"no message {given!r} in {agent}'s inbox ({hint})") from None
    return next(m for m in messages if m.id == wanted)


def inbox_owners(project: Project) -> list[str]:
    """Agents that have an inbox file."""
    return layout.record_names(project, layout.inbox_dir(project), ".jsonl", "agent id")
