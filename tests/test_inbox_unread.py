"""The unread cursor (messaging/unread.py) always agrees with reading the whole inbox."""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooms_cli.messaging import inbox, unread

AGENT = "bob"

step = st.one_of(
    st.tuples(st.just("deliver"), st.integers(1, 4)),
    st.tuples(st.just("mark"), st.integers(0, 10)),
    st.tuples(st.just("take"), st.just(0)),
    st.tuples(st.just("rewrite"), st.just(0)),
    st.tuples(st.just("forget"), st.just(0)),
)


def ids(messages):
    return [(m.id, m.n, m.ref, m.text) for m in messages]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(step, min_size=1, max_size=12))
def test_the_cursor_agrees_with_a_full_read(project, steps):
    shutil.rmtree(project.path("inbox"), ignore_errors=True)
    shutil.rmtree(project.path("run", "inbox"), ignore_errors=True)
    count = 0
    for kind, number in steps:
        if kind == "deliver":
            for _ in range(number):
                count += 1
                inbox.deliver(project, AGENT, "alice", f"m{count}")
        elif kind == "mark":
            pending = inbox.unread_messages(project, AGENT)
            inbox.mark_read(project, AGENT, pending[:number])
        elif kind == "take":
            view = unread.open_unread(project, AGENT)
            assert view.marked_read == bool(view.messages)
        elif kind == "rewrite":  # git writes a merged file anew: another inode
            path = Path(inbox.inbox_path(project, AGENT))
            if path.exists():
                data = path.read_bytes()
                path.unlink()
                path.write_bytes(data)
        else:
            Path(unread.cursor_path(project, AGENT)).unlink(missing_ok=True)
        assert ids(unread.unread(project, AGENT)) == ids(inbox.unread_messages(project, AGENT))
        peek = unread.open_unread(project, AGENT, peek=True)
        assert ids(peek.messages) == ids(inbox.unread_messages(project, AGENT)) and not peek.marked_read
        for last in (0, 1, 3, unread.RECENT + 1):
            assert shown_as(unread.open_recent(project, AGENT, last=last, peek=True)) == \
                shown_as(inbox.open_inbox(project, AGENT, last=last, peek=True))


def shown_as(shown):
    return ids(shown.messages), sorted(shown.unread_ids), shown.remaining, shown.marked_read


def test_the_latest_messages_past_what_the_cursor_keeps_read_the_whole_inbox(project, monkeypatch):
    monkeypatch.setattr(unread, "RECENT", 3)
    for n in range(6):
        inbox.deliver(project, AGENT, "alice", f"m{n}")
    inbox.take_unread(project, AGENT)
    inbox.deliver(project, AGENT, "alice", "new")
    shown = unread.open_recent(project, AGENT, last=2, peek=True)
    assert [m.text for m in shown.messages] == ["m5", "new"] and shown.remaining == 5
    wide = unread.open_recent(project, AGENT, last=5)
    assert [m.text for m in wide.messages] == ["m2", "m3", "m4", "m5", "new"] and wide.remaining == 2
    assert wide.marked_read and unread.unread(project, AGENT) == []


def test_an_inbox_rewritten_in_place_of_the_same_inode_is_read_again(project):
    """git writes a merged file anew and the file system may give it the inode number just freed:
    the CRC of the bytes before the cursor's offset tells it is not the file that was read, even when
    a line of the same length took another's place and the offset still falls on a line's end."""
    import json

    from rooms_cli.store.ids import new_id

    for n in range(3):
        inbox.deliver(project, AGENT, "alice", f"m{n}")
    assert len(unread.unread(project, AGENT)) == 3
    path = Path(inbox.inbox_path(project, AGENT))
    lines = path.read_bytes().splitlines(keepends=True)
    other = {**json.loads(lines[1]), "id": new_id("i"), "text": "mX"}
    lines[1] = (json.dumps(other, sort_keys=True) + "\n").encode()
    with open(path, "r+b") as handle:  # the same inode, the same length up to the cursor's offset
        handle.write(b"".join(lines))
    inbox.deliver(project, AGENT, "alice", "m3")
    assert [m.text for m in unread.unread(project, AGENT)] == ["m0", "mX", "m2", "m3"]
    assert ids(unread.unread(project, AGENT)) == ids(inbox.unread_messages(project, AGENT))


def test_a_damaged_cursor_is_rebuilt(project):
    for n in range(3):
        inbox.deliver(project, AGENT, "alice", f"m{n}")
    assert len(unread.unread(project, AGENT)) == 3
    Path(unread.cursor_path(project, AGENT)).write_text("{broken")
    assert len(unread.unread(project, AGENT)) == 3
    inbox.take_unread(project, AGENT)
    assert unread.unread(project, AGENT) == []
