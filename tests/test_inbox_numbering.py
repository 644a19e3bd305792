"""Numbering a delivered message from what this process noted (messaging/inbox.py `_highest_number`):
the noted highest number is used only while the inbox carries the seal noted with it; a file appended
to by another process is read from there, one rewritten, replaced, cut short or merged by git is read
back. Whatever happened to the file, the number is the one after the highest in it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from gitclones import HAVE_GIT, GitClones
from hypothesis import given, settings
from hypothesis import strategies as st

from rooms_cli.messaging import inbox
from rooms_cli.store import jsonl


def highest_in_file(path) -> int:
    return max((int(r.get("n", 0)) for r in jsonl.read(path)), default=0)


def line(n: int, text: str = "x") -> str:
    return json.dumps({"n": n, "id": f"i-{n:026d}", "ts": "2026-01-01T00:00:00.000Z", "from": "carol", "to": "bob",
                       "kind": "direct", "text": text}) + "\n"


def test_a_second_delivery_reads_only_what_was_appended_since(project, monkeypatch):
    first = inbox.deliver(project, "bob", "alice", "one")
    path = Path(inbox.inbox_path(project, "bob"))
    with open(path, "a") as handle:  # another process (another clone's merge, a CLI send) appended
        handle.write(line(7))
    read_back = []
    monkeypatch.setattr(jsonl, "tail", lambda *a: read_back.append(a) or [])
    assert inbox.deliver(project, "bob", "alice", "two").n == 8
    assert inbox.deliver(project, "bob", "alice", "three").n == 9
    assert read_back == [] and first.n == 1


@pytest.mark.parametrize("change", ["replaced", "truncated", "rewritten in place", "removed"])
def test_a_file_changed_under_the_noted_number_is_read_back(project, change):
    for text in ("one", "two", "three"):
        inbox.deliver(project, "bob", "alice", text)
    path = Path(inbox.inbox_path(project, "bob"))
    if change == "replaced":  # what git does on a checkout or a merge: a new file
        tmp = path.with_name("new.tmp")
        tmp.write_text(line(1) + line(40) + line(2))
        os.replace(tmp, path)
    elif change == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: data.index(b"\n") + 1])
    elif change == "rewritten in place":  # the same inode and size, the last line's number raised
        data = path.read_bytes()
        last = data.rindex(b'{"n": 3')
        with open(path, "r+b") as handle:
            handle.seek(last)
            handle.write(b'{"n": 9')
    else:
        path.unlink()
    expected = highest_in_file(path) + 1
    assert inbox.deliver(project, "bob", "alice", "after").n == expected
    assert expected == {"replaced": 41, "truncated": 2, "rewritten in place": 10, "removed": 1}[change]


@pytest.mark.skipif(not HAVE_GIT, reason="git is not installed")
def test_a_real_git_merge_under_the_noted_number(tmp_path):
    """A clone numbers in this process, merges another clone's messages (git writes the file anew),
    then numbers again: after the highest of the union, whichever clone numbered higher."""
    from rooms_cli.store.paths import open_project

    world = GitClones(tmp_path)
    a, b = world.clone("a"), world.clone("b")
    project_a = open_project(a.path)
    for text in ("a1", "a2"):
        inbox.deliver(project_a, "reviewer", "carol", text)
    for minute in range(1, 6):
        b.rooms("send", f"b{minute}", "--to", "reviewer", as_="dave", now=f"2026-11-21T10:0{minute}:00Z")
    a.pull(b)
    path = Path(inbox.inbox_path(project_a, "reviewer"))
    assert highest_in_file(path) == 5
    assert inbox.deliver(project_a, "reviewer", "carol", "after the merge").n == 6
    b.pull(a)
    b_path = Path(inbox.inbox_path(open_project(b.path), "reviewer"))
    assert highest_in_file(b_path) == 6


operations = st.lists(st.one_of(
    st.just(("deliver", 0)),
    st.tuples(st.just("append"), st.integers(0, 60)),  # another process appends a line numbered so
    st.tuples(st.just("replace"), st.integers(0, 60)),  # the file written anew with a line numbered so
    st.tuples(st.just("truncate"), st.integers(0, 8)),  # cut back to its first k lines
), max_size=30)


@settings(max_examples=40, deadline=None)
@given(operations)
def test_the_number_is_always_one_after_the_highest_in_the_file(tmp_path_factory, ops):
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import open_project

    root = tmp_path_factory.mktemp("numbering")
    initialize(root)
    project = open_project(root)
    path = Path(inbox.inbox_path(project, "bob"))
    for op, value in ops:
        if op == "deliver":
            expected = highest_in_file(path) + 1
            assert inbox.deliver(project, "bob", "alice", "hi").n == expected
        elif op == "append":
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a") as handle:
                handle.write(line(value))
        elif op == "replace":
            kept = path.read_text() if path.exists() else ""
            tmp = path.with_name("new.tmp")
            tmp.write_text(line(value) + kept)
            os.replace(tmp, path)
        elif path.exists():
            lines = path.read_text().splitlines(keepends=True)
            path.write_text("".join(lines[:value]))
