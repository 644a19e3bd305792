"""The readers of transcripts, sessions, inboxes and their read marks, spawn records and memories check each
record with the check `rooms doctor` makes (`schema.problem(kind, record, strict=False)`, store/schema.py).

A wrongly typed record (a hand edit, a bad merge: `"text": 5`, `"n": "x"`, `"lesson": null`) is read like a
line that does not parse: skipped with one warning naming the log, the record's id and the field in
doctor's words; the good records are shown, the command exits 0 (a spawn list skips the file as it skips
any record that is not a spawn's), and `rooms doctor` reports the same record in the same words. The
property at the end plants random wrong values in each kind of record and asserts that the reader and
doctor agree on every one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rooms_cli.store import layout, schema
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id

TS = "2026-01-01T00:00:00.000Z"


def _append_line(path, record: dict) -> dict:
    """One hand-written line at the end of a log, as an editor or a bad merge leaves it."""
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    return record


def _transcript(project) -> tuple:
    from rooms_cli.chat.rooms import create_room
    from rooms_cli.chat.transcript import append_message, transcript_path

    create_room(project, "r", ["reviewer"])
    append_message(project, "r", "alice", "one")
    path = Path(transcript_path(project, "r"))
    bad = _append_line(path, {"id": "m-bad", "ts": TS, "room": "r", "speaker": "bob", "kind": "message", "text": 5})
    append_message(project, "r", "alice", "three")
    shown = lambda run: [m["text"] for m in run.json()]  # noqa: E731
    return path, bad, "m-bad", [(("transcript", "--room", "r", "--json"), shown, ["one", "three"]),
                           (("transcript", "--room", "r", "--last", "2", "--json"), shown, ["one", "three"])]


def _session(project) -> tuple:
    from rooms_cli.chat import sessions
    from rooms_cli.chat.rooms import create_room

    create_room(project, "r", ["reviewer"])
    usage = {"input_tokens": 10, "output_tokens": 5}
    sessions.record_turn(project, "r", "reviewer", answered="m-1", reply="a", usage=usage)
    path = Path(sessions.session_path(project, "r", "reviewer"))
    bad = _append_line(path, {"eid": "e-bad", "ts": TS, "kind": "turn", "answered": "m-2", "reply": "b", "input_tokens": "x"})
    sessions.record_turn(project, "r", "reviewer", answered="m-3", reply="c", usage=usage)
    turns = lambda run: next(m["session"] for m in run.json()["roster"] if m["id"] == "reviewer")  # noqa: E731
    return path, bad, "e-bad", [(("room", "show", "r", "--json"), turns,
                            {"agent": "reviewer", "turns": 2, "input_tokens": 20, "output_tokens": 10, "tokens": 30, "suggested": False})]


def _inbox(project) -> tuple:
    from rooms_cli.messaging import unread
    from rooms_cli.messaging.inbox import deliver, inbox_path

    deliver(project, "reviewer", "alice", "one")
    unread.known(project, "reviewer")  # the cursor `rooms inbox` keeps: the bad line arrives after it
    path = Path(inbox_path(project, "reviewer"))
    bad = _append_line(path, {"n": "x", "id": "i-bad", "ts": TS, "from": "bob", "to": "reviewer", "kind": "direct", "text": "two"})
    deliver(project, "reviewer", "alice", "three")
    shown = lambda run: [m["text"] for m in run.json()["messages"]]  # noqa: E731
    return path, bad, "i-bad", [(("inbox", "--peek", "--json", "--as", "reviewer"), shown, ["one", "three"]),
                                (("inbox", "--peek", "--json", "--as", "reviewer"), shown, ["one", "three"]),
                           (("inbox", "--peek", "--all", "--json", "--as", "reviewer"), shown, ["one", "three"]),
                           (("inbox", "--unread", "--json", "--as", "reviewer"), shown, ["one", "three"])]


def _read_mark(project) -> tuple:
    from rooms_cli.messaging import unread
    from rooms_cli.messaging.inbox import deliver, mark_read, read_state_path

    first = deliver(project, "reviewer", "alice", "one")
    second = deliver(project, "reviewer", "alice", "two")
    mark_read(project, "reviewer", [first])
    unread.known(project, "reviewer")  # the cursor `rooms inbox` keeps: the bad mark arrives after it (it crashed there)
    path = Path(read_state_path(project, "reviewer"))
    bad = _append_line(path, {"id": "r-bad", "ts": TS, "read": second.id})  # a text, not a list: marks nothing
    unread = lambda run: [m["text"] for m in run.json()["messages"] if not m["read"]]  # noqa: E731
    peek = ("inbox", "--peek", "--json", "--as", "reviewer")
    return path, bad, "r-bad", [(peek, unread, ["two"]), (peek, unread, ["two"])]  # the second through the cursor


def _memory(project) -> tuple:
    from rooms_cli.agents.memories import add_lessons, memories_path

    add_lessons(project, "reviewer", ["one"], "rt-1")
    path = Path(memories_path(project, "reviewer"))
    bad = _append_line(path, {"id": "l-bad", "ts": TS, "agent": "reviewer", "lesson": None, "source": "rt-1"})
    add_lessons(project, "reviewer", ["three"], "rt-1")
    shown = lambda run: [r["lesson"] for r in run.json()]  # noqa: E731
    return path, bad, "l-bad", [(("memory", "list", "reviewer", "--json"), shown, ["one", "three"])]


def _spawn(project) -> tuple:
    from rooms_cli.messaging.spawn import Spawn, record_path, save_spawn

    good = Spawn(id=new_id("s").lower(), parent="reviewer", alias="kid", prompt="x", status="done", created=now_iso(), finished=now_iso())
    save_spawn(project, good)
    bad = {**good.to_json(), "id": new_id("s").lower(), "alias": "bad", "exit_code": "x"}
    path = Path(record_path(project, bad["id"]))
    path.write_text(json.dumps(bad))
    spawns = lambda run: sorted(a["name"] for a in run.json() if a["kind"] == "spawn")  # noqa: E731
    return path, bad, None, [(("agents", "--json"), spawns, ["kid"])]


# kind -> how to plant one wrong record among good ones, by the writers: (the file, the wrong record, its id as
# the warning names it, and the commands that read it: (arguments, what they show, the good records))
PLANTS = {"transcript": _transcript, "session": _session, "inbox": _inbox, "inbox-read": _read_mark,
          "memory": _memory, "spawn": _spawn}


@pytest.mark.parametrize("kind", sorted(PLANTS), ids=str)
def test_a_wrongly_typed_record_is_skipped_with_one_sentence_and_doctor_names_it(project, rooms, kind):
    path, bad, ident, commands = PLANTS[kind](project)
    rel = project.relative(path)
    sentence = schema.problem(kind, bad, strict=False)
    assert sentence is not None and sentence == schema.problem(kind, bad)  # the reader's words are doctor's
    for args, shown, expected in commands:
        run = rooms(*args)
        assert run.exit_code == 0, (args, run)
        assert shown(run) == expected, (args, run.stdout)
        warnings = [line for line in run.stderr.splitlines() if line.strip()]
        assert len(warnings) == 1 and warnings[0].startswith("warning: "), (args, run.stderr)
        assert rel in warnings[0] and sentence in warnings[0] and "Traceback" not in run.stderr, (args, warnings)
        if ident is not None:
            assert f"({'eid' if kind == 'session' else 'id'} {ident})" in warnings[0]
    report = rooms("doctor", "--offline", "--json")
    assert report.exit_code == 1, report
    named = [f for f in report.json()["findings"] if rel in f["message"] and sentence in f["message"]]
    assert len(named) == 1 and named[0]["severity"] == "error", report.json()["findings"]
    if ident is not None:
        assert f"({'eid' if kind == 'session' else 'id'} {ident})" in named[0]["message"]


# --- the property: random wrong values, the reader and doctor agree ------------------------------

json_scalars = st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False, allow_infinity=False) \
    | st.text(max_size=8)
json_values = st.recursive(json_scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=4), kids, max_size=3),
                           max_leaves=6)


def _goods(kind: str) -> list[dict]:
    """Two records of `kind` as rooms writes them (ids and stamps in order)."""
    one = {"transcript": {"room": "r", "speaker": "alice", "kind": "message", "text": "hi", "model": None, "usage": {}, "meta": {}},
           "session": {"kind": "turn", "answered": "m-1", "reply": "a", "input_tokens": 3, "output_tokens": 4},
           "inbox": {"n": 1, "from": "alice", "to": "reviewer", "kind": "direct", "text": "hi", "tag": None, "reply_to": None, "meta": {}},
           "inbox-read": {"read": ["i-1"]},
           "memory": {"agent": "reviewer", "lesson": "hi", "source": "rt-1"},
           "spawn": {"parent": "reviewer", "alias": "kid", "prompt": "x", "status": "done", "depth": 1, "exit_code": 0}}[kind]
    if kind == "spawn":  # one record a file, named by its id
        return [{"id": f"s-good{i}", "created": f"2026-01-01T00:00:0{i}.000Z", **one} for i in (1, 2)]
    key = "eid" if kind == "session" else "id"
    return [{key: f"x-good{i}", "ts": f"2026-01-01T00:00:0{i}.000Z", "hlc": f"0000{i}", **one, **({"n": i} if kind == "inbox" else {})}
            for i in (1, 2)]


def _shown(project, kind: str) -> list[str]:
    """The ids of the records the kind's reader uses (what its commands show or count)."""
    from rooms_cli.agents.memories import list_lessons
    from rooms_cli.chat.sessions import read_session
    from rooms_cli.chat.transcript import read_transcript, tail
    from rooms_cli.messaging import unread
    from rooms_cli.messaging.inbox import read_inbox, read_marks
    from rooms_cli.messaging.spawn import list_spawns

    if kind == "transcript":
        full = [m.id for m in read_transcript(project, "r")]
        Path(layout.transcript_order_file(project, "r")).unlink(missing_ok=True)  # the file was rewritten in place, not appended
        assert [m.id for m in tail(project, "r", 3)] == full[-3:]  # the tail reads the same records
        return full
    if kind == "session":
        return [r["eid"] for r in read_session(project, "r", "reviewer")]
    if kind == "inbox":
        full = [m.id for m in read_inbox(project, "reviewer")]
        Path(layout.inbox_cursor_file(project, "reviewer")).unlink(missing_ok=True)
        assert [m.id for m in unread.unread(project, "reviewer")] == full  # the cursor reads the same records
        return full
    if kind == "inbox-read":
        return sorted(read_marks(project, "reviewer").ids)
    if kind == "spawn":
        return [s.id for s in list_spawns(project)]
    return [r["id"] for r in list_lessons(project, "reviewer")]


def _doctor(project) -> list:
    """The findings of doctor's checks of these logs (chat's, messaging's, the roundtable's)."""
    from rooms_cli.chat.doctor import _schema_findings
    from rooms_cli.messaging.doctor import _typed_findings as messaging_findings
    from rooms_cli.roundtable.doctor import _typed_findings as roundtable_findings

    return [f for f in _schema_findings(project) + messaging_findings(project) + roundtable_findings(project) if f.severity == "error"]


LOGS = {"transcript": lambda p: layout.transcript_file(p, "r"), "session": lambda p: layout.session_file(p, "r", "reviewer"),
        "inbox": lambda p: layout.inbox_file(p, "reviewer"), "inbox-read": lambda p: layout.inbox_read_file(p, "reviewer"),
        "memory": lambda p: layout.memories_file(p, "reviewer"), "spawn": lambda p: layout.spawn_file(p, "x-wrong")}


@pytest.mark.parametrize("kind", sorted(LOGS), ids=str)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_reader_and_doctor_agree_on_any_wrong_value(project, capsys, kind, data):
    from rooms_cli.chat.rooms import create_room, room_exists

    if not room_exists(project, "r"):
        create_room(project, "r", ["reviewer"])
    goods = _goods(kind)
    key = "eid" if kind == "session" else "id"
    # not the id (a spawn's is its file name), nor the time stamps the one order reads
    field = data.draw(st.sampled_from(sorted(k for k in schema.SCHEMAS[kind] if k not in ("id", "eid", "ts", "created"))), label="field")
    wrong = {**goods[0], key: "x-wrong", "hlc": "00001b", field: data.draw(json_values, label="value")}
    if kind == "session" and wrong.get("kind") == "cleared":
        wrong["kind"] = "turn"  # a `cleared` record ends the session before it: not what this compares
    if kind == "memory" and field == "forget":
        del wrong["lesson"]  # a forget record
    path = Path(LOGS[kind](project))
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "spawn":
        for record in (*goods, wrong):
            Path(layout.spawn_file(project, record["id"])).write_text(json.dumps(record))

    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in (goods[0], wrong, goods[1])))
    schema._skipped.clear()  # a real process warns once per record; so does each example here
    layout._skipped.clear()
    capsys.readouterr()

    shown = _shown(project, kind)
    warned = capsys.readouterr().err
    rel = project.relative(path)
    doctor = [f.message for f in _doctor(project) if rel in f.message]
    lenient, strict = schema.problem(kind, wrong, strict=False), schema.problem(kind, wrong)
    good_ids = [r[key] for r in goods] if kind != "inbox-read" else ["i-1"]
    # what doctor says of the record, and what its reader says when it skips it (a spawn list skips it as
    # it skips any file that is not a spawn record)
    named, line = (rel, "") if kind == "spawn" else (f"{rel} line 2 ({key} x-wrong)", f"{rel} ({key} x-wrong)")
    said = (f"warning: skipping {rel}: not a spawn record ({rel}: {lenient}) (rooms doctor lists it)" if kind == "spawn" else
            f"warning: {line}: {lenient}; skipped, the other lines are kept (rooms doctor names its line)")
    event("skipped" if lenient else "kept" if strict is None else "kept, doctor names it")
    if lenient is None:  # the reader uses it; doctor names it only when it is a kind of message this version lacks
        assert not warned, warned
        assert strict is None or (field == "kind" and isinstance(wrong["kind"], str)), strict
        assert doctor == ([] if strict is None else [f"{named}: {strict}"])
        if kind != "inbox-read" and not (kind == "memory" and "forget" in wrong):
            assert "x-wrong" in shown
    else:  # the reader skips it, saying what doctor says of line 2; every good record is kept
        assert lenient == strict
        assert [text for text in warned.splitlines() if text] == [said]
        assert doctor == [f"{named}: {strict}"]
        assert [i for i in shown if i != "x-wrong"] == good_ids and "x-wrong" not in shown


@pytest.mark.parametrize("kind", ["transcript", "inbox", "memory"])
def test_a_writer_refuses_what_its_reader_would_skip(project, kind):
    """Validation on write (`schema.checked`): a record this version would append and then skip on
    read is refused before the file is touched, so a writer's bug cannot put a line doctor reports."""
    from rooms_cli.core.errors import InvalidData

    if kind == "transcript":
        from rooms_cli.chat.rooms import create_room
        from rooms_cli.chat.transcript import append_message, transcript_path

        create_room(project, "r", ["reviewer"])
        append_message(project, "r", "alice", "first")
        path = Path(transcript_path(project, "r"))
        before = path.read_bytes()
        with pytest.raises(InvalidData, match="kind"):
            append_message(project, "r", "alice", "hello", kind="no-such-kind")
    elif kind == "inbox":
        from rooms_cli.messaging.inbox import deliver, inbox_path

        deliver(project, "bob", "alice", "first")
        path = Path(inbox_path(project, "bob"))
        before = path.read_bytes()
        with pytest.raises(InvalidData, match="kind"):
            deliver(project, "bob", "alice", "second", kind="no-such-kind")
    else:
        from rooms_cli.agents.memories import add_lessons, memories_path

        add_lessons(project, "bob", ["keep the lock short"], "standup")
        path = Path(memories_path(project, "bob"))
        before = path.read_bytes()
        with pytest.raises(InvalidData, match="source"):
            add_lessons(project, "bob", ["a lesson"], 5)  # type: ignore[arg-type]
    assert path.read_bytes() == before
