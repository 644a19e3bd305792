"""`rooms watch` as a real process while other processes write: once, in order, whole lines only."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from test_watch_support import MODES, Watcher, run_python, say, start_python

SINCE_EVER = "2000-01-01T00:00:00Z"  # history + live: an event is printed once whether it landed before or after start


@pytest.fixture(params=sorted(MODES))
def mode(request) -> dict:
    """Each test runs once on OS notifications (no rescans) and once on polling."""
    return MODES[request.param]


@pytest.fixture
def watchers():
    started: list[Watcher] = []

    def start(*args: str, env: dict | None = None) -> Watcher:
        """A watcher printing past events too: what lands while it starts up is printed once all the same."""
        w = Watcher(*args, "--since", SINCE_EVER, env=env)
        started.append(w)
        return w

    yield start
    for w in started:
        w.kill()


def transcript(project_dir, room: str = "default"):
    return project_dir / ".rooms" / "rooms" / room / "transcript.jsonl"


def file_ids(path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_bytes().splitlines() if line.strip()]


def sync(watcher: Watcher, room: str = "default", text: str = "sync") -> None:
    """Append a marker and wait for it: the watcher is then live (past its baseline)."""
    run_python(say(room, "marker", text))
    watcher.wait_text(text)


def test_every_event_printed_exactly_once_and_in_file_order_while_processes_write(project_dir, mode, watchers):
    run_python("from rooms_cli.store import open_project\nfrom rooms_cli.chat.rooms import create_room\n"
               "create_room(open_project(), 'ops')")
    w = watchers("--all", env=mode)
    writers = [
        start_python(say("default", f"writer{i}", *[f"w{i}-{k}" for k in range(25)]))
        for i in range(3)
    ] + [
        start_python(say("ops", "opsbot", *[f"ops-{k}" for k in range(25)])),
        start_python("from rooms_cli.store import open_project\nfrom rooms_cli.messaging.inbox import deliver\n"
                     "p = open_project()\nfor k in range(20):\n    deliver(p, 'bob', 'alice', f'dm-{k}')\n"),
    ]
    for proc in writers:
        assert proc.wait(60) == 0, proc.stderr.read()
    w.wait_for(lambda evs: len(evs) >= 3 * 25 + 25 + 20, what="all 120 events")
    time.sleep(0.5)  # anything extra (a duplicate) would show up now
    assert w.stop() == 0
    events = w.snapshot()
    chat = [e for e in events if e["type"] == "chat.message"]
    dms = [e for e in events if e["type"] == "inbox.direct"]
    assert len(events) == 120, events
    for room in ("default", "ops"):
        assert [e["id"] for e in chat if e["room"] == room] == file_ids(transcript(project_dir, room))
    assert [e["text"] for e in dms] == [f"dm-{k}" for k in range(20)]
    assert [e["n"] for e in dms] == list(range(1, 21))
    assert all(e["agent"] == "bob" and e["from"] == "alice" for e in dms)
    assert all(isinstance(e["ts"], str) and e["ts"].endswith("Z") for e in events)


def test_a_half_written_line_is_held_back_until_its_newline_arrives(project_dir, mode, watchers):
    w = watchers(env=mode)
    sync(w)
    record = {"id": "m-01HALF", "ts": "2026-11-21T10:00:00.000Z", "room": "default", "speaker": "slow",
              "kind": "message", "text": "a line written in two parts"}
    line = json.dumps(record).encode() + b"\n"
    with open(transcript(project_dir), "ab") as handle:
        handle.write(line[:30])
        handle.flush()
        time.sleep(1.2)
        assert [e for e in w.snapshot() if e.get("speaker") == "slow"] == []
        handle.write(line[30:])
    w.wait_text("a line written in two parts")
    sync(w, text="after")
    assert w.stop() == 0
    slow = [e for e in w.snapshot() if e.get("speaker") == "slow"]
    assert slow == [{"type": "chat.message", "ts": record["ts"], "room": "default", "speaker": "slow",
                     "text": "a line written in two parts", "id": "m-01HALF"}]
    assert "unfinished" not in w.stderr and "not valid JSON" not in w.stderr


def test_a_replaced_transcript_is_read_again_without_duplicates_or_losses(project_dir, mode, watchers):
    from rooms_cli.store import atomic

    w = watchers(env=mode)
    run_python(say("default", "alice", *[f"before-{k}" for k in range(5)]))
    w.wait_text("before-4")
    path = transcript(project_dir)
    old = path.read_bytes()
    # a rehydrate or compaction: the same records plus new ones, written to a temp file and os.replace'd
    extra = [{"id": f"m-01REPLACED{k}", "ts": f"2026-11-21T11:00:0{k}.000Z", "room": "default", "speaker": "carol",
              "kind": "message", "text": f"replaced-{k}"} for k in range(3)]
    inode = os.stat(path).st_ino
    atomic.write_bytes(path, old + b"".join(json.dumps(r).encode() + b"\n" for r in extra))
    assert os.stat(path).st_ino != inode
    w.wait_text("replaced-2")
    run_python(say("default", "alice", "after-0", "after-1"))
    w.wait_text("after-1")
    time.sleep(0.5)
    assert w.stop() == 0
    texts = [e["text"] for e in w.snapshot() if e["type"] == "chat.message"]
    expected = [f"before-{k}" for k in range(5)] + [f"replaced-{k}" for k in range(3)] + ["after-0", "after-1"]
    assert texts == expected


def test_a_compacted_transcript_with_fewer_records_loses_nothing_new(project_dir, watchers):
    from rooms_cli.store import atomic

    w = watchers(env=MODES["notify"])
    run_python(say("default", "alice", *[f"old-{k}" for k in range(6)]))
    w.wait_text("old-5")
    path = transcript(project_dir)
    lines = path.read_bytes().splitlines(keepends=True)
    new = {"id": "m-01COMPACT", "ts": "2026-11-21T12:00:00.000Z", "room": "default", "speaker": "bob",
           "kind": "message", "text": "after compaction"}
    atomic.write_bytes(path, b"".join(lines[4:]) + json.dumps(new).encode() + b"\n")  # the first four dropped
    w.wait_text("after compaction")
    sync(w)
    assert w.stop() == 0
    texts = [e["text"] for e in w.snapshot() if e["type"] == "chat.message"]
    assert texts == [f"old-{k}" for k in range(6)] + ["after compaction", "sync"]


def test_a_truncated_or_rewritten_file_is_read_again_from_the_start(project_dir, watchers):
    w = watchers(env=MODES["notify"])
    run_python(say("default", "alice", "one", "two", "three"))
    w.wait_text("three")
    path = transcript(project_dir)
    with open(path, "r+b") as handle:  # truncated in place: same inode, shorter
        handle.truncate(0)
    run_python(say("default", "bob", "fresh start"))
    w.wait_text("fresh start")
    # rewritten in place to something longer than before: the bytes before the old offset changed
    rewritten = [{"id": f"m-01REWRITE{k}", "ts": "2026-11-21T12:00:00.000Z", "room": "default", "speaker": "eve",
                  "kind": "message", "text": f"rewritten-{k} " + "x" * 200} for k in range(3)]
    old = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.write(b"".join(json.dumps(r).encode() + b"\n" for r in rewritten) + old)
    w.wait_for(lambda evs: sum(e["text"].startswith("rewritten-") for e in evs) == 3, what="the rewritten records")
    sync(w)
    assert w.stop() == 0
    texts = [e["text"].split(" ")[0] for e in w.snapshot() if e["type"] == "chat.message"]
    assert texts == ["one", "two", "three", "fresh", "rewritten-0", "rewritten-1", "rewritten-2", "sync"]


def test_new_rooms_groups_and_inboxes_are_picked_up_under_all(project_dir, watchers):
    w = watchers("--all", env=MODES["notify"])
    sync(w)
    run_python("from rooms_cli.store import open_project\nfrom rooms_cli.chat.rooms import create_room\n"
               "from rooms_cli.chat.transcript import append_message\nfrom rooms_cli.messaging.inbox import deliver\n"
               "from rooms_cli.store import jsonl\n"
               "p = open_project()\ncreate_room(p, 'brand-new')\n"
               "append_message(p, 'brand-new', 'alice', 'first words in a new room')\n"
               "jsonl.append(p.path('groups', 'panel.jsonl'), {'type': 'created', 'ts': '2026-11-21T12:00:00.000Z'})\n"
               "deliver(p, 'newcomer', 'alice', 'welcome')\n")
    first = w.wait_text("first words in a new room")
    assert first["room"] == "brand-new"
    w.wait_for(lambda evs: any(e.get("group") == "panel" for e in evs), what="the new group")
    assert w.wait_text("welcome")["agent"] == "newcomer"
    assert w.stop() == 0


def test_only_the_selected_sources_are_followed(project_dir, watchers, rooms):
    run_python("from rooms_cli.store import open_project\nfrom rooms_cli.chat.rooms import create_room\n"
               "create_room(open_project(), 'other')")
    w = watchers("--room", "other", "--inbox", "bob", env=MODES["poll"])
    run_python(say("other", "alice", "in other"))
    w.wait_text("in other")
    run_python(say("default", "alice", "in default") + "from rooms_cli.messaging.inbox import deliver\n"
               "deliver(p, 'carol', 'alice', 'to carol')\ndeliver(p, 'bob', 'alice', 'to bob')\n")
    w.wait_text("to bob")
    run_python(say("other", "alice", "last"))
    w.wait_text("last")
    assert w.stop() == 0
    assert [e["text"] for e in w.snapshot()] == ["in other", "to bob", "last"]
    missing = rooms("watch", "--room", "nosuch", "--timeout", "1")
    assert missing.exit_code == 1 and "no room 'nosuch'" in missing.stderr and "Traceback" not in missing.stderr


def test_last_and_since_print_past_events_first(project_dir, rooms):
    run_python("import os\nfrom rooms_cli.store import open_project\nfrom rooms_cli.chat.transcript import append_message\n"
               "for k in range(5):\n    os.environ['ROOMS_NOW'] = f'2026-11-21T09:0{k}:00Z'\n"
               "    append_message(open_project(), 'default', 'alice', f'past-{k}')\n")
    last = rooms("watch", "--last", "2", "--json", "--timeout", "0.5")
    assert last.exit_code == 0, last.stderr
    assert [json.loads(x)["text"] for x in last.stdout.splitlines()] == ["past-3", "past-4"]
    since = rooms("watch", "--since", "2026-11-21T09:02:00Z", "--json", "--timeout", "0.5")
    assert [json.loads(x)["text"] for x in since.stdout.splitlines()] == ["past-2", "past-3", "past-4"]
    plain = rooms("watch", "--timeout", "0.5")
    assert plain.exit_code == 0 and plain.stdout == ""  # without them only new events are printed
    both = rooms("watch", "--last", "2", "--since", "2026-11-21T09:00:00Z", "--timeout", "0.5")
    assert both.exit_code == 2 and "cannot be combined" in both.stderr
    bad = rooms("watch", "--since", "yesterday-ish", "--timeout", "0.5")
    assert bad.exit_code == 2 and "--since: invalid time 'yesterday-ish'" in bad.stderr and "ISO 8601" in bad.stderr
    bad = rooms("watch", "--timeout", "soon")
    assert bad.exit_code == 2 and "--timeout: invalid duration 'soon'" in bad.stderr


@pytest.mark.slow
def test_an_idle_watcher_uses_almost_no_cpu(project_dir, mode, watchers):
    w = watchers("--all", env=mode)
    sync(w)
    time.sleep(0.5)
    before, started = w.cpu_seconds(), time.monotonic()
    time.sleep(3.0)
    used, elapsed = w.cpu_seconds() - before, time.monotonic() - started
    assert w.stop() == 0
    assert used / elapsed < 0.05, f"idle watcher used {used:.2f}s of CPU in {elapsed:.1f}s"


def test_ctrl_c_exits_zero_and_timeout_ends_the_watch(project_dir, mode, watchers, rooms):
    w = watchers(env=mode)
    sync(w)
    assert w.stop(signal.SIGINT) == 0
    assert w.stderr == ""
    started = time.monotonic()
    ended = rooms("watch", "--timeout", "1.5", env=mode)
    assert ended.exit_code == 0 and 1.4 < time.monotonic() - started < 30


def test_records_of_unknown_shape_and_bad_lines_never_stop_the_watch(project_dir, watchers):
    path = transcript(project_dir)
    w = watchers("--all", env=MODES["poll"])
    sync(w)
    with open(path, "ab") as handle:
        handle.write(b'{"kind": "telepathy", "speaker": "ghost"}\n')  # unknown kind, no id, no ts
        handle.write(b"not json at all\n")
        handle.write(b"[1, 2, 3]\n")
    groups = project_dir / ".rooms" / "groups" / "odd.jsonl"
    groups.write_bytes(b'{"weird": {"nested": [1, 2]}, "n": 7}\n')
    run_python(say("default", "alice", "still watching"))
    w.wait_text("still watching")
    w.wait_for(lambda evs: any(e.get("group") == "odd" for e in evs), what="the odd group record")
    assert w.stop() == 0
    by_type = {e["type"]: e for e in w.snapshot()}
    assert by_type["chat.telepathy"]["speaker"] == "ghost" and by_type["chat.telepathy"]["ts"].endswith("Z")
    assert by_type["group.record"]["record"] == {"weird": {"nested": [1, 2]}, "n": 7}
    assert "line 3 is not valid JSON" in w.stderr and "line 4 is not a JSON object" in w.stderr


def test_human_output_shows_every_kind_without_crashing(project_dir, rooms):
    for kind, text in [("message", "hello"), ("pass", ""), ("flavor", "*taps the table*"), ("join", "joined"),
                       ("budget_exhausted", "out of turns")]:
        run_python(say("default", "alice", text, kind=kind), env={"ROOMS_NOW": "2026-11-21T09:00:00Z"})
    # a kind only a newer version writes (this version's writer refuses it; its readers show it)
    run_python("from rooms_cli.store import open_project, jsonl\n"
               "from rooms_cli.chat.transcript import transcript_path\n"
               "jsonl.append(transcript_path(open_project(), 'default'), {'id': 'm-new', 'ts': '2026-11-21T09:00:00Z',"
               " 'room': 'default', 'speaker': 'alice', 'kind': 'telepathy', 'text': '???'})\n")
    run_python("from rooms_cli.store import open_project, jsonl\n"
               "jsonl.append(open_project().path('groups', 'g.jsonl'), {'anything': 1})\n"
               "from rooms_cli.store import atomic\n"
               "atomic.write_json(open_project().path('spawns', 's-1.json'), {'id': 's-1', 'status': 'done', 'alias': 'agentb'})\n")
    shown = rooms("watch", "--all", "--last", "20", "--timeout", "0.5")
    assert shown.exit_code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "09:00:00 #default alice: hello" in lines
    assert "09:00:00 #default * alice passes *" in lines
    assert "09:00:00 #default * alice *taps the table* *" in lines
    assert "09:00:00 #default ⏸ out of turns" in lines
    assert any("chat.telepathy" in x for x in lines)
    assert "\x1b[" not in shown.stdout  # plain when piped


def test_a_torn_line_left_by_a_killed_writer_is_never_printed(project_dir, watchers):
    w = watchers(env=MODES["notify"])
    sync(w)
    with open(transcript(project_dir), "ab") as handle:  # a writer killed mid-line
        handle.write(b'{"id": "m-01TORN", "ts": "2026-11-21T10:00:00.000Z", "speaker": "crash", "text": "cut he')
    time.sleep(0.5)
    run_python(say("default", "alice", "after the crash"))  # the next append cuts the torn fragment off
    w.wait_text("after the crash")
    time.sleep(0.5)
    assert w.stop() == 0
    assert [e["text"] for e in w.snapshot()] == ["sync", "after the crash"]
    assert "not valid JSON" not in w.stderr
