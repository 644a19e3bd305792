"""The unread and the latest messages of an inbox without reading the whole inbox: a local cursor.

`.rooms/run/inbox/<agent>.unread.json` (this machine's, out of git; store/cache.py) records, for the inbox and its
read marks as they were last read (inode and the offset where their whole lines end), the messages
not marked read, the last RECENT messages in the one order, how many messages there are, the highest
message number and whether the numbers were unique. A later read parses only the bytes appended since
(new messages, new read marks); rooms only appends to both files.

The last RECENT of the whole inbox are among the last RECENT kept plus the messages appended, whatever
order those arrive in (a merged-in message may sort before the kept ones), so ordering the two together
and keeping the last RECENT stays right.

It is only an accelerator, never a second truth: when either file was replaced (git writes a merged
file anew: another inode, or the same inode number reused, which the CRC of the bytes before the
offset tells), shrank, a message arrives with a number not above the highest (two clones'
numbers after a merge), or the cursor is missing or damaged, the whole inbox is read as before
(as inbox.read_inbox does) and the cursor is rebuilt from it.
"""

from __future__ import annotations

from rooms_cli.core.records import dataclass  # dataclasses without inspect (records.py)
from rooms_cli.messaging.inbox import (
    InboxMessage,
    InboxView,
    _number,
    assign_refs,
    inbox_path,
    open_inbox,
    read_marks,
    read_state_path,
    usable,
    with_latest,
)
from rooms_cli.store import cache, jsonl, layout, order, schema
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id
from rooms_cli.store.known import seal
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any


VERSION = 3
RECENT = 100  # latest messages kept: `rooms inbox --last N` up to this reads no more than the unread ones


def cursor_path(project: Project, agent: str) -> str:
    return layout.inbox_cursor_file(project, agent)


@dataclass
class Known:
    """What the cursor knows of an inbox: its unread messages and its last RECENT ones (oldest first,
    each with its ref), and how many messages it holds."""

    unread: list[InboxMessage]
    recent: list[InboxMessage]
    total: int


def _full(project: Project, agent: str) -> Known:
    """Read everything (inbox.py's way) and store a new cursor."""
    box, marks_file = inbox_path(project, agent), read_state_path(project, agent)
    whole = jsonl.scan(box)
    for lineno, reason in whole.bad:
        jsonl.warn(box, lineno, reason)
    box_seal = seal(box, whole.end)
    marks_seal = seal(marks_file, jsonl.scan(marks_file).end)  # before the read: what is appended meanwhile is read again
    kept = usable(project, "inbox", whole.records, box)
    records = order.ordered(kept)
    messages = [InboxMessage.from_json(r) for r in records]
    assign_refs(messages)
    marks = read_marks(project, agent)
    unread = [m for m in messages if not marks.covers(m)]
    recent = messages[-RECENT:]
    raw = {str(r.get("id", "")): r for r in records}
    numbers = [m.n for m in messages]
    state = {"version": VERSION, "box": box_seal, "marks": marks_seal,
             "top": max(numbers, default=0), "total": len(messages),
             "unique": len(set(numbers)) == len(numbers) and all(n > 0 and m.id for n, m in zip(numbers, messages, strict=True)),
             "unread": [raw[m.id] for m in unread if m.id in raw], "recent": [raw[m.id] for m in recent if m.id in raw],
             "bad": [[lineno, reason] for lineno, reason in whole.bad]}
    # only a cursor whose offsets match what was parsed: a message appended between the scan and the
    # read is then re-read (and re-added once, by id) by the next call
    if state["unique"] and len(kept) == len(whole.records) and not marks.skipped:  # each read warns of a skipped record
        cache.save(cursor_path(project, agent), state)
    return Known(unread=unread, recent=recent, total=len(messages))


def known(project: Project, agent: str) -> Known:
    """`agent`'s unread and last RECENT messages, reading only what was appended since the last call."""
    path = cursor_path(project, agent)
    state = cache.load(path, VERSION)
    if state is None:
        return _full(project, agent)
    box, marks_file = inbox_path(project, agent), read_state_path(project, agent)
    box_end, marks_end = state["box"][1], state["marks"][1]
    if seal(box, box_end) != state["box"] or seal(marks_file, marks_end) != state["marks"]:
        return _full(project, agent)  # replaced (a merge), shrunk, or gone
    for lineno, reason in state.get("bad", []):  # a damaged line is warned about on every read, as a full read does
        jsonl.warn(box, lineno, reason)
    new_box = jsonl.scan(box, box_end)
    new_marks = jsonl.scan(marks_file, marks_end)
    if new_box.bad or new_marks.bad or len(usable(project, "inbox", new_box.records, box)) < len(new_box.records) \
            or len(usable(project, "inbox-read", new_marks.records, marks_file)) < len(new_marks.records):
        return _full(project, agent)  # a damaged line, or a record of the wrong type: read everything
    pending = {m["id"]: m for m in state["unread"]}
    top = state["top"]
    fresh = order.ordered(new_box.records)
    for record in fresh:
        n = _number(record)
        if n <= top or not record.get("id"):
            return _full(project, agent)  # a number not above the last (a merge), or no id
        top = n
        pending[str(record["id"])] = record
    for record in new_marks.records:
        for read_id in record.get("read") or []:
            pending.pop(read_id, None)
    state["unread"] = order.ordered(pending.values())
    state["recent"] = order.ordered([*state["recent"], *fresh])[-RECENT:]
    state["total"] += len(fresh)
    state["top"] = top
    if new_box.records or new_marks.records:
        state["box"], state["marks"] = seal(box, new_box.end), seal(marks_file, new_marks.end)
        cache.save(path, state)
    return Known(unread=_messages(state["unread"]), recent=_messages(state["recent"]), total=state["total"])


def _messages(records: list[dict[str, Any]]) -> list[InboxMessage]:
    messages = [InboxMessage.from_json(r) for r in records]
    for m in messages:
        m.ref = str(m.n)  # numbers are unique here (checked): the ref is the number
    return messages


def unread(project: Project, agent: str) -> list[InboxMessage]:
    """`agent`'s unread messages, oldest first (the one order), each with its ref: what
    `inbox.unread_messages` returns, reading only what was appended since the last call."""
    return known(project, agent).unread


def _mark(project: Project, agent: str, messages: list[InboxMessage]) -> None:
    path = read_state_path(project, agent)
    with locked(path):  # a message marked twice (a race) is harmless: marks are a set
        marks = [{"id": new_id("r"), "ts": now_iso(), "read": [m.key for m in messages]}]
        jsonl.append_many(path, schema.checked("inbox-read", marks, project.relative(path)), lock=False)


def open_unread(project: Project, agent: str, *, peek: bool = False, limit: int | None = None,
                after: str | None = None) -> InboxView:
    """`rooms inbox --unread` (and MCP `inbox`): the unread messages through the cursor, those after message
    id `after`, at most `limit`, the ones shown marked read unless `peek` (what
    inbox.open_inbox(unread_only=True) returns, without reading the whole inbox)."""
    from rooms_cli.core.shapes import page

    fresh = unread(project, agent)
    listed = page("messages", fresh, limit=limit, after=after, key=lambda m: m.id)
    shown: list[InboxMessage] = listed["messages"]
    if shown and not peek:
        _mark(project, agent, shown)
    return InboxView(agent=agent, messages=shown, unread_ids={m.key for m in fresh}, marked_read=bool(shown) and not peek,
                     remaining=listed["remaining"], next_cursor=listed["next_cursor"])


def open_recent(project: Project, agent: str, *, last: int, peek: bool = False) -> InboxView:
    """`rooms inbox`: the unread messages and the last `last`, through the cursor (what
    inbox.open_inbox(last=last) returns; more than RECENT reads the whole inbox)."""
    if last > RECENT:
        return open_inbox(project, agent, peek=peek, last=last)
    seen = known(project, agent)
    shown = with_latest(seen.unread, seen.recent[-last:] if last else [])
    if seen.unread and not peek:
        _mark(project, agent, seen.unread)
    return InboxView(agent=agent, messages=shown, unread_ids={m.key for m in seen.unread},
                     marked_read=bool(seen.unread) and not peek, remaining=seen.total - len(shown))
