"""The unread messages of an inbox without reading the whole inbox: a local cursor.

`.rooms/run/inbox/<agent>.unread.json` (this machine's, out of git) records, for the inbox and its
read marks as they were last read (inode and the offset where their whole lines end), the messages
not marked read, the highest message number and whether the numbers were unique. A later read
parses only the bytes appended since (new messages, new read marks); rooms only appends to both files.

It is only an accelerator, never a second truth: when either file was replaced (git writes a merged
file anew: another inode), shrank, a message arrives with a number not above the highest (two clones'
numbers after a merge), or the cursor is missing or damaged, the whole inbox is read as before
(inbox.read_inbox) and the cursor is rebuilt from it.
"""

from __future__ import annotations

import json
import os

from rooms_cli.messaging.inbox import (
    InboxMessage,
    InboxView,
    _number,
    inbox_path,
    read_inbox,
    read_marks,
    read_state_path,
)
from rooms_cli.store import atomic, jsonl, layout, order
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

VERSION = 1


def cursor_path(project: Project, agent: str):
    return layout.inbox_cursor_file(project, agent)


def _ino(path) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


def _full(project: Project, agent: str) -> list[InboxMessage]:
    """Read everything (inbox.py's way) and store a new cursor; the unread messages."""
    box, marks_file = inbox_path(project, agent), read_state_path(project, agent)
    box_ino, marks_ino = _ino(box), _ino(marks_file)
    box_end = jsonl.scan(box).end  # offsets first: what is appended meanwhile is read again next time
    marks_end = jsonl.scan(marks_file).end
    records = order.ordered(jsonl.read(box))
    messages = read_inbox(project, agent)
    marks = read_marks(project, agent)
    unread = [m for m in messages if not marks.covers(m)]
    raw = {str(r.get("id", "")): r for r in records}
    numbers = [m.n for m in messages]
    state = {"version": VERSION, "box": [box_ino, box_end], "marks": [marks_ino, marks_end],
             "top": max(numbers, default=0),
             "unique": len(set(numbers)) == len(numbers) and all(n > 0 and m.id for n, m in zip(numbers, messages, strict=True)),
             "unread": [raw[m.id] for m in unread if m.id in raw]}
    # only a cursor whose offsets match what was parsed: a message appended between the scan and the
    # read is then re-read (and re-added once, by id) by the next call
    if state["unique"]:
        _write(cursor_path(project, agent), state)
    return unread


def _write(path, state: dict) -> None:
    """Replace the cursor (a local cache: store/atomic.write_cache, never fatal)."""
    atomic.write_cache(path, json.dumps(state, separators=(",", ":")).encode())


def unread(project: Project, agent: str) -> list[InboxMessage]:
    """`agent`'s unread messages, oldest first (the one order), each with its ref: what
    `inbox.unread_messages` returns, reading only what was appended since the last call."""
    path = cursor_path(project, agent)
    try:
        state = json.loads(path.read_bytes())
        if state.get("version") != VERSION:
            raise ValueError
    except (OSError, ValueError):
        return _full(project, agent)
    box, marks_file = inbox_path(project, agent), read_state_path(project, agent)
    (box_ino, box_end), (marks_ino, marks_end) = state["box"], state["marks"]
    if (box_ino is not None and _ino(box) != box_ino) or (marks_ino is not None and _ino(marks_file) != marks_ino):
        return _full(project, agent)
    try:
        if os.stat(box).st_size < box_end or (marks_ino is not None and os.stat(marks_file).st_size < marks_end):
            return _full(project, agent)
    except FileNotFoundError:
        return _full(project, agent)
    new_box = jsonl.scan(box, box_end)
    new_marks = jsonl.scan(marks_file, marks_end)
    if new_box.bad or new_marks.bad:
        return _full(project, agent)  # a damaged line: read everything
    pending = {m["id"]: m for m in state["unread"]}
    top = state["top"]
    for record in order.ordered(new_box.records):
        n = _number(record)
        if n <= top or not record.get("id"):
            return _full(project, agent)  # a number not above the last (a merge), or no id
        top = n
        pending[str(record["id"])] = record
    for record in new_marks.records:
        for read_id in record.get("read") or []:
            pending.pop(read_id, None)
    state["unread"] = order.ordered(pending.values())
    state["top"] = top
    state["box"] = [_ino(box), new_box.end]
    state["marks"] = [_ino(marks_file), new_marks.end]
    if new_box.records or new_marks.records:
        _write(path, state)
    messages = [InboxMessage.from_json(r) for r in state["unread"]]
    for m in messages:
        m.ref = str(m.n)  # numbers are unique here (checked): the ref is the number
    return messages


def open_unread(project: Project, agent: str, *, peek: bool = False) -> InboxView:
    """`rooms inbox --unread`: the unread messages through the cursor, marked read unless `peek` (what
    inbox.open_inbox(unread_only=True) returns, without reading the whole inbox)."""
    fresh = unread(project, agent)
    if fresh and not peek:
        path = read_state_path(project, agent)
        with locked(path):  # a message marked twice (a race) is harmless: marks are a set
            jsonl.append_many(path, [{"id": new_id("r"), "ts": now_iso(), "read": [m.key for m in fresh]}], lock=False)
    return InboxView(agent=agent, messages=fresh, unread_ids={m.key for m in fresh}, marked_read=bool(fresh) and not peek)
