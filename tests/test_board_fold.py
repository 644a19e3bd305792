"""A task log replayed again from where the process stopped (board/fold.py): always the task a whole
replay gives, read whole whenever folding on cannot be proven the same."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rooms_cli.board import claims, fold, store, tasks
from rooms_cli.board.replay import replay_log
from rooms_cli.core.errors import RoomsError
from rooms_cli.store import jsonl, order

ROOM = "default"


@pytest.fixture
def counted(monkeypatch):
    """The kinds of replay made: 'whole' (the log read from its start) or the number of events folded on.
    The process's clock starts afresh: a stamp far in the future that an earlier test made it see would
    stamp this test's appends after the hand-written 2099 lines the tests plant."""
    from rooms_cli.store import clock

    monkeypatch.setattr(clock, "_hlc_last", (0, -1))
    made: list = []
    whole, more = fold.replay_log, fold.fold
    monkeypatch.setattr(fold, "replay_log", lambda *a, **k: made.append("whole") or whole(*a, **k))
    monkeypatch.setattr(fold, "fold", lambda task, events, w: made.append(len(events)) or more(task, events, w))
    fold._FOLDED.clear()
    return made


def state(task):
    return (task.to_json(), {k: v.to_json() for k, v in task.leases.items()}, task.events, task.expiry_recorded)


def whole(path, task_id):
    return replay_log(task_id, ROOM, order.ordered(jsonl.scan(path).records))


def check(path, task_id):
    """fold's answer, which must be what replaying the log whole answers."""
    task, bad = fold.replay_file(task_id, ROOM, str(path))
    assert state(task) == state(whole(path, task_id))
    return task, bad


def test_folding_on_gives_what_a_whole_replay_gives_through_a_working_life(project, counted):
    task_id = tasks.add_task(project, ROOM, "busy", lane="w", done="it is done", by="alice").id
    path = Path(store.task_path(project, ROOM, task_id))
    del counted[:]  # adding read the board's index
    check(path, task_id)
    for round_ in range(3):
        claim = claims.claim_task(project, ROOM, task_id, agent="w")
        check(path, task_id)
        for _ in range(3):
            claims.renew_lease(project, ROOM, task_id, claim.lease.lease_id, lease="20m")
            check(path, task_id)
        if round_ < 2:
            claims.release_task(project, ROOM, task_id, claim.lease.lease_id)
        else:
            claims.finish_task(project, ROOM, task_id, claim.lease.lease_id, summary="ok")
        task, _ = check(path, task_id)
    assert task.status == "done" and task.fence == 3 and len(task.leases) == 3
    assert counted.count("whole") == 1  # the first read; every later one folded on only the new events
    assert all(n == 1 for n in counted if n != "whole")


def _line(record):
    return json.dumps(record, sort_keys=True) + "\n"


def _older(path, task_id):
    """A renew stamped just after the create: it sorts before the last event folded."""
    first = jsonl.scan(path).records[0]
    with open(path, "a") as handle:
        handle.write(_line({"ev": "renew", "at": first["at"], "by": "w", "hlc": first["hlc"] + "0",
                            "lease_id": "l-x", "fence": 1, "expires_at": "2099-01-01T00:00:00.000Z"}))


def _unstamped(path, task_id):
    with open(path, "a") as handle:
        handle.write(_line({"ev": "update", "at": "2099-01-01T00:00:00.000Z", "by": "hand", "changes": {"title": "by hand"}}))


def _withdrawn(path, task_id):
    task = whole(path, task_id)
    lease = task.lease
    jsonl.append(path, {"ev": "withdraw", "at": lease.claimed_at, "by": "w", "lease_id": lease.lease_id,
                        "fence": lease.fence, "reason": "lost the race"})


def _rewritten_in_place(path, task_id):
    """The same inode and length, one earlier byte changed (an editor writing in place)."""
    data = Path(path).read_bytes()
    at = data.index(b'"title": "busy"') + len(b'"title": "')
    with open(path, "r+b") as handle:
        handle.seek(at)
        handle.write(b"B")
    jsonl.append(path, {"ev": "update", "at": "2099-01-01T00:00:00.000Z", "by": "w", "changes": {"detail": "more"}})


def _replaced_with_a_line_in_the_middle(path, task_id):
    """What a merge leaves: a new file, another clone's line between two of ours."""
    lines = Path(path).read_bytes().splitlines(keepends=True)
    first = json.loads(lines[0])
    middle = _line({"ev": "update", "at": first["at"], "by": "b", "hlc": first["hlc"] + "5", "changes": {"detail": "theirs"}})
    tmp = Path(path).with_name("replacement")
    tmp.write_bytes(lines[0] + middle.encode() + b"".join(lines[1:]))
    os.replace(tmp, path)


def _bad_line(path, task_id):
    with open(path, "a") as handle:
        handle.write("{not json\n")


@pytest.mark.parametrize("tamper", [_older, _unstamped, _withdrawn, _rewritten_in_place,
                                    _replaced_with_a_line_in_the_middle, _bad_line])
def test_what_folding_on_cannot_prove_the_same_is_read_whole(project, counted, tamper):
    task_id = tasks.add_task(project, ROOM, "busy", lane="w", done="it is done", by="alice").id
    path = Path(store.task_path(project, ROOM, task_id))
    claims.claim_task(project, ROOM, task_id, agent="w")
    check(path, task_id)
    del counted[:]
    tamper(path, task_id)
    task, bad = check(path, task_id)
    assert counted == ["whole"]
    if tamper is _bad_line:
        assert bad and fold._FOLDED.get(str(path)) is None  # a damaged log is read whole again next time (and warned)
    if tamper is _withdrawn:
        assert task.withdrawn and task.status == "todo"
    if tamper is _rewritten_in_place:
        assert task.title == "Busy"
    jsonl.append(path, {"ev": "update", "at": "2099-01-01T00:00:01.000Z", "by": "w", "changes": {"detail": "after"}})
    del counted[:]
    check(path, task_id)
    # back to folding on once the log reads clean; the hand-written line's time (2099) sorts after what
    # rooms appends now, so a whole replay puts the new line before it: read whole again
    assert counted == (["whole"] if tamper in (_bad_line, _unstamped) else [1])


def test_a_conflict_marker_appended_raises_as_a_whole_read_does(project, counted):
    task_id = tasks.add_task(project, ROOM, "busy", lane="w", done="it is done", by="alice").id
    path = Path(store.task_path(project, ROOM, task_id))
    check(path, task_id)
    with open(path, "a") as handle:
        handle.write("<<<<<<< HEAD\n=======\n>>>>>>> theirs\n")
    with pytest.raises(RoomsError, match="conflict"):
        fold.replay_file(task_id, ROOM, str(path))


def test_a_task_handed_out_is_the_callers_own(project, counted):
    task_id = tasks.add_task(project, ROOM, "busy", lane="w", done="it is done", by="alice").id
    path = Path(store.task_path(project, ROOM, task_id))
    claim = claims.claim_task(project, ROOM, task_id, agent="w")
    first, _ = fold.replay_file(task_id, ROOM, str(path))
    before = state(first)
    first.status, first.title = "done", "changed"
    first.leases.clear()
    first.conflicts.append("x")
    again, _ = fold.replay_file(task_id, ROOM, str(path))
    assert state(again) == before
    claims.renew_lease(project, ROOM, task_id, claim.lease.lease_id, lease="1h")  # a renew makes a new lease
    renewed, _ = fold.replay_file(task_id, ROOM, str(path))
    assert renewed.lease.expires_at > before[0]["lease"]["expires_at"]
    assert renewed.leases[claim.lease.lease_id] is renewed.lease and state(again) == before
