"""Wrong-typed state: a field of the wrong type in a room's state, a status file or a task's create
event (a hand edit, a bad merge) is one sentence naming the file and the field, exit 1, from the
command that reads it — never an internal error, never shown as if valid (`budget -5/8`) — and
`rooms doctor` reports each kind of damage. Commands that do not read the damaged file are unaffected.
"""

from __future__ import annotations

import json

import pytest

ROOM_BREAKS = {
    "queued holds a number": {"queued": [1]},
    "budget is text": {"budget_remaining": "abc"},
    "budget is negative": {"budget_total": 8, "budget_remaining": -5},
    "roster is a mapping": {"roster": {"a": 1}},
    "status is unknown": {"status": "asleep"},
}
ROOM_FIELDS = {"queued holds a number": "queued", "budget is text": "budget_remaining",
               "budget is negative": "budget_remaining", "roster is a mapping": "roster", "status is unknown": "status"}


def planted_room(project_dir, room: str, extra: dict) -> str:
    """A room whose `created` event holds `extra` (a field of the wrong type): its state log's path."""
    folder = project_dir / ".rooms" / "rooms" / room
    folder.mkdir(parents=True, exist_ok=True)
    created = {"op": "created", "ts": "2026-01-01T00:00:00.000Z", "eid": "e-1", "state": {"id": room, "roster": ["coder"], **extra}}
    (folder / "state.jsonl").write_text(json.dumps(created) + "\n")
    return f".rooms/rooms/{room}/state.jsonl"


def one_sentence(run, *names: str) -> None:
    assert run.exit_code == 1, run
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr
    for name in names:
        assert name in run.stderr, (name, run.stderr)


@pytest.mark.parametrize("how", sorted(ROOM_BREAKS), ids=str)
def test_a_wrong_typed_room_state_is_one_sentence_naming_file_and_field(cli, project_dir, how):
    rel = planted_room(project_dir, "bad", ROOM_BREAKS[how])
    field = ROOM_FIELDS[how]
    one_sentence(cli("room", "show", "bad"), rel, repr(field))
    one_sentence(cli("room", "continue", "--room", "bad"), rel, repr(field))
    one_sentence(cli("chat", "hello", "--room", "bad"), rel, repr(field))
    assert cli("room", "create", "good").exit_code == 0  # other rooms are unaffected
    assert cli("room", "show", "good").exit_code == 0
    report = cli("doctor", "--json")
    assert report.exit_code == 1
    found = [f for f in report.json()["findings"] if f["check"] == "room"]
    assert any(rel in f["message"] and repr(field) in f["message"] for f in found), found


def test_a_negative_budget_is_never_shown_as_a_budget(cli, project_dir):
    planted_room(project_dir, "neg", ROOM_BREAKS["budget is negative"])
    run = cli("room", "show", "neg")
    assert "-5/8" not in run.stdout
    one_sentence(run, "budget_remaining", "whole number from 0")


@pytest.mark.parametrize("event", [
    {"op": "set", "field": "budget_remaining", "value": "abc"},
    {"op": "spend", "field": "budget_remaining", "value": [1]},
    {"op": "add", "field": "queued", "value": 1},
    {"op": "add", "field": "roster", "value": {"x": 1}},
    {"op": "set", "field": "status", "value": 5},
], ids=lambda e: f"{e['op']}-{e['field']}")
def test_a_wrong_typed_state_log_event_is_one_sentence_naming_the_log(cli, project_dir, event):
    assert cli("room", "create", "ev").exit_code == 0
    log = project_dir / ".rooms/rooms/ev/state.jsonl"
    with log.open("a") as fh:
        fh.write(json.dumps({**event, "ts": "2099-01-01T00:00:00.000Z", "eid": "e-PLANTED"}) + "\n")
    one_sentence(cli("room", "show", "ev"), ".rooms/rooms/ev/state.jsonl", "e-PLANTED")
    findings = cli("doctor", "--json").json()["findings"]
    assert any(f["check"] == "room" and "e-PLANTED" in f["message"] for f in findings), findings


@pytest.mark.parametrize("name,content,field", [
    ("coder.jsonl", '{"id": "st-1", "ts": "2026-01-01T00:00:00Z", "status": 5}\n', "'status'"),
    ("coder.jsonl", '{"id": "st-1", "ts": "2026-01-01T00:00:00Z", "announced": 7}\n', "'announced'"),
], ids=["log status number", "log announced number"])
def test_a_wrong_typed_status_file_is_named_and_found_by_doctor(cli, project_dir, name, content, field):
    folder = project_dir / ".rooms" / "status"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(content)
    agents = cli("agents")  # one agent's broken file is named; every other agent is still listed
    assert agents.exit_code == 0 and "internal error" not in agents.stderr and "analyst" in agents.stdout
    assert f".rooms/status/{name}" in agents.stderr and field in agents.stderr, agents
    attention = cli("attention", "--peek")
    assert attention.exit_code == 0 and "internal error" not in attention.stderr and "coder" in attention.stdout
    findings = cli("doctor", "--json").json()["findings"]
    assert any(f["check"] == "status" and f".rooms/status/{name}" in f["message"] and field in f["message"]
               for f in findings), findings


def _task_log(project_dir, room: str = "default"):
    return next((project_dir / ".rooms/rooms" / room / "board/tasks").glob("t-*.jsonl"))


def test_a_create_event_whose_lane_escapes_is_not_shown_and_doctor_finds_it(cli, project_dir):
    assert cli("task", "add", "evil", "--lane", "coder", "--done", "x").exit_code == 0
    path = _task_log(project_dir)
    path.write_text(path.read_text().replace('"lane": "coder"', '"lane": "../../x"'))
    board = cli("board", "--json")
    assert board.exit_code == 0 and "../../x" not in board.stdout
    findings = cli("doctor", "--json").json()["findings"]
    assert any(f["check"] == "board" and "'lane'" in f["message"] and "../../x" in f["message"] and f["severity"] == "error"
               for f in findings), findings


def test_one_task_id_created_in_two_logs_is_a_doctor_finding(cli, project_dir):
    assert cli("task", "add", "twice", "--lane", "coder", "--done", "x").exit_code == 0
    assert cli("room", "create", "other").exit_code == 0
    path = _task_log(project_dir)
    copy = project_dir / ".rooms/rooms/other/board/tasks" / path.name
    copy.parent.mkdir(parents=True)
    copy.write_bytes(path.read_bytes())
    findings = cli("doctor", "--json").json()["findings"]
    assert any(f["check"] == "board" and "created in two logs" in f["message"] for f in findings), findings


def test_a_create_event_naming_another_task_is_a_doctor_finding(cli, project_dir):
    assert cli("task", "add", "renamed", "--lane", "coder", "--done", "x").exit_code == 0
    path = _task_log(project_dir)
    path.rename(path.with_name("t-01aaaaaaaaaaaaaaaaaaaaaaaa.jsonl"))
    findings = cli("doctor", "--json").json()["findings"]
    assert any(f["check"] == "board" and "names task" in f["message"] for f in findings), findings


def test_a_healthy_project_has_no_schema_findings(cli, project_dir):
    assert cli("task", "add", "fine", "--lane", "coder", "--done", "x").exit_code == 0
    assert cli("status", "set", "here", "--as", "coder").exit_code == 0
    findings = cli("doctor", "--json").json()["findings"]
    assert not [f for f in findings if f["check"] in ("room", "status") or "create event" in f["message"]], findings


# one wrong-typed record of each other kind of state: (file under .rooms/, its content, check, field)
PLANTED = {
    "group event": ("groups/team.jsonl",
                    '{"ev": "created", "ts": "2026-01-01T00:00:00Z", "eid": "e-1", "name": "team"}\n'
                    '{"ev": "member_added", "ts": "2026-01-01T00:00:01Z", "eid": "e-2", "handle": 2, "profile": "a"}\n',
                    "group", "line 2", "'handle'"),
    "inbox line": ("inbox/coder.jsonl",
                   '{"n": "one", "id": "i-1", "ts": "2026-01-01T00:00:00Z", "from": "a", "to": "coder", "kind": "direct", "text": "hi"}\n',
                   "inbox", "line 1", "'n'"),
    "read mark": ("inbox/read/coder.jsonl", '{"id": "r-1", "ts": "2026-01-01T00:00:00Z", "read": "i-1"}\n',
                  "inbox", "line 1", "'read'"),
    "spawn record": ("spawns/s-1.json",
                     '{"id": "s-1", "parent": "coder", "alias": "kid", "prompt": "x", "status": "done", "depth": "deep"}',
                     "spawn", "spawns/s-1.json", "'depth'"),
    "memory": ("memories/coder.jsonl", '{"id": "l-1", "ts": "2026-01-01T00:00:00Z", "agent": "coder", "lesson": ["x"]}\n',
               "memories", "line 1", "'lesson'"),
    "fired occurrence": ("schedule/fired.jsonl", '{"id": "sf-1", "ts": "2026-01-01T00:00:00Z", "slot": 7, "key": "k"}\n',
                         "schedule", "line 1", "'slot'"),
    "queue event": ("roundtables/queue.jsonl",
                    '{"op": "enqueue", "id": "q-1", "ts": "2026-01-01T00:00:00Z", "request": "debate", "by": "cli"}\n',
                    "roundtable", "line 1", "'request'"),
}


@pytest.mark.parametrize("kind", sorted(PLANTED), ids=str)
def test_doctor_names_file_line_and_field_of_a_wrong_typed_record(cli, project_dir, kind):
    rel, content, check, line, field = PLANTED[kind]
    path = project_dir / ".rooms" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    report = cli("doctor", "--json")
    assert report.exit_code == 1, report
    found = [f for f in report.json()["findings"] if f["check"] == check and f".rooms/{rel}" in f["message"]]
    assert any(line in f["message"] and field in f["message"] for f in found), report.json()["findings"]


def test_a_healthy_project_has_no_wrong_typed_records(cli, project_dir):
    assert cli("send", "--to", "coder", "hello", "--as", "alice").exit_code == 0
    assert cli("inbox", "--as", "coder").exit_code == 0
    assert cli("group", "spawn", "team", "--profile", "analyst").exit_code == 0
    assert cli("roundtable", "queue", "debate", "--topic", "x").exit_code == 0
    findings = cli("doctor", "--json").json()["findings"]
    typed = ("inbox", "spawn", "group", "memories", "schedule", "roundtable")
    assert not [f for f in findings if f["check"] in typed and "must be" in f["message"]], findings
    for rel in ("inbox/coder.jsonl", "inbox/read/coder.jsonl", "groups/team.jsonl", "roundtables/queue.jsonl"):
        assert (project_dir / ".rooms" / rel).exists(), rel
