"""One check per record kind (store/schema.py): the reader, the writer and `rooms doctor` call the same
`schema.problem`, so doctor never disagrees with a reader and no writer writes what its reader refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooms_cli.core.errors import InvalidData
from rooms_cli.store import schema

TS = "2026-01-01T00:00:00.000Z"


@pytest.mark.parametrize("kind,record", [
    ("group-event", {"ev": "teleported", "ts": TS, "eid": "e-1"}),
    ("room-event", {"op": "explode", "eid": "e-1", "ts": TS}),
    ("room-event", {"op": "set", "field": "mood", "value": "calm", "eid": "e-1", "ts": TS}),
    ("room-event", {"op": "add", "field": "fans", "value": "x", "eid": "e-1", "ts": TS}),
    ("roundtable-queue", {"op": "teleport", "id": "q-1", "ts": TS}),
], ids=str)
def test_what_a_newer_version_wrote_passes_a_reader_and_doctor_names_it(kind, record):
    assert schema.problem(kind, record, strict=False) is None
    assert schema.problem(kind, record) is not None


@pytest.mark.parametrize("kind,record,words", [
    ("group-event", {"ev": "member_added", "handle": "a"}, "missing profile"),
    ("group-event", {"ev": "member_added", "handle": "", "profile": "p"}, "field 'handle' must be non-empty text"),
    ("group-event", {"ev": "gathered", "id": "b-1", "result": []}, "field 'result'"),
    ("task-event", {"ev": "claim", "lease_id": "l-1", "expires_at": TS}, "missing fence"),
    ("task-event", {"ev": "claim", "lease_id": "l-1", "fence": True, "expires_at": TS}, "field 'fence' must be a whole number"),
    ("task-event", {"ev": "assign", "to": "x", "pending": {"from": "a"}}, "field 'pending' lacks from, to or owner"),
    ("task-event", {"ev": "create", "task": "t-1", "lane": "../x"}, "field 'lane' must be a name"),
    ("task-event", {"at": TS}, "field 'ev' must be text"),
    ("room-event", {"op": "spend", "value": "2"}, "field 'value' must be a whole number"),
    ("room-event", {"op": "set", "field": "budget_remaining", "value": -5}, "field 'budget_remaining' (value)"),
    ("room-event", {"op": "created", "state": {"id": "r", "roster": 7}}, "field 'roster' must be a list of names"),
    ("spawn", {"id": "s-1", "parent": "a", "alias": "", "prompt": "x"}, "are required"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_a_reader_refuses_what_doctor_names_in_the_same_words(kind, record, words):
    found = schema.problem(kind, record, strict=False)
    assert found is not None and words in found
    assert schema.problem(kind, record) == found


def test_doctor_reads_a_log_with_the_readers_check(tmp_path):
    log = tmp_path / "g.jsonl"
    lines = [{"ev": "created", "ts": TS, "eid": "e-1"}, "not a record", {"ev": "member_added", "ts": TS, "eid": "e-2", "handle": 2}]
    log.write_text("".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines))
    assert schema.file_problems("group-event", log) == [(3, "field 'handle' must be non-empty text (it is 2)")]
    assert [line for line, _ in schema.records(log)] == [1, 3]


def test_each_writer_refuses_a_record_its_reader_would_refuse(project):
    from rooms_cli.board import store
    from rooms_cli.groups import log
    from rooms_cli.messaging.spawn import Spawn, save_spawn

    with pytest.raises(InvalidData, match="field 'fence'"):
        store.append_events(project, "default", "t-01aaaaaaaaaaaaaaaaaaaaaaaa",
                            [{"ev": "claim", "lease_id": "l-1", "fence": "1", "expires_at": TS}], held=False)
    with pytest.raises(InvalidData, match="missing profile"):
        log.append(project, "g", log.event("member_added", handle="a"), lock=True)
    with pytest.raises(InvalidData, match="are required"):
        save_spawn(project, Spawn(id="s-1", parent="a", alias="", prompt="x"))
    assert not (Path(project.dir) / "groups" / "g.jsonl").exists()
    assert not list((Path(project.dir) / "rooms" / "default" / "board").glob("tasks/*.jsonl"))
