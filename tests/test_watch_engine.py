"""The watch engine in-process: selection rules, id-less records, rendering, and choosing a backend."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from conftest import checkout_path
from hypothesis import given, settings
from hypothesis import strategies as st
from test_watch_support import Watcher, run_python, say

from rooms_cli.store import atomic, jsonl
from rooms_cli.store.follow import LogFile
from rooms_cli.watch import Follower, Selection
from rooms_cli.watch.render import line, speaker_style
from rooms_cli.watch.wake import StopFlag, Waker


def test_selection_rules_follow_the_current_room_unless_told_otherwise():
    assert Selection.from_flags(current_room="lab") == Selection(rooms=("lab",))
    assert Selection.from_flags(board=True, current_room="lab") == Selection(boards=("lab",))
    assert Selection.from_flags(rooms=["a", "b"], board=True, current_room="lab") == Selection(rooms=("a", "b"), boards=("a", "b"))
    assert Selection.from_flags(inboxes=["bob"], current_room="lab") == Selection(inboxes=("bob",))
    assert Selection.from_flags(groups=True, current_room="lab") == Selection(groups=True)
    described = Selection.from_flags(rooms=["api"], board=True, inboxes=["bob"], groups=True).describe()
    assert described == "#api, the board of #api, every group, bob's inbox"
    from rooms_cli.core.errors import InvalidInput

    with pytest.raises(InvalidInput):
        Selection.from_flags(rooms=["../etc"])
    with pytest.raises(InvalidInput):
        Selection.from_flags(inboxes=["Bob/x"])


def test_the_sources_of_each_filter(project):
    from rooms_cli.chat.rooms import create_room

    create_room(project, "lab")
    jsonl.append(project.path("rooms", "lab", "board", "tasks", "t-1.jsonl"), {"event": "created"})
    jsonl.append(project.path("groups", "rev.jsonl"), {"type": "created"})
    jsonl.append(project.path("inbox", "bob.jsonl"), {"n": 1})
    atomic.write_json(project.path("spawns", "s-1.json"), {"status": "running"})
    (Path(project.path("groups")) / "rev.jsonl.lock").write_text("")

    def followed(selection):
        follower = Follower(project, selection)
        follower.start()
        return sorted((s.family, s.name, project.relative(s.path)) for s, _ in follower.files.values())

    assert followed(Selection(boards=("lab",))) == [("task", "lab", ".rooms/rooms/lab/board/tasks/t-1.jsonl")]
    assert followed(Selection(groups=True)) == [("group", "rev", ".rooms/groups/rev.jsonl")]
    assert followed(Selection(inboxes=("carol",))) == [("inbox", "carol", ".rooms/inbox/carol.jsonl")]
    everything = followed(Selection(all=True))
    assert {f[0] for f in everything} == {"chat", "task", "group", "inbox", "spawn", "files"}
    assert ("chat", "lab", ".rooms/rooms/lab/transcript.jsonl") in everything


def test_records_without_ids_are_told_apart_by_content_and_position(tmp_path):
    path = tmp_path / "g.jsonl"
    follower = LogFile(path)
    same = {"type": "ping"}
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in [same, same, {"type": "pong"}]))
    assert follower.read_new() == [same, same, {"type": "pong"}]
    # replaced by the same records and one more identical ping: only that third ping is new
    atomic.write_bytes(path, path.read_bytes() + json.dumps(same).encode() + b"\n")
    assert follower.read_new() == [same]
    assert follower.read_new() == []


def test_a_line_without_its_newline_is_never_returned(tmp_path):
    path = tmp_path / "t.jsonl"
    follower = LogFile(path)
    path.write_bytes(b'{"id": "a"}\n{"id": "b"')
    assert follower.read_new() == [{"id": "a"}]
    assert follower.read_new() == []
    with open(path, "ab") as handle:
        handle.write(b"}\n")
    assert follower.read_new() == [{"id": "b"}]


def test_passes_and_flavor_lines_are_italic_and_speakers_keep_their_colour():
    def styles(event):
        return [style for _text, style in line({"ts": "2026-11-21T09:00:00.000Z", "room": "r", **event})]

    assert all("italic" in s for s in styles({"type": "chat.pass", "speaker": "ana", "text": ""})[2:])
    assert all("italic" in s for s in styles({"type": "chat.flavor", "speaker": "ana", "text": "*nods*"})[2:])
    message = styles({"type": "chat.message", "speaker": "ana", "text": "hi"})
    assert message[2] == speaker_style("ana") == speaker_style("ana")
    assert "italic" not in "".join(message)
    assert len({speaker_style(n) for n in ("ana", "bob", "cy", "dee", "eve", "fay")}) >= 4
    text = "".join(t for t, _ in line({"type": "task.claimed", "ts": "2026-11-21T09:00:00.000Z", "room": "r",
                                       "task": "t-01AB", "agent": "ana", "title": "Write spec"}))
    assert text == "09:00:00 #r ▸ t-01AB claimed “Write spec” by ana"
    odd = "".join(t for t, _ in line({"type": "zzz.what", "ts": "?", "record": {"a": [1], "b": None}}))
    assert "zzz.what" in odd and "a=[1]" in odd
    shaped = "".join(t for t, _ in line({"type": "group.broadcast", "ts": "?", "group": "g", "members": 3}))
    assert "group.broadcast" in shaped  # a known type with an odd shape falls back to the summary
    # the text is kept as it is here; the console makes it terminal-safe (tests/test_hardening_terminal.py)
    hostile = "".join(t for t, _ in line({"type": "chat.message", "ts": "?", "room": "r", "speaker": "x\x1b[2J",
                                          "text": "hi\x1b]0;pwned\x07\nsecond line"}))
    assert "hi\x1b]0;pwned\x07\n    second line" in hostile


def test_notifications_are_used_when_available_and_polling_when_asked(project, monkeypatch):
    with Waker(project.dir, StopFlag()) as waker:
        assert waker.mode == "notify"
    monkeypatch.setenv("ROOMS_WATCH_POLL", "1")
    with Waker(project.dir, StopFlag()) as waker:
        assert waker.mode == "poll"


def test_polling_takes_over_when_watchfiles_cannot_be_imported(project_dir, tmp_path):
    fake = tmp_path / "fake" / "watchfiles"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('watchfiles is not installed')\n")
    env = {"PYTHONPATH": checkout_path(fake.parent), "ROOMS_WATCH_INTERVAL": "0.1"}
    w = Watcher("--since", "2000-01-01T00:00:00Z", env=env)
    try:
        run_python(say("default", "alice", "polled in"))
        assert w.wait_text("polled in")["speaker"] == "alice"
        assert w.stop() == 0
    finally:
        w.kill()
    assert w.stderr == ""


def test_on_a_terminal_speakers_are_coloured_and_passes_italic(project_dir):
    import pexpect
    from conftest import rooms_env

    run_python(say("default", "ana", "first", "second") + say("default", "bob", "third")
               + say("default", "ana", "lets this one go by", kind="pass"))
    env = {k: v for k, v in rooms_env({"TERM": "xterm-256color", "COLUMNS": "120"}).items() if k != "NO_COLOR"}
    child = pexpect.spawn(sys.executable, ["-m", "rooms_cli", "watch", "--last", "4", "--timeout", "1"],
                          env=env, cwd=str(project_dir), encoding="utf-8", timeout=30)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    out = child.before.splitlines()
    assert "watching #default · Ctrl-C to stop" in out[0]  # a banner, on stderr, only on a terminal
    lines = [x for x in out[1:] if "#default" in x]
    assert len(lines) == 4, lines

    def colour_of(name, text):
        return text[: text.index(name)].rsplit("#default", 1)[1]

    assert colour_of("ana", lines[0]) == colour_of("ana", lines[1]) != colour_of("bob", lines[2])
    assert "\x1b[" in colour_of("ana", lines[0])

    def italic(text):  # SGR parameter 3
        return any("3" in m.split(";") for m in re.findall(r"\x1b\[([0-9;]*)m", text))

    assert italic(lines[3].split("#default", 1)[1]) and not italic(lines[0].split("#default", 1)[1])


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 3)),
        st.tuples(st.just("partial"), st.integers(1, 60)),
        st.tuples(st.just("replace"), st.integers(0, 4), st.integers(0, 3)),
        st.tuples(st.just("rewrite"), st.integers(0, 4), st.integers(0, 3)),
        st.tuples(st.just("truncate"), st.integers(0, 3)),
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(ops=_OPS, with_ids=st.booleans())
def test_any_mix_of_appends_half_lines_replaces_and_truncations_yields_each_record_once(tmp_path_factory, ops, with_ids):
    path = tmp_path_factory.mktemp("log") / "t.jsonl"
    path.write_bytes(b"")
    follower = LogFile(path, "id" if with_ids else None)
    counter = iter(range(10_000))
    current: list[dict] = []  # the whole lines of the file
    partial = b""  # an unfinished last line
    emitted: list[dict] = []
    expected: list[dict] = []

    def new(k):
        made = [{"id": f"m-{n:05d}", "ts": "2026-11-21T09:00:00.000Z", "speaker": "a", "text": "same text"}
                for n in (next(counter) for _ in range(k))]
        expected.extend(made)
        return made

    def body(records):
        return b"".join(json.dumps(r).encode() + b"\n" for r in records)

    for op in ops:
        if partial and op[0] != "partial":  # finish the line being written before anything else
            rest = partial
            partial = b""
            with open(path, "ab") as handle:
                handle.write(rest)
            follower._stat = None
            emitted += follower.read_new()
        if op[0] == "append":
            current += new(op[1])
            with open(path, "ab") as handle:
                handle.write(body(current[-op[1]:]))
        elif op[0] == "partial" and not partial:
            record = new(1)[0]
            line = json.dumps(record).encode() + b"\n"
            cut = min(op[1], len(line) - 1)
            with open(path, "ab") as handle:
                handle.write(line[:cut])
            current.append(record)
            partial = line[cut:]
        elif op[0] in ("replace", "rewrite"):
            current = current[op[1]:] + new(op[2])
            if op[0] == "replace":
                atomic.write_bytes(path, body(current))
            else:
                with open(path, "r+b") as handle:
                    handle.truncate(0)
                    handle.write(body(current))
        elif op[0] == "truncate":
            current = new(op[1])
            with open(path, "r+b") as handle:
                handle.truncate(0)
                handle.write(body(current))
        follower._stat = None  # the same second: never trust a stat in this test
        got = follower.read_new()
        emitted += got
        if partial:
            assert all(r["id"] != current[-1]["id"] for r in emitted)  # a half line is never returned
    if partial:
        with open(path, "ab") as handle:
            handle.write(partial)
    follower._stat = None
    emitted += follower.read_new()
    assert emitted == expected
