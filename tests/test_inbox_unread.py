"""The unread cursor (messaging/unread.py) always agrees with reading the whole inbox."""

from __future__ import annotations

import shutil

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
            path = inbox.inbox_path(project, AGENT)
            if path.exists():
                data = path.read_bytes()
                path.unlink()
                path.write_bytes(data)
        else:
            unread.cursor_path(project, AGENT).unlink(missing_ok=True)
        assert ids(unread.unread(project, AGENT)) == ids(inbox.unread_messages(project, AGENT))
        peek = unread.open_unread(project, AGENT, peek=True)
        assert ids(peek.messages) == ids(inbox.unread_messages(project, AGENT)) and not peek.marked_read


def test_a_damaged_cursor_is_rebuilt(project):
    for n in range(3):
        inbox.deliver(project, AGENT, "alice", f"m{n}")
    assert len(unread.unread(project, AGENT)) == 3
    unread.cursor_path(project, AGENT).write_text("{broken")
    assert len(unread.unread(project, AGENT)) == 3
    inbox.take_unread(project, AGENT)
    assert unread.unread(project, AGENT) == []
